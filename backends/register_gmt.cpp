// Registers the GMT evaluators: sequential, openmp; cuda is the next issue.
#include "algorithms/gmt/evaluator.hpp"
#include "backends/register.hpp"
#include "backends/sequential/gmt.hpp"
#ifdef GPUDM_HAVE_OPENMP
#include "backends/openmp/gmt.hpp"
#endif

namespace gpudm {

void register_gmt(Registry& r) {
  using gmt::ModelTreeEvaluator;
  r.add<ModelTreeEvaluator>("gmt", "sequential", [] { return backend::sequential::make_gmt_evaluator(); }, Registry::Role::reference);
#ifdef GPUDM_HAVE_OPENMP
  r.add<ModelTreeEvaluator>("gmt", "openmp", [] { return backend::openmp::make_gmt_evaluator(); });
#else
  r.add_unavailable("gmt", "openmp", openmp_missing_reason());
#endif
  r.add_unavailable("gmt", "cuda", "CUDA GMT backend: next issue");
}

}  // namespace gpudm
