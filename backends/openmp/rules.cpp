// OpenMP rule engine: the (chunk, rule) tasks of the sequential backend over OpenMP threads,
// dynamic chunks of 4, each thread counting into its own array (summed afterwards: integer sums,
// so the counts equal the sequential ones for any thread count); CpuRuleEvaluator on OmpTasks.
#include "algorithms/core/error.hpp"
#include "algorithms/rules/cpu_engine.hpp"
#include "backends/openmp/omp_tasks.hpp"
#include "backends/rules.hpp"

namespace gpudm::backend::openmp {

namespace {

class OpenmpRuleEvaluator final : public rules::cpu::CpuRuleEvaluator {
 public:
  OpenmpRuleEvaluator() : CpuRuleEvaluator(std::make_unique<OmpTasks>()) {}
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count (integer counts, summed per thread)";
    return c;
  }
  void configure(const rules::EngineOptions& o) override {
    GPUDM_REQUIRE(o.threads >= 0, "rules/openmp: threads must be >= 0 (0 = the OpenMP default)");
    options_ = o;
    tasks().set_threads(o.threads);
  }
};

}  // namespace

std::unique_ptr<rules::RuleEvaluator> make_rule_evaluator() { return std::make_unique<OpenmpRuleEvaluator>(); }

}  // namespace gpudm::backend::openmp
