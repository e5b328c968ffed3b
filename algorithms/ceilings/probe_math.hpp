#pragma once
// Arithmetic shared verbatim by the CPU probes, the CUDA kernels and the checks (C++17, GPUDM_HD).
#include <cstddef>
#include <cstdint>

#include "algorithms/core/hd.hpp"
#include "algorithms/core/splitmix.hpp"

namespace gpudm::ceilings {

// FMA chains: x <- x * kFmaMul + kFmaAdd (fused), from x0 = fma_start(chain, lane). The fixed
// point is 1, so values stay normal (no denormal slow paths) for any number of iterations.
constexpr float kFmaMul = 0.9999f;
constexpr float kFmaAdd = 0.0001f;
// Products by powers of two are exact, so nvcc contracting the expression into FMAs (its
// default, --fmad=true) gives the same float as the host's separate multiply and add.
GPUDM_HD float fma_start(std::uint32_t chain, std::uint32_t lane) {
  return 1.0f + static_cast<float>(chain % 64u) * 0.0078125f + static_cast<float>(lane % 64u) * 0.0001220703125f;
}

}  // namespace gpudm::ceilings
