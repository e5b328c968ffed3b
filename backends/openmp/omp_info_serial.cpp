#include "backends/openmp/omp_info.hpp"

namespace gpudm::omp_info {
int max_threads() { return 1; }
}  // namespace gpudm::omp_info
