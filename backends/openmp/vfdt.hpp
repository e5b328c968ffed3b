#pragma once
#include <memory>

#include "algorithms/vfdt/forest.hpp"

namespace gpudm::backend::openmp {
std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest();
}
