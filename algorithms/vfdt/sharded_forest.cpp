#include "algorithms/vfdt/sharded_forest.hpp"

#include <cstring>

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
  // (host work: "majority", not the backend's "vote" phase, which the CUDA backend times on the device)
  auto s = timer.scope("majority");
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
  bytes_combined_ += integer_sum_bytes(n * sizeof(std::uint32_t), comm_.size());
}

ForestSnapshot ShardedForest::snapshot() {
  ForestSnapshot s = inner_->snapshot();
  if (comm_.size() == 1) return s;
  // Per-tree arrays, concatenated in rank order = tree order (32-bit values through the gather).
  const auto cat = [&](auto& v, const char* what) {
    std::vector<std::uint32_t> u(v.size());
    if (!v.empty()) std::memcpy(u.data(), v.data(), v.size() * sizeof(std::uint32_t));
    const std::vector<std::uint32_t> all = comm_.gather_all(u, what);
    v.resize(all.size());
    if (!all.empty()) std::memcpy(v.data(), all.data(), all.size() * sizeof(std::uint32_t));
  };
  static_assert(sizeof(std::int32_t) == sizeof(std::uint32_t));
  cat(s.n_nodes, "forest snapshot: nodes per tree");
  cat(s.generation, "forest snapshot: generations");
  cat(s.node_attr, "forest snapshot: node attributes");
  cat(s.node_child, "forest snapshot: node children");
  cat(s.slot_class, "forest snapshot: leaf class counts");
  cat(s.node_depth, "forest snapshot: node depths");
  std::vector<std::uint64_t> counts{static_cast<std::uint64_t>(s.splits), static_cast<std::uint64_t>(s.resets)};
  comm_.sum(counts.data(), counts.size(), "forest snapshot: splits and resets");
  s.splits = static_cast<long long>(counts[0]);
  s.resets = static_cast<long long>(counts[1]);
  s.layout.trees = options().total_trees();
  return s;
}

std::unique_ptr<ForestBackend> across_ranks(std::unique_ptr<ForestBackend> forest) {
  if (world().size() == 1) return forest;
  return std::make_unique<ShardedForest>(std::move(forest), world());
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
