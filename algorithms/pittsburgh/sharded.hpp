#pragma once
// A Pittsburgh backend over the ranks of an MPI run, rows split: each rank prepares its
// backend with its contiguous block of the dataset's rows (shard(), 32-row aligned like the rule
// engine's split) and evaluates the whole population on it; every rule's confusion matrix, every
// individual's correct count and the GPops are sums over disjoint rows, so the ranks add them
// (integers: exact) and every rank finishes the same result as one process on the whole dataset.
// For backends that do not split the rows themselves (the CUDA backend: its fused kernel and
// multi-GPU split run on the rank's rows); the CPU backends shard their rule engine instead
// (engine_evaluator.hpp).
#include <memory>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/rank_rows.hpp"
#include "algorithms/pittsburgh/evaluator.hpp"

namespace gpudm::pittsburgh {

class RowShardedEvaluator final : public RuleSetEvaluator {
 public:
  RowShardedEvaluator(std::unique_ptr<RuleSetEvaluator> inner, Comm& comm);
  std::string name() const override { return inner_->name(); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  nlohmann::ordered_json describe() const override;
  void configure(const EvaluatorOptions& options) override;
  void prepare(const Dataset& data) override;
  void evaluate(const Population& pop, EvaluationResult& res, PhaseTimer& timer) override;
  bool splits_rows_over_ranks() const override { return true; }
  std::size_t row_begin() const { return rows_.begin; }
  std::size_t row_end() const { return rows_.end; }

 private:
  std::unique_ptr<RuleSetEvaluator> inner_;
  Comm& comm_;
  RankRows rows_;
  const Dataset* data_ = nullptr;
  long long calls_ = 0;
  std::uint64_t bytes_combined_ = 0;
  double combine_seconds_ = 0.0;
};

// `ev` itself with one rank or when it splits the rows itself, else a RowShardedEvaluator over
// world()'s ranks.
std::unique_ptr<RuleSetEvaluator> across_ranks(std::unique_ptr<RuleSetEvaluator> ev);

}  // namespace gpudm::pittsburgh
