#pragma once
// Factories of the vfdt family's ForestBackend backends (one header per family under backends/,
// declaring every kind's factory), defined under backends/<kind>/ and registered by
// backends/register_vfdt.cpp (only the ones compiled into this build are called).
#include <memory>

#include "algorithms/vfdt/forest.hpp"

namespace gpudm::backend::sequential {
// The CPU engine with plain loops: the family's reference (with batch 1 the exact
// instance-by-instance algorithm).
std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest();
}
namespace gpudm::backend::openmp {
// The CPU engine with the trees of a mini-batch step spread over threads (results identical to
// the sequential backend's).
std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest();
}
namespace gpudm::backend::cuda {
// Path default: the compact node pool of the CPU engine (persistent or batched engine). Path
// faithful: the paper's breadth-first 2^depth array with 32-bit nodes, leaf-class / leaf-back
// arrays, 4-row counters, gains by two reductions, per-block sort.
std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest();
}
