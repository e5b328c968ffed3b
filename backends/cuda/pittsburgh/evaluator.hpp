#pragma once
// CUDA Pittsburgh evaluator factory (CUDA-free header, included by register_pittsburgh.cpp).
// EvaluatorOptions::path selects "faithful" (the paper's four kernels: coverage 3D grid with
// 192 threads and one result byte per (individual, rule, instance); rule fitness 2-level
// reduction with 128 threads; rule-set classification; rule-set fitness) or "fast" (one fused
// kernel: instances tiled in shared memory, rules staged in shared memory, warp-uniform
// interpretation of R rows per thread, warp ballot + popcount counting). devices = N splits
// the population over N GPUs, one host thread per device.
#include <memory>

#include "algorithms/pittsburgh/evaluator.hpp"

namespace gpudm::backend::cuda {
std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator();
}
