#pragma once
// A streaming forest split over the ranks of an MPI run, tree-parallel: every rank sees
// the whole stream and learns its contiguous block of the trees (each tree keyed by its index in
// the whole forest: the same bagging weights, leaf keys and features as in one process); per
// process() call the ranks' per-instance class votes are summed (integers, exact) and every rank
// takes the same majority. Predictions are identical to one process's at any rank count; each
// rank's trees are those trees of the one-process forest, and snapshot() gathers them. With one
// rank it is the inner backend.
#include <memory>

#include "algorithms/core/comm.hpp"
#include "algorithms/vfdt/forest.hpp"

namespace gpudm::vfdt {

class ShardedForest final : public ForestBackend {
 public:
  ShardedForest(std::unique_ptr<ForestBackend> inner, Comm& comm);
  std::string name() const override { return inner_->name(); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  nlohmann::ordered_json describe() const override;
  void configure(const ForestParams& p) override;
  void prepare(const EncodedStream& stream) override;
  void reset() override { inner_->reset(); }
  void process(std::size_t begin, std::size_t end, std::int32_t* predictions, PhaseTimer& timer) override;
  void process_votes(std::size_t begin, std::size_t end, std::uint32_t* votes, PhaseTimer& timer) override;
  // The whole forest's trees (every rank's, gathered in tree order: one process's snapshot).
  ForestSnapshot snapshot() override;
  // Every rank continues its trees on the same chunk.
  void continue_with(const EncodedStream& chunk, std::uint64_t first_instance) override {
    inner_->continue_with(chunk, first_instance);
  }
  int first_tree() const { return first_; }  // this rank's first tree in the forest

 private:
  std::unique_ptr<ForestBackend> inner_;
  Comm& comm_;
  int first_ = 0, classes_ = 0;
  std::vector<std::uint32_t> votes_;
  long long calls_ = 0;
  std::uint64_t bytes_combined_ = 0;
};

// `forest` itself with one rank, else split over world()'s ranks.
std::unique_ptr<ForestBackend> across_ranks(std::unique_ptr<ForestBackend> forest);

}  // namespace gpudm::vfdt
