// Sequential rule engine, the oracle of the engine's equivalence tests: every (chunk, rule)
// task of algorithms/rules/cpu_engine in order on one core (CpuRuleEvaluator on inline tasks),
// chunk-major so a chunk's column slices stay in cache while the whole population runs on them.
#include "algorithms/rules/cpu_engine.hpp"
#include "backends/rules.hpp"

namespace gpudm::backend::sequential {

namespace {

class SequentialRuleEvaluator final : public rules::cpu::CpuRuleEvaluator {
 public:
  SequentialRuleEvaluator() : CpuRuleEvaluator(std::make_unique<InlineTasks>()) {}
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }
};

}  // namespace

std::unique_ptr<rules::RuleEvaluator> make_rule_evaluator() { return std::make_unique<SequentialRuleEvaluator>(); }

}  // namespace gpudm::backend::sequential
