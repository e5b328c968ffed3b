// Registers the ceilings backends: sequential always; openmp and cuda when built (and, for
// cuda, when a device is usable), else as unavailable with the reason.
#include "backends/ceilings.hpp"
#include "backends/register.hpp"

namespace gpudm {

void register_ceilings(Registry& r) {
  using Backend = ceilings::CeilingsBackend;
  r.add<Backend>("ceilings", "sequential", [] { return backend::sequential::make_ceilings_backend(); }, Registry::Role::reference);
  GPUDM_ADD_OPENMP(r, Backend, "ceilings", backend::openmp::make_ceilings_backend);
  GPUDM_ADD_CUDA(r, Backend, "ceilings", backend::cuda::make_ceilings_backend);
}

}  // namespace gpudm
