// Registers the streaming-forest backends (family "vfdt", interface vfdt::ForestBackend;
// unavailable ones with the reason). The sequential backend is the reference.
#include "backends/register.hpp"
#include "backends/vfdt.hpp"

namespace gpudm {

void register_vfdt(Registry& r) {
  using vfdt::ForestBackend;
  r.add<ForestBackend>("vfdt", "sequential", [] { return backend::sequential::make_vfdt_forest(); }, Registry::Role::reference);
  GPUDM_ADD_OPENMP(r, ForestBackend, "vfdt", backend::openmp::make_vfdt_forest);
  GPUDM_ADD_CUDA(r, ForestBackend, "vfdt", backend::cuda::make_vfdt_forest);
}

}  // namespace gpudm
