#pragma once
// Single-thread CPU probe kernels, used by the sequential backend (one thread) and by the
// OpenMP backend (one call per thread; the pragmas live in backends/openmp/). The FMA and
// popcount kernels pick the widest ISA this CPU has at run time (the build itself targets
// baseline x86-64), so the ceiling is the machine's, not the compiler flags'.
#include <cstddef>
#include <cstdint>
#include <string>

#include "algorithms/ceilings/ceilings.hpp"

namespace gpudm::ceilings::cpu {

struct FmaKernelInfo {
  std::string isa;  // "avx512f" | "avx2+fma" | "generic"
  int lanes = 1;    // floats per vector
  int chains = 1;   // independent vectors in flight (hides FMA latency)
  bool fused = true;
};
const FmaKernelInfo& fma_kernel();
// Runs `iterations` updates of chains x lanes independent FMA chains; writes the chains x lanes
// final values to `out` (chain-major). FLOPs = 2 * iterations * chains * lanes.
void run_fma(std::size_t iterations, float* out);
// Compares three chains of each of `threads` consecutive run_fma outputs with the scalar
// reference (bitwise equal when the kernel fuses, like std::fma).
ProbeCheck check_fma(const float* out, int threads, std::size_t iterations);

// Words of the popcount probe: a 4 KiB block (stays in L1) of mixed 64-bit words.
inline constexpr std::size_t kPopcountWords = 512;
void fill_popcount_words(std::uint64_t* words);
const std::string& popcount_isa();  // "popcnt" | "generic"
// Sum over `iterations` passes of popcount(words[j] ^ pass); ops = 2 * iterations * kPopcountWords
// (32-bit-word equivalents, to compare with the GPU's __popc).
std::uint64_t run_popcount(const std::uint64_t* words, std::size_t iterations);
// The same sum with portable code, for the check.
std::uint64_t popcount_reference(const std::uint64_t* words, std::size_t iterations);

// dst <- src, n floats (memcpy: glibc uses non-temporal stores for large copies, so the bytes
// counted, read + written, are the bytes that cross the memory bus).
void copy(float* dst, const float* src, std::size_t n);

}  // namespace gpudm::ceilings::cpu
