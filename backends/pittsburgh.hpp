#pragma once
// Factories of the pittsburgh family's RuleSetEvaluator backends (one header per family under
// backends/, declaring every kind's factory), defined under backends/<kind>/ and registered by
// backends/register_pittsburgh.cpp (only the ones compiled into this build are called).
//   sequential: the reference: the rule engine's sequential backend for coverage and rule
//               fitness, then the decision list over its coverage bits;
//   openmp:     the same on the engine's OpenMP backend, the decision list over (individual x
//               8,192-row chunk) tasks (algorithms/pittsburgh/engine_evaluator.hpp);
//   cuda:       path faithful (the paper's four kernels: coverage 3D grid with 192 threads and one
//               result byte per (individual, rule, instance); rule fitness 2-level reduction with
//               128 threads; rule-set classification; rule-set fitness) or fast (one fused kernel:
//               instances tiled in shared memory, rules staged in shared memory, warp-uniform
//               interpretation of R rows per thread, warp ballot + popcount counting: the rule
//               engine's device functions); devices = N (or device_ids) splits the population
//               over the devices, one host thread per slice.
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
