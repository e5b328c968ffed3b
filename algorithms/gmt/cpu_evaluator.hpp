#pragma once
// The ModelTreeEvaluator of the sequential and OpenMP backends, on a TaskRunner
// (algorithms/core/task_runner.hpp): the six procedures' work items of each tree (row chunks with
// per-chunk partial sums merged in chunk order, TSQR blocks, leaves) as tasks, so the results
// equal the sequential backend's bit for bit whatever the runner; or, omp_mode "individuals" (or
// "auto" on data with fewer row chunks than threads), the batch's individuals as tasks, each
// evaluated in order with its worker's own EvalWork.
#include <memory>
#include <vector>

#include "algorithms/core/task_runner.hpp"
#include "algorithms/gmt/eval_steps.hpp"
#include "algorithms/gmt/evaluator.hpp"

namespace gpudm::gmt {

class CpuGmtEvaluator : public ModelTreeEvaluator {
 public:
  void prepare(const Dataset& train) override;
  void evaluate(const EvalBatch& batch, PhaseTimer& timer) override;
  nlohmann::ordered_json describe() const override;
  // Rows split over `comm`'s ranks (EvalWork::set_ranks; every rank evaluates every tree on its
  // chunks). Every rank must make the same calls.
  bool split_rows(Comm& comm) override;

 protected:
  explicit CpuGmtEvaluator(std::unique_ptr<TaskRunner> tasks) : tasks_(std::move(tasks)) {}
  TaskRunner& tasks() { return *tasks_; }

 private:
  std::unique_ptr<TaskRunner> tasks_;
  Comm* comm_ = nullptr;
  std::vector<EvalWork> group_;  // rows split: a work per tree of a group (evaluate_trees)
  CombineAccount account_;
  const Dataset* data_ = nullptr;
  EvalWork work_;
  std::vector<EvalWork> works_;  // individual-parallel mode: one per worker
};

}  // namespace gpudm::gmt
