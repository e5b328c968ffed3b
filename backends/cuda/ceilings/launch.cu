#include "backends/cuda/ceilings/launch.cuh"

#include "backends/cuda/ceilings/kernels.cuh"
#include "backends/cuda/common/error.cuh"

namespace gpudm::backend::cuda::ceilings_launch {

namespace k = ceilings_kernels;

namespace {
template <class Policy>
Grid policy_grid(const DeviceProps& p) {
  return Grid{static_cast<unsigned>(p.sm_count * Policy::kBlocksPerSm), static_cast<unsigned>(Policy::kBlock)};
}
}  // namespace

Grid copy_grid(const DeviceProps& p) { return policy_grid<k::CopyPolicy>(p); }
Grid fma_grid(const DeviceProps& p) { return policy_grid<k::FmaPolicy>(p); }
Grid popcount_grid(const DeviceProps& p) { return policy_grid<k::PopcountPolicy>(p); }
int fma_chains() { return k::FmaPolicy::kChains; }
int popcount_chains() { return k::PopcountPolicy::kChains; }

void init(float* x, std::size_t n, const DeviceProps& p, cudaStream_t s) {
  const Grid g = copy_grid(p);
  k::init_kernel<<<grid_for(n, g.threads, g.blocks), g.threads, 0, s>>>(x, n);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void copy(float* dst, const float* src, std::size_t n, Grid g, cudaStream_t s) {
  k::copy_kernel<<<g.blocks, g.threads, 0, s>>>(reinterpret_cast<float4*>(dst), reinterpret_cast<const float4*>(src),
                                                n / 4);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void count_mismatches(const float* a, const float* b, std::size_t n, unsigned long long* count, const DeviceProps& p,
                      cudaStream_t s) {
  const Grid g = copy_grid(p);
  k::count_mismatches<<<grid_for(n, g.threads, g.blocks), g.threads, 0, s>>>(a, b, n, count);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void fma(std::size_t iterations, float* out, Grid g, cudaStream_t s) {
  k::fma_kernel<<<g.blocks, g.threads, 0, s>>>(iterations, out);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void popcount(std::size_t iterations, unsigned long long* out, Grid g, cudaStream_t s) {
  k::popcount_kernel<<<g.blocks, g.threads, 0, s>>>(iterations, out);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void empty(cudaStream_t s) {
  k::empty_kernel<<<1, 1, 0, s>>>();
  GPUDM_CUDA_CHECK_LAUNCH();
}

}  // namespace gpudm::backend::cuda::ceilings_launch
