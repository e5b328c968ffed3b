#include "algorithms/core/machine.hpp"

#include <omp.h>

namespace gpudm::machine {
int openmp_max_threads() { return omp_get_max_threads(); }
}  // namespace gpudm::machine
