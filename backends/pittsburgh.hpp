#pragma once
// Factories of the pittsburgh family's RuleSetEvaluator backends (one header per family under
// backends/, declaring every kind's factory), defined under backends/<kind>/ and registered by
// backends/register_pittsburgh.cpp (only the ones compiled into this build are called).
//   sequential: the reference, one individual at a time, the paper's four steps in order;
//   openmp:     each step one parallel region over (individual x row chunk) tasks;
//   cuda:       path faithful (the paper's four kernels: coverage 3D grid with 192 threads and one
//               result byte per (individual, rule, instance); rule fitness 2-level reduction with
//               128 threads; rule-set classification; rule-set fitness) or fast (one fused kernel:
//               instances tiled in shared memory, rules staged in shared memory, warp-uniform
//               interpretation of R rows per thread, warp ballot + popcount counting); devices = N
//               splits the population over N GPUs, one host thread per device.
#include <memory>

#include "algorithms/pittsburgh/evaluator.hpp"

namespace gpudm::backend::sequential {
std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator();
}
namespace gpudm::backend::openmp {
std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator();
}
namespace gpudm::backend::cuda {
std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator();
}
