#pragma once
// The CPU TreeInterpreter of the sequential and OpenMP backends: the population encoded once
// (algorithms/subtree/cpu_kernels), then the (tree x row batch) tasks on a TaskRunner (inline
// for sequential; OpenMP threads for openmp: Operon-style, parallel over individuals and row
// batches at once, so small populations on large data and large populations on small data both
// fill the cores). Tasks write disjoint coverage words, so results do not depend on the runner.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "algorithms/core/error.hpp"
#include "algorithms/core/task_runner.hpp"
#include "algorithms/subtree/cpu_kernels.hpp"
#include "algorithms/subtree/interpreter.hpp"

namespace gpudm::subtree {

class CpuTreeInterpreter : public TreeInterpreter {
 public:
  nlohmann::ordered_json describe() const override {
    return {{"interpreter", to_string(resolve_strategy(options_.strategy, Placement::host))}, {"threads", tasks_->threads()}};
  }
  void prepare(const Dataset& data) override {
    data_ = &data;
    has_nan_ = features_have_nan(data);
  }

  void evaluate(const Population& pop, Coverage& out, PhaseTimer& t) override {
    GPUDM_REQUIRE(data_ != nullptr, "subtree/" + name() + ": evaluate() before prepare()");
    CpuPlan plan;
    {
      auto s = t.scope("encode");
      plan = make_cpu_plan(pop, options_.strategy, has_nan_);
    }
    auto s = t.scope("interpret");
    out.reset(pop.trees, data_->rows());
    const std::size_t rows = data_->rows();
    const std::size_t batches = (rows + kCpuBatchRows - 1) / kCpuBatchRows;
    const Dataset& data = *data_;
    // Batch-major task order: a batch's feature slices stay in L1 (in cache of the thread) while
    // the trees run on them.
    tasks_->run(
        batches * static_cast<std::size_t>(pop.trees),
        [&](std::size_t task) {
          const int tree = static_cast<int>(task % static_cast<std::size_t>(pop.trees));
          const std::size_t b = task / static_cast<std::size_t>(pop.trees) * kCpuBatchRows;
          cpu_evaluate_batch(plan, data, tree, b, std::min(rows, b + kCpuBatchRows), out.tree(tree));
        },
        {TaskSchedule::Kind::dynamic, 8});
  }

 protected:
  explicit CpuTreeInterpreter(std::unique_ptr<TaskRunner> tasks) : tasks_(std::move(tasks)) {}
  TaskRunner& tasks() { return *tasks_; }

 private:
  std::unique_ptr<TaskRunner> tasks_;
  const Dataset* data_ = nullptr;
  bool has_nan_ = true;
};

}  // namespace gpudm::subtree
