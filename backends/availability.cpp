// Why a backend kind is missing from this build or machine; used by every register_<family>.
#include "backends/register.hpp"

#include "algorithms/core/machine.hpp"
#include "gpudm/build_info.hpp"

namespace gpudm {

std::string openmp_missing_reason() {
#ifdef GPUDM_HAVE_OPENMP
  return "";
#else
  return std::string("OpenMP backend not built: ") + build_info::kOpenmpMissingReason;
#endif
}

std::string cuda_missing_reason() {
#ifdef GPUDM_HAVE_CUDA
  return machine::gpu_count() > 0 ? "" : machine::gpu_unavailable_reason();
#else
  return std::string("CUDA backend not built: ") + build_info::kCudaMissingReason;
#endif
}

}  // namespace gpudm
