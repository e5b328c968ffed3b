#include "algorithms/core/machine.hpp"

namespace gpudm::machine {
int openmp_max_threads() { return 1; }
}  // namespace gpudm::machine
