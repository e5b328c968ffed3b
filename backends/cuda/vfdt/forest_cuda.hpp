#pragma once
// CUDA streaming forest (CUDA-free declaration for the registry).
#include <memory>

#include "algorithms/vfdt/forest.hpp"

namespace gpudm::backend::cuda {
// Default path: the compact node pool of the CPU engine, kernels per mini-batch step.
// Faithful path (params.path == "faithful"): the paper's breadth-first 2^depth array with 32-bit
// nodes, leaf-class / leaf-back arrays, 4-row counters, gains by two reductions, per-block sort.
std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest();
}  // namespace gpudm::backend::cuda
