#pragma once
// Factories of the ceilings backends (defined in backends/{sequential,openmp,cuda}/ceilings*),
// registered by backends/register_ceilings.cpp.
#include <memory>

#include "algorithms/ceilings/ceilings.hpp"

namespace gpudm::backend::sequential {
std::unique_ptr<ceilings::CeilingsBackend> make_ceilings_backend();
}
namespace gpudm::backend::openmp {
std::unique_ptr<ceilings::CeilingsBackend> make_ceilings_backend();
}
namespace gpudm::backend::cuda {
std::unique_ptr<ceilings::CeilingsBackend> make_ceilings_backend();
}
