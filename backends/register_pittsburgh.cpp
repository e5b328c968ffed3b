// Registers the Pittsburgh rule-set evaluators: sequential (oracle), openmp, cuda (paths
// "faithful" and "fast", 1..N devices, chosen with EvaluatorOptions).
#include "algorithms/pittsburgh/evaluator.hpp"
#include "backends/register.hpp"
#include "backends/sequential/pittsburgh.hpp"
#ifdef GPUDM_HAVE_OPENMP
#include "backends/openmp/pittsburgh.hpp"
#endif
#ifdef GPUDM_HAVE_CUDA
#include "backends/cuda/pittsburgh/evaluator.hpp"
#endif

namespace gpudm {

void register_pittsburgh(Registry& r) {
  using pittsburgh::RuleSetEvaluator;
  const std::string fam = pittsburgh::kFamilyName;
  r.add<RuleSetEvaluator>(fam, "sequential", [] { return backend::sequential::make_pittsburgh_evaluator(); }, Registry::Role::reference);
#ifdef GPUDM_HAVE_OPENMP
  r.add<RuleSetEvaluator>(fam, "openmp", [] { return backend::openmp::make_pittsburgh_evaluator(); });
#else
  r.add_unavailable(fam, "openmp", openmp_missing_reason());
#endif
#ifdef GPUDM_HAVE_CUDA
  if (const std::string why = cuda_missing_reason(); why.empty())
    r.add<RuleSetEvaluator>(fam, "cuda", [] { return backend::cuda::make_pittsburgh_evaluator(); });
  else
    r.add_unavailable(fam, "cuda", why);
#else
  r.add_unavailable(fam, "cuda", cuda_missing_reason());
#endif
}

}  // namespace gpudm
