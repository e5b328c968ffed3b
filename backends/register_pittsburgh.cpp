// Registers the Pittsburgh rule-set evaluators: sequential (the reference), openmp, cuda (paths
// "faithful" and "fast", 1..N devices, chosen with EvaluatorOptions); unavailable ones with the reason.
#include "backends/pittsburgh.hpp"
#include "backends/register.hpp"

namespace gpudm {

void register_pittsburgh(Registry& r) {
  using pittsburgh::RuleSetEvaluator;
  const std::string fam = pittsburgh::kFamilyName;
  r.add<RuleSetEvaluator>(fam, "sequential", [] { return backend::sequential::make_pittsburgh_evaluator(); },
                          Registry::Role::reference);
  GPUDM_ADD_OPENMP(r, RuleSetEvaluator, fam, backend::openmp::make_pittsburgh_evaluator);
  GPUDM_ADD_CUDA(r, RuleSetEvaluator, fam, backend::cuda::make_pittsburgh_evaluator);
}

}  // namespace gpudm
