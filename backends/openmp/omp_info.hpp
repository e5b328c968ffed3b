#pragma once
// OpenMP facts for the results' environment, behind a CUDA/OpenMP-free header.
namespace gpudm::omp_info {
// omp_get_max_threads() in OpenMP builds; 1 otherwise.
int max_threads();
}  // namespace gpudm::omp_info
