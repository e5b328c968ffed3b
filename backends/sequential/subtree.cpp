// Sequential TreeInterpreter: every (tree, row batch) task in order, one core. The oracle of
// the equivalence tests is reference_coverage (one instance at a time through the shared
// opcode header); this backend runs the batched encodings of algorithms/subtree/cpu_kernels.
#include <algorithm>

#include "algorithms/core/error.hpp"
#include "backends/subtree.hpp"
#include "algorithms/subtree/cpu_kernels.hpp"

namespace gpudm::backend::sequential {

namespace {

class SequentialTreeInterpreter final : public subtree::TreeInterpreter {
 public:
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }
  nlohmann::ordered_json describe() const override {
    return {{"interpreter", subtree::to_string(subtree::resolve_strategy(options_.strategy, Placement::host))}, {"threads", 1}};
  }
  void prepare(const Dataset& data) override {
    data_ = &data;
    has_nan_ = subtree::features_have_nan(data);
  }

  void evaluate(const subtree::Population& pop, subtree::Coverage& out, PhaseTimer& t) override {
    GPUDM_REQUIRE(data_ != nullptr, "subtree/sequential: evaluate() before prepare()");
    subtree::CpuPlan plan;
    {
      auto s = t.scope("encode");
      plan = subtree::make_cpu_plan(pop, options_.strategy, has_nan_);
    }
    auto s = t.scope("interpret");
    out.reset(pop.trees, data_->rows());
    const std::size_t rows = data_->rows();
    // Batch-major: a batch's feature slices stay in L1 while every tree runs on them.
    for (std::size_t b = 0; b < rows; b += subtree::kCpuBatchRows)
      for (int tree = 0; tree < pop.trees; ++tree)
        subtree::cpu_evaluate_batch(plan, *data_, tree, b, std::min(rows, b + subtree::kCpuBatchRows), out.tree(tree));
  }

 private:
  const Dataset* data_ = nullptr;
  bool has_nan_ = true;
};

}  // namespace

std::unique_ptr<subtree::TreeInterpreter> make_subtree_interpreter() {
  return std::make_unique<SequentialTreeInterpreter>();
}

}  // namespace gpudm::backend::sequential
