// Registers the rule engine's backends (algorithms/rules/evaluator.hpp): sequential (the
// oracle), openmp, cuda (paths "faithful" and "fast"). They are registered under the engine's
// own family "rules" (its equivalence tests; families that build on the engine create it from
// there) and, as the same factories, under "gp_rules", whose backends are the engine itself:
// a gp_rules run on backend B is the evolutionary algorithm on the host with every population
// evaluated by engine B, and the runner validates gp_rules runs against the engine's oracle.
#include "backends/register.hpp"
#include "backends/rules.hpp"

namespace gpudm {

namespace {
void register_engine_as(Registry& r, const std::string& family) {
  using rules::RuleEvaluator;
  r.add<RuleEvaluator>(family, "sequential", [] { return backend::sequential::make_rule_evaluator(); }, Registry::Role::reference);
  GPUDM_ADD_OPENMP(r, RuleEvaluator, family, backend::openmp::make_rule_evaluator);
  GPUDM_ADD_CUDA(r, RuleEvaluator, family, backend::cuda::make_rule_evaluator);
}
}  // namespace

void register_rules(Registry& r) {
  register_engine_as(r, rules::kEngineFamily);
  register_engine_as(r, "gp_rules");
}

}  // namespace gpudm
