// register_all: the one place that lists every backend of every family. Explicit calls, no
// static self-registration. A backend not compiled into this build is registered as
// unavailable with the reason, so the runner reports it as skipped.
#include "backends/register.hpp"

#include "gpudm/build_info.hpp"

namespace gpudm {

// Each backend file defines one registration function per family (declared here).
namespace backend::sequential {
}  // namespace backend::sequential
namespace backend::openmp {
}  // namespace backend::openmp
namespace backend::cuda {
}  // namespace backend::cuda

void register_all(Registry& r) {
  (void)r;
  // Families add three blocks here: sequential always; openmp under GPUDM_HAVE_OPENMP, else
  // r.add_unavailable(family, "openmp", build_info::kOpenmpMissingReason); cuda likewise.
}

}  // namespace gpudm
