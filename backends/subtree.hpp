#pragma once
// Factories of the subtree family's TreeInterpreter backends (one header per family under
// backends/, declaring every kind's factory), defined under backends/<kind>/ and registered by
// backends/register_subtree.cpp (only the ones compiled into this build are called).
#include <memory>

#include "algorithms/subtree/interpreter.hpp"

namespace gpudm::backend::sequential {
std::unique_ptr<subtree::TreeInterpreter> make_subtree_interpreter();
}
namespace gpudm::backend::openmp {
std::unique_ptr<subtree::TreeInterpreter> make_subtree_interpreter();
}
namespace gpudm::backend::cuda {
std::unique_ptr<subtree::TreeInterpreter> make_subtree_interpreter();
}
