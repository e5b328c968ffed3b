#pragma once
// Ceilings kernels: each saturates one unit of the GPU (DRAM, FP32 pipes, popc) or measures
// one overhead (launch). Policies (block sizes, chains) sit beside the kernels that use them.
#include <cstddef>
#include <cstdint>

#include "algorithms/ceilings/probe_math.hpp"

namespace gpudm::backend::cuda::ceilings_kernels {

struct CopyPolicy {
  static constexpr int kBlock = 256;
  static constexpr int kBlocksPerSm = 8;  // enough bytes in flight to cover DRAM latency
};

struct FmaPolicy {
  static constexpr int kBlock = 256;
  static constexpr int kBlocksPerSm = 8;  // 2048 threads: full occupancy on sm_90
  static constexpr int kChains = 8;       // independent FMAs per thread (ILP over the 4-cycle latency)
  static constexpr int kUnroll = 8;       // loop trips unrolled: loop overhead < 2 %
};

struct PopcountPolicy {
  static constexpr int kBlock = 256;
  static constexpr int kBlocksPerSm = 8;
  static constexpr int kChains = 8;
  static constexpr int kUnroll = 4;
};

// 16-byte loads and stores, grid-stride.
__global__ void copy_kernel(float4* __restrict__ dst, const float4* __restrict__ src, std::size_t n4) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride)
    dst[i] = src[i];
}

__global__ void init_kernel(float* x, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = static_cast<float>(i % 1000003u);
}

__global__ void count_mismatches(const float* a, const float* b, std::size_t n, unsigned long long* count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    local += a[i] != b[i];
  if (local) atomicAdd(count, local);
}

// Thread t runs kChains chains x <- fmaf(x, kFmaMul, kFmaAdd) from fma_start(c, t % 64) and
// writes the chains' sum (in chain order) to out[t].
__global__ void fma_kernel(std::size_t iterations, float* out) {
  constexpr int C = FmaPolicy::kChains;
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float x[C];
#pragma unroll
  for (int c = 0; c < C; ++c) x[c] = ceilings::fma_start(static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(t % 64));
#pragma unroll FmaPolicy::kUnroll
  for (std::size_t i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < C; ++c) x[c] = fmaf(x[c], ceilings::kFmaMul, ceilings::kFmaAdd);
  }
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < C; ++c) s += x[c];
  out[t] = s;
}

// Thread t sums __popc(v_c ^ i) over i < iterations for kChains words v_c = fmix32(t * C + c).
__global__ void popcount_kernel(std::size_t iterations, unsigned long long* out) {
  constexpr int C = PopcountPolicy::kChains;
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::uint32_t v[C];
#pragma unroll
  for (int c = 0; c < C; ++c) v[c] = fmix32(static_cast<std::uint32_t>(t * C + c));
  std::uint32_t acc[2] = {0, 0};
#pragma unroll PopcountPolicy::kUnroll
  for (std::size_t i = 0; i < iterations; ++i) {
    const std::uint32_t k = static_cast<std::uint32_t>(i);
#pragma unroll
    for (int c = 0; c < C; ++c) acc[c & 1] += static_cast<std::uint32_t>(__popc(v[c] ^ k));
  }
  out[t] = static_cast<unsigned long long>(acc[0]) + acc[1];
}

__global__ void empty_kernel() {}

}  // namespace gpudm::backend::cuda::ceilings_kernels
