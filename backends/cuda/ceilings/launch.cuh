#pragma once
// Launch layer of the CUDA ceilings backend: picks grid and block from the policies beside the
// kernels (kernels.cuh), launches on the caller's stream and checks every launch.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "backends/cuda/common/device.cuh"

namespace gpudm::backend::cuda::ceilings_launch {

struct Grid {
  unsigned blocks = 1, threads = 1;
  std::size_t total() const { return static_cast<std::size_t>(blocks) * threads; }
};

Grid copy_grid(const DeviceProps& p);
Grid fma_grid(const DeviceProps& p);
Grid popcount_grid(const DeviceProps& p);
int fma_chains();
int popcount_chains();

void init(float* x, std::size_t n, const DeviceProps& p, cudaStream_t s);
void copy(float* dst, const float* src, std::size_t n, Grid g, cudaStream_t s);  // n: multiple of 4
void count_mismatches(const float* a, const float* b, std::size_t n, unsigned long long* count, const DeviceProps& p,
                      cudaStream_t s);
void fma(std::size_t iterations, float* out, Grid g, cudaStream_t s);
void popcount(std::size_t iterations, unsigned long long* out, Grid g, cudaStream_t s);
void empty(cudaStream_t s);  // one empty kernel <<<1, 1>>>, launch checked

}  // namespace gpudm::backend::cuda::ceilings_launch
