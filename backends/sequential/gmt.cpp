// Sequential GMT evaluator: the oracle. Runs the six procedures' work items in order on one
// thread (EvalWork holds the shared per-item code; see algorithms/gmt/eval_steps.hpp).
#include "backends/sequential/gmt.hpp"

#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gmt/eval_steps.hpp"

namespace gpudm {
namespace backend {
namespace sequential {
namespace {

class GmtEvaluator final : public gmt::ModelTreeEvaluator {
 public:
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }
  void prepare(const Dataset& train) override {
    GPUDM_REQUIRE(train.task() == Task::regression, "gmt: dataset '" + train.name() + "' is not a regression dataset");
    data_ = &train;
  }
  void evaluate(const std::vector<const gmt::FlatTree*>& trees, std::vector<gmt::EvalOutput>& out,
                PhaseTimer& timer) override {
    GPUDM_REQUIRE(data_ != nullptr, "gmt: evaluate() called before prepare()");
    out.resize(trees.size());
    for (std::size_t k = 0; k < trees.size(); ++k) gmt::evaluate_in_order(work_, *data_, *trees[k], options_, out[k], timer);
  }

 private:
  const Dataset* data_ = nullptr;
  gmt::EvalWork work_;
};

}  // namespace

std::unique_ptr<gmt::ModelTreeEvaluator> make_gmt_evaluator() { return std::make_unique<GmtEvaluator>(); }

}  // namespace sequential
}  // namespace backend
}  // namespace gpudm
