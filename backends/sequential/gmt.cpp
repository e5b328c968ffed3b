// Sequential GMT evaluator: the oracle. Runs the six procedures' work items in order on one
// thread (CpuGmtEvaluator on inline tasks; EvalWork holds the shared per-item code, see
// algorithms/gmt/eval_steps.hpp).
#include "backends/gmt.hpp"

#include "algorithms/gmt/cpu_evaluator.hpp"

namespace gpudm::backend::sequential {
namespace {

class GmtEvaluator final : public gmt::CpuGmtEvaluator {
 public:
  GmtEvaluator() : CpuGmtEvaluator(std::make_unique<InlineTasks>()) {}
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }
};

}  // namespace

std::unique_ptr<gmt::ModelTreeEvaluator> make_gmt_evaluator() { return std::make_unique<GmtEvaluator>(); }

}  // namespace gpudm::backend::sequential
