#pragma once
// The rule engine over the ranks of an MPI run: each rank holds a contiguous block of
// the dataset's rows (boundaries multiples of 32 rows, so coverage words of the blocks
// concatenate) and evaluates every rule on it with its own backend (sequential, OpenMP or CUDA);
// the per-class counts and GPops are summed over the ranks (integers: exact), the coverage words
// gathered in rank order. The result equals one process's on the whole dataset, bit for bit, at
// any rank count. With one rank it is the inner backend itself.
#include <memory>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/rank_rows.hpp"
#include "algorithms/rules/evaluator.hpp"

namespace gpudm::rules {

class ShardedEvaluator final : public RuleEvaluator {
 public:
  ShardedEvaluator(std::unique_ptr<RuleEvaluator> inner, Comm& comm);
  std::string name() const override { return inner_->name(); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  nlohmann::ordered_json describe() const override;
  void configure(const EngineOptions& options) override;
  void prepare(const Dataset& data) override;
  void evaluate(const RulePopulation& pop, RuleCounts& out, PhaseTimer& timer, Want want = Want::counts) override;
  // This rank's rows [begin, end) of the prepared dataset.
  std::size_t row_begin() const { return rows_.begin; }
  std::size_t row_end() const { return rows_.end; }
  // Local coverage: Want::counts_and_coverage leaves in `out.coverage` this rank's own words only
  // (rows [row_begin(), row_end()), words_per_rule of them) instead of gathering every rank's — for
  // a caller that finishes its row-wise work on its own rows and sums the results (Pittsburgh's
  // decision list). The counts are summed as ever.
  void set_local_coverage(bool on) { local_coverage_ = on; }

 private:
  std::unique_ptr<RuleEvaluator> inner_;
  Comm& comm_;
  RankRows rows_;
  const Dataset* data_ = nullptr;
  std::vector<std::uint64_t> class_rows_;  // of the whole dataset (prepare)
  RuleCounts part_;
  std::vector<std::uint64_t> wide_;
  bool local_coverage_ = false;
  long long calls_ = 0;
  std::uint64_t bytes_combined_ = 0;
  double combine_seconds_ = 0.0;  // in the combine step (waiting for the slowest rank included)
};

// `engine` itself with one rank, else split over world()'s ranks.
std::unique_ptr<RuleEvaluator> across_ranks(std::unique_ptr<RuleEvaluator> engine);

}  // namespace gpudm::rules
