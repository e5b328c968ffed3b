#pragma once
// SplitMix64 (Steele, Lea, Flood 2014), the one implementation for host and device: the seeding
// generator of Rng (rng.hpp) and the counter-based hashes of the streaming forest
// (vfdt/vfdt_math.hpp); fmix32, the GMT dipole draw's row hash and the ceiling probes' inputs.
// C++17: CUDA code includes it.
#include <cstdint>

#include "algorithms/core/hd.hpp"

namespace gpudm {

inline constexpr std::uint64_t kSplitmixGamma = 0x9E3779B97F4A7C15ull;

// The output of a SplitMix64 generator whose state is `state` before the step: a bijective mix
// of state + gamma (also a good 64-bit hash of `state`).
GPUDM_HD constexpr std::uint64_t splitmix64_mix(std::uint64_t state) {
  std::uint64_t z = state + kSplitmixGamma;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// MurmurHash3's 32-bit finaliser (Appleby): a bijection of 32-bit words with full avalanche.
GPUDM_HD constexpr std::uint32_t fmix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// One step of the generator: advances `state` and returns the next output.
GPUDM_HD constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  const std::uint64_t out = splitmix64_mix(state);
  state += kSplitmixGamma;
  return out;
}

}  // namespace gpudm
