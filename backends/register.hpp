#pragma once
#include "algorithms/core/registry.hpp"

namespace gpudm {
// Registers every backend of every family (available or not) into `r`.
void register_all(Registry& r);
}  // namespace gpudm
