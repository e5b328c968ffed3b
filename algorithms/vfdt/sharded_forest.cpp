#include "algorithms/vfdt/sharded_forest.hpp"

#include "algorithms/core/error.hpp"
#include "algorithms/vfdt/vfdt_math.hpp"

namespace gpudm::vfdt {

ShardedForest::ShardedForest(std::unique_ptr<ForestBackend> inner, Comm& comm) : inner_(std::move(inner)), comm_(comm) {
  GPUDM_REQUIRE(inner_ != nullptr, "vfdt: a sharded forest needs a backend");
}

void ShardedForest::configure(const ForestParams& p) {
  ForestBackend::configure(p);
  ForestParams mine = p;
  const int total = p.total_trees();
  if (comm_.size() > 1) {
    GPUDM_REQUIRE(total >= comm_.size(), "vfdt: " + std::to_string(comm_.size()) + " ranks for a forest of " + std::to_string(total) +
                                             " trees (tree-parallel: at least one tree per rank)");
    const auto [b, e] = shard(static_cast<std::size_t>(total), comm_.rank(), comm_.size());
    mine.first_tree = p.first_tree + static_cast<int>(b);
    mine.trees = static_cast<int>(e - b);
    mine.forest_trees = total;
  }
  first_ = mine.first_tree;
  inner_->configure(mine);
}

void ShardedForest::prepare(const EncodedStream& stream) {
  inner_->prepare(stream);
  classes_ = stream.classes;
}

void ShardedForest::process(std::size_t begin, std::size_t end, std::int32_t* predictions, PhaseTimer& timer) {
  if (comm_.size() == 1) {
    inner_->process(begin, end, predictions, timer);
    return;
  }
  votes_.assign((end - begin) * static_cast<std::size_t>(classes_), 0u);
  process_votes(begin, end, votes_.data(), timer);
  auto s = timer.scope("vote");
  for (std::size_t i = 0; i < end - begin; ++i)
    predictions[i] = majority(votes_.data() + i * static_cast<std::size_t>(classes_), classes_);
}

void ShardedForest::process_votes(std::size_t begin, std::size_t end, std::uint32_t* votes, PhaseTimer& timer) {
  inner_->process_votes(begin, end, votes, timer);
  if (comm_.size() == 1) return;
  ++calls_;
  const std::size_t n = (end - begin) * static_cast<std::size_t>(classes_);
  auto s = timer.scope("combine");
  comm_.sum(votes, n, "forest: summing the ranks' votes");
  bytes_combined_ += n * sizeof(std::uint32_t) * static_cast<std::uint64_t>(comm_.size());
}

nlohmann::ordered_json ShardedForest::describe() const {
  nlohmann::ordered_json j = inner_->describe();
  j["ranks"] = comm_.size();
  j["rank_first_tree"] = first_;
  j["combine_calls"] = calls_;
  j["combine_bytes"] = bytes_combined_;
  return j;
}

}  // namespace gpudm::vfdt
