#pragma once
// CUDA GMT evaluator factory (CUDA-free header, included by register_gmt.cpp). EvalOptions
// gpu_path selects "fast" (default: a generation's trees in one launch sequence, FP64 sufficient
// statistics, batched solves) or "faithful" (the paper's six procedures per individual: CUB radix
// sort, cuSOLVER geqrf/ormqr and cuBLAS trsm per affected leaf, float or double).
#include <memory>

#include "algorithms/gmt/evaluator.hpp"

namespace gpudm::backend::cuda {
std::unique_ptr<gmt::ModelTreeEvaluator> make_gmt_evaluator();
}
