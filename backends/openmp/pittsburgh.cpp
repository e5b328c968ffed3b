// OpenMP Pittsburgh evaluator: the rule engine's OpenMP backend for coverage and rule fitness
// ((row chunk, rule) tasks, per-thread integer counts), the decision list over its coverage bits
// as (individual, 8,192-row chunk) tasks with per-task correct counts summed in a fixed order
// (algorithms/pittsburgh/engine_evaluator.hpp): results do not depend on the thread count.
#include "algorithms/pittsburgh/engine_evaluator.hpp"
#include "backends/openmp/omp_tasks.hpp"
#include "backends/pittsburgh.hpp"
#include "backends/rules.hpp"

namespace gpudm::backend::openmp {

namespace {
class OpenMPRuleSetEvaluator final : public pittsburgh::EngineRuleSetEvaluator {
 public:
  OpenMPRuleSetEvaluator()
      : EngineRuleSetEvaluator(make_rule_evaluator(), std::make_unique<OmpTasks>()) {}
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count (integer counts, summed per thread and per task)";
    return c;
  }
  void configure(const pittsburgh::EvaluatorOptions& o) override {
    GPUDM_REQUIRE(o.threads >= 0, "pittsburgh/openmp: threads must be >= 0 (0 = all)");
    options_ = o;
    tasks().set_threads(o.threads);
    rules::EngineOptions e;
    e.threads = o.threads;
    engine().configure(e);
  }
};
}  // namespace

std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator() {
  return std::make_unique<OpenMPRuleSetEvaluator>();
}

}  // namespace gpudm::backend::openmp
