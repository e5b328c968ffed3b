// OpenMP TreeInterpreter: the (tree x row batch) tasks of the sequential backend spread over
// threads (Operon-style: parallel over individuals and row batches at once, so small
// populations on large data and large populations on small data both fill the cores). Tasks
// write disjoint coverage words, so results are identical to the sequential backend.
#include <omp.h>

#include <algorithm>

#include "algorithms/core/error.hpp"
#include "backends/subtree.hpp"
#include "algorithms/subtree/cpu_kernels.hpp"

namespace gpudm::backend::openmp {

namespace {

class OpenmpTreeInterpreter final : public subtree::TreeInterpreter {
 public:
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count (tasks write disjoint coverage words)";
    return c;
  }
  nlohmann::ordered_json describe() const override {
    return {{"interpreter", subtree::to_string(subtree::resolve_strategy(options_.strategy, Placement::host))},
            {"threads", threads()}};
  }
  void configure(const subtree::InterpreterOptions& o) override {
    GPUDM_REQUIRE(o.threads >= 0, "subtree/openmp: params.threads must be >= 0 (0 = OpenMP default)");
    options_ = o;
  }
  void prepare(const Dataset& data) override {
    data_ = &data;
    has_nan_ = subtree::features_have_nan(data);
  }

  void evaluate(const subtree::Population& pop, subtree::Coverage& out, PhaseTimer& t) override {
    GPUDM_REQUIRE(data_ != nullptr, "subtree/openmp: evaluate() before prepare()");
    subtree::CpuPlan plan;
    {
      auto s = t.scope("encode");
      plan = subtree::make_cpu_plan(pop, options_.strategy, has_nan_);
    }
    auto s = t.scope("interpret");
    out.reset(pop.trees, data_->rows());
    const std::size_t rows = data_->rows();
    const long long batches = static_cast<long long>((rows + subtree::kCpuBatchRows - 1) / subtree::kCpuBatchRows);
    const long long tasks = batches * pop.trees;
    const Dataset& data = *data_;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads())
    for (long long task = 0; task < tasks; ++task) {
      // Batch-major task order: consecutive tasks of a thread share the batch's feature slices.
      const int tree = static_cast<int>(task % pop.trees);
      const std::size_t b = static_cast<std::size_t>(task / pop.trees) * subtree::kCpuBatchRows;
      subtree::cpu_evaluate_batch(plan, data, tree, b, std::min(rows, b + subtree::kCpuBatchRows), out.tree(tree));
    }
  }

 private:
  int threads() const { return options_.threads > 0 ? options_.threads : omp_get_max_threads(); }
  const Dataset* data_ = nullptr;
  bool has_nan_ = true;
};

}  // namespace

std::unique_ptr<subtree::TreeInterpreter> make_subtree_interpreter() {
  return std::make_unique<OpenmpTreeInterpreter>();
}

}  // namespace gpudm::backend::openmp
