#pragma once
// Factories of the gmt family's ModelTreeEvaluator backends (one header per family under
// backends/, declaring every kind's factory), defined under backends/<kind>/ and registered by
// backends/register_gmt.cpp (only the ones compiled into this build are called). CUDA-free.
#include <memory>

#include "algorithms/gmt/evaluator.hpp"

namespace gpudm::backend::sequential {
// The paper's six procedures per individual on the host: the family's reference.
std::unique_ptr<gmt::ModelTreeEvaluator> make_gmt_evaluator();
}
namespace gpudm::backend::openmp {
// The same procedures with the rows (large data) or the individuals (small data) over threads.
std::unique_ptr<gmt::ModelTreeEvaluator> make_gmt_evaluator();
}
namespace gpudm::backend::cuda {
// EvalOptions gpu_path selects "fast" (default: a generation's trees in one fused statistics pass,
// FP64 sufficient statistics, batched solves) or "faithful" (the paper's six procedures per
// individual: CUB radix sort, cuSOLVER geqrf/ormqr and cuBLAS trsm per affected leaf, float or
// double).
std::unique_ptr<gmt::ModelTreeEvaluator> make_gmt_evaluator();
}
