// Registers the streaming-forest backends (family "vfdt", interface vfdt::ForestBackend).
#include "algorithms/vfdt/forest.hpp"
#include "backends/register.hpp"
#include "backends/sequential/vfdt.hpp"
#ifdef GPUDM_HAVE_OPENMP
#include "backends/openmp/vfdt.hpp"
#endif
#ifdef GPUDM_HAVE_CUDA
#include "backends/cuda/vfdt/forest_cuda.hpp"
#endif

namespace gpudm {

void register_vfdt(Registry& r) {
  using vfdt::ForestBackend;
  r.add<ForestBackend>("vfdt", "sequential", [] { return backend::sequential::make_vfdt_forest(); }, Registry::Role::reference);
#ifdef GPUDM_HAVE_OPENMP
  r.add<ForestBackend>("vfdt", "openmp", [] { return backend::openmp::make_vfdt_forest(); });
#else
  r.add_unavailable("vfdt", "openmp", openmp_missing_reason());
#endif
#ifdef GPUDM_HAVE_CUDA
  if (const std::string why = cuda_missing_reason(); why.empty())
    r.add<ForestBackend>("vfdt", "cuda", [] { return backend::cuda::make_vfdt_forest(); });
  else
    r.add_unavailable("vfdt", "cuda", why);
#else
  r.add_unavailable("vfdt", "cuda", cuda_missing_reason());
#endif
}

}  // namespace gpudm
