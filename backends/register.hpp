#pragma once
#include <string>

#include "algorithms/core/registry.hpp"

namespace gpudm {

// Registers every backend of every family (available or not) into `r`.
void register_all(Registry& r);

// Why a backend kind is missing from this build ("" when present); for register_<family>.
std::string openmp_missing_reason();
std::string cuda_missing_reason();  // includes "no device" when built but no GPU is usable

}  // namespace gpudm

// Registers family's "openmp" / "cuda" backend made by `make()` when that kind is built (and, for
// CUDA, a device is usable), else as unavailable with the reason. Macros because `make` is not
// declared in builds without that kind.
#ifdef GPUDM_HAVE_OPENMP
#define GPUDM_ADD_OPENMP(r, Interface, family, make) (r).add<Interface>((family), "openmp", [] { return make(); })
#else
#define GPUDM_ADD_OPENMP(r, Interface, family, make) (r).add_unavailable((family), "openmp", ::gpudm::openmp_missing_reason())
#endif
#ifdef GPUDM_HAVE_CUDA
#define GPUDM_ADD_CUDA(r, Interface, family, make)                                      \
  do {                                                                                  \
    if (const std::string why_ = ::gpudm::cuda_missing_reason(); why_.empty())          \
      (r).add<Interface>((family), "cuda", [] { return make(); });                      \
    else                                                                                \
      (r).add_unavailable((family), "cuda", why_);                                      \
  } while (0)
#else
#define GPUDM_ADD_CUDA(r, Interface, family, make) (r).add_unavailable((family), "cuda", ::gpudm::cuda_missing_reason())
#endif
