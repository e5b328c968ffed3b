// The product's families, from the list CMake generates out of the algorithms/<f>/family_<f>.cpp
// files present (explicit calls, no static self-registration). Kept in its own translation unit
// so test binaries that link gpudm_experiments never pull the product list in.
#include <memory>

#include "experiments/families.hpp"

namespace gpudm {
#define GPUDM_FAMILY(f) std::unique_ptr<Family> make_##f##_family();
#include "gpudm/runnable_families.inc"
#undef GPUDM_FAMILY
}  // namespace gpudm

namespace gpudm::experiments {

FamilySet product_families() {
  FamilySet set;
#define GPUDM_FAMILY(f) set.add(::gpudm::make_##f##_family());
#include "gpudm/runnable_families.inc"
#undef GPUDM_FAMILY
  return set;
}

}  // namespace gpudm::experiments
