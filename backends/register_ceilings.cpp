// Registers the ceilings backends: sequential always; openmp and cuda when built (and, for
// cuda, when a device is usable), else as unavailable with the reason.
#include "algorithms/ceilings/backends.hpp"
#include "backends/register.hpp"

namespace gpudm {

void register_ceilings(Registry& r) {
  using Backend = ceilings::CeilingsBackend;
  r.add<Backend>("ceilings", "sequential", [] { return backend::sequential::make_ceilings_backend(); });
#ifdef GPUDM_HAVE_OPENMP
  r.add<Backend>("ceilings", "openmp", [] { return backend::openmp::make_ceilings_backend(); });
#else
  r.add_unavailable("ceilings", "openmp", openmp_missing_reason());
#endif
#ifdef GPUDM_HAVE_CUDA
  if (const std::string why = cuda_missing_reason(); why.empty())
    r.add<Backend>("ceilings", "cuda", [] { return backend::cuda::make_ceilings_backend(); });
  else
    r.add_unavailable("ceilings", "cuda", why);
#else
  r.add_unavailable("ceilings", "cuda", cuda_missing_reason());
#endif
}

}  // namespace gpudm
