// Registers the GMT evaluators: sequential (the reference), openmp, cuda.
#include "backends/gmt.hpp"
#include "backends/register.hpp"

namespace gpudm {

void register_gmt(Registry& r) {
  using gmt::ModelTreeEvaluator;
  r.add<ModelTreeEvaluator>("gmt", "sequential", [] { return backend::sequential::make_gmt_evaluator(); }, Registry::Role::reference);
  GPUDM_ADD_OPENMP(r, ModelTreeEvaluator, "gmt", backend::openmp::make_gmt_evaluator);
  GPUDM_ADD_CUDA(r, ModelTreeEvaluator, "gmt", backend::cuda::make_gmt_evaluator);
}

}  // namespace gpudm
