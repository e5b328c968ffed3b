#include "backends/openmp/omp_info.hpp"

#include <omp.h>

namespace gpudm::omp_info {
int max_threads() { return omp_get_max_threads(); }
}  // namespace gpudm::omp_info
