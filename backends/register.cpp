// register_all: registers every backend of every family. The list of families is generated
// at configure time from the backends/register_<family>.cpp files present (explicit calls,
// no static self-registration). Each register_<family> registers sequential, openmp and cuda,
// the ones not compiled into this build as unavailable with the reason.
#include "backends/register.hpp"

namespace gpudm {

#define GPUDM_FAMILY(f) void register_##f(Registry&);
#include "gpudm/registered_families.inc"
#undef GPUDM_FAMILY

void register_all(Registry& r) {
#define GPUDM_FAMILY(f) register_##f(r);
#include "gpudm/registered_families.inc"
#undef GPUDM_FAMILY
}

}  // namespace gpudm

