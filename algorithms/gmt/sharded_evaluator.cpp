#include "algorithms/gmt/sharded_evaluator.hpp"

#include <cstring>
#include <type_traits>

#include "algorithms/core/error.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gmt/cpu_evaluator.hpp"

namespace gpudm::gmt {

namespace {

static_assert(std::is_trivially_copyable_v<TreeNode>, "evaluated trees travel as bytes");

// A tree as 32-bit words: three sizes, then the node array, the attribute pool and the
// coefficient pool as raw bytes (padded to whole words).
template <class T>
void put(std::vector<std::uint32_t>& w, const std::vector<T>& v) {
  const std::size_t bytes = v.size() * sizeof(T), at = w.size();
  w.resize(at + (bytes + 3) / 4, 0u);
  if (bytes) std::memcpy(w.data() + at, v.data(), bytes);
}

template <class T>
std::vector<T> take(const std::vector<std::uint32_t>& w, std::size_t& at, std::size_t n) {
  const std::size_t bytes = n * sizeof(T), words = (bytes + 3) / 4;
  GPUDM_REQUIRE(at + words <= w.size(), "gmt: a gathered tree runs past its block (internal error)");
  std::vector<T> v(n);
  if (bytes) std::memcpy(static_cast<void*>(v.data()), w.data() + at, bytes);  // (trivially copyable: asserted above)
  at += words;
  return v;
}

}  // namespace

ShardedEvaluator::ShardedEvaluator(std::unique_ptr<ModelTreeEvaluator> inner, Comm& comm) : inner_(std::move(inner)), comm_(comm) {
  GPUDM_REQUIRE(inner_ != nullptr, "gmt: a sharded evaluator needs a backend");
}

void ShardedEvaluator::configure(const EvalOptions& options) {
  ModelTreeEvaluator::configure(options);
  inner_->configure(options);
}

void ShardedEvaluator::prepare(const Dataset& data) {
  cols_ = static_cast<int>(data.cols());
  inner_->prepare(data);
}

void ShardedEvaluator::evaluate(const EvalBatch& batch, PhaseTimer& timer) {
  const EvalCounters before = inner_->counters();
  if (comm_.size() == 1) {
    inner_->evaluate(batch, timer);
  } else {
    ++calls_;
    const auto [b, e] = shard(batch.size(), comm_.rank(), comm_.size());
    if (e > b) {
      EvalBatch mine;
      mine.repair = batch.repair;
      mine.clean_sse_known = batch.clean_sse_known;
      mine.trees.assign(batch.trees.begin() + static_cast<std::ptrdiff_t>(b), batch.trees.begin() + static_cast<std::ptrdiff_t>(e));
      mine.salts.assign(batch.salts.begin() + static_cast<std::ptrdiff_t>(b), batch.salts.begin() + static_cast<std::ptrdiff_t>(e));
      inner_->evaluate(mine, timer);
    }
    auto s = timer.scope("combine");
    const Stopwatch sw;
    std::vector<std::uint32_t> words;
    for (std::size_t i = b; i < e; ++i) {
      const Tree& t = *batch.trees[i];
      words.push_back(static_cast<std::uint32_t>(t.nodes().size()));
      words.push_back(static_cast<std::uint32_t>(t.attr_pool().size()));
      words.push_back(static_cast<std::uint32_t>(t.coef_pool().size()));
      put(words, t.nodes());
      put(words, t.attr_pool());
      put(words, t.coef_pool());
    }
    const std::vector<std::uint32_t> all = comm_.gather_all(words, "gmt: gathering the ranks' evaluated trees");
    bytes_combined_ += all.size() * sizeof(std::uint32_t);
    std::size_t at = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {  // every rank's block, in tree order
      GPUDM_REQUIRE(at + 3 <= all.size(), "gmt: the ranks' evaluated trees do not add up (internal error)");
      const std::size_t nn = all[at], na = all[at + 1], nc = all[at + 2];
      at += 3;
      std::vector<TreeNode> nodes = take<TreeNode>(all, at, nn);
      std::vector<std::int32_t> attrs = take<std::int32_t>(all, at, na);
      std::vector<double> coefs = take<double>(all, at, nc);
      if (i >= b && i < e) continue;  // this rank's own: already in place
      *batch.trees[i] = Tree::from_parts(std::move(nodes), std::move(attrs), std::move(coefs), cols_, "gmt: a gathered tree");
    }
    GPUDM_REQUIRE(at == all.size(), "gmt: the ranks' evaluated trees do not add up (internal error)");
    combine_seconds_ += sw.seconds();
  }
  // This call's counters, summed over the ranks.
  const EvalCounters& after = inner_->counters();
  std::vector<std::uint64_t> d{static_cast<std::uint64_t>(after.trees - before.trees),
                               static_cast<std::uint64_t>(after.repaired_trees - before.repaired_trees),
                               static_cast<std::uint64_t>(after.repairs - before.repairs),
                               static_cast<std::uint64_t>(after.second_passes - before.second_passes)};
  comm_.sum(d.data(), d.size(), "gmt: summing the ranks' counters");
  ++counters_.calls;
  counters_.trees += static_cast<std::int64_t>(d[0]);
  counters_.repaired_trees += static_cast<std::int64_t>(d[1]);
  counters_.repairs += static_cast<std::int64_t>(d[2]);
  counters_.second_passes += static_cast<std::int64_t>(d[3]);
}

nlohmann::ordered_json ShardedEvaluator::describe() const {
  nlohmann::ordered_json j = inner_->describe();
  j["ranks"] = comm_.size();
  j["combine_calls"] = calls_;
  j["combine_bytes"] = bytes_combined_;
  j["combine_seconds"] = combine_seconds_;
  return j;
}

std::unique_ptr<ModelTreeEvaluator> across_ranks(std::unique_ptr<ModelTreeEvaluator> eval, EvalOptions::RankSplit split,
                                                 long long chunks) {
  if (world().size() == 1) return eval;
  using S = EvalOptions::RankSplit;
  if (split == S::kAuto && chunks > 0 && chunks < world().size()) split = S::kIndividuals;  // (ranks without rows)
  // auto: rows on the CPU backends (measured ahead there: docs/perf-notes-mpi.md), individuals on
  // the GPU (its rows split is asked for by name: rank_split 'rows')
  if (split == S::kRows || (split == S::kAuto && dynamic_cast<CpuGmtEvaluator*>(eval.get()) != nullptr)) {
    if (eval->split_rows(world())) return eval;
    GPUDM_REQUIRE(split == S::kAuto, "gmt: backend '" + eval->name() + "' cannot split rows (rank_split 'individuals' or 'auto')");
  }
  return std::make_unique<ShardedEvaluator>(std::move(eval), world());
}

}  // namespace gpudm::gmt
