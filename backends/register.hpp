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
