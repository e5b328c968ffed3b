// Sequential GMT evaluator: the oracle. Runs the six procedures' work items in order on one
// thread (EvalWork holds the shared per-item code; see algorithms/gmt/eval_steps.hpp).
#include "backends/gmt.hpp"

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
    GPUDM_REQUIRE(train.rows() < 0xFFFFFFFFull, "gmt: datasets of 2^32 - 1 rows or more are not supported");
    data_ = &train;
  }
  void evaluate(const gmt::EvalBatch& batch, PhaseTimer& timer) override {
    GPUDM_REQUIRE(data_ != nullptr, "gmt: evaluate() called before prepare()");
    GPUDM_REQUIRE(batch.salts.size() == batch.trees.size(), "gmt: one salt per tree");
    ++counters_.calls;
    for (std::size_t k = 0; k < batch.size(); ++k) {
      count_tree(gmt::evaluate_tree(work_, *data_, *batch.trees[k], batch.salts[k], options_, batch.repair, timer,
                                    gmt::for_each_in_order()));
    }
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
