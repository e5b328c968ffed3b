// Sequential Pittsburgh evaluator, the family's reference backend: the rule engine's sequential
// backend (the engine's oracle) for coverage and rule fitness, the decision list over its
// coverage bits one task after another (algorithms/pittsburgh/engine_evaluator.hpp).
#include "algorithms/pittsburgh/engine_evaluator.hpp"
#include "backends/pittsburgh.hpp"
#include "backends/rules.hpp"

namespace gpudm::backend::sequential {

namespace {
class SequentialRuleSetEvaluator final : public pittsburgh::EngineRuleSetEvaluator {
 public:
  SequentialRuleSetEvaluator()
      : EngineRuleSetEvaluator(make_rule_evaluator(), std::make_unique<InlineTasks>()) {}
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }
};
}  // namespace

std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator() {
  return std::make_unique<SequentialRuleSetEvaluator>();
}

}  // namespace gpudm::backend::sequential
