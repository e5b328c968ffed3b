#include "algorithms/ceilings/cpu_probes.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "algorithms/ceilings/probe_math.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GPUDM_CEILINGS_X86 1
#endif

namespace gpudm::ceilings::cpu {

namespace {

template <int Chains, int Lanes>
void store_starts(float (&x)[Chains][Lanes]) {
  for (int c = 0; c < Chains; ++c)
    for (int l = 0; l < Lanes; ++l) x[c][l] = fma_start(static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(l));
}

#ifdef GPUDM_CEILINGS_X86
constexpr int kAvx512Chains = 16;  // 32 zmm registers: 16 chains + constants
constexpr int kAvx2Chains = 12;    // 16 ymm registers: 12 chains + 2 constants
constexpr int kSseChains = 12;

// One probe per ISA, the same body: `chains` independent FMA chains of `lanes` floats each, kept
// in registers (unrolled), stored once at the end.
#define GPUDM_FMA_PROBE(NAME, ATTR, VEC, LANES, CHAINS, LOAD, SET1, STEP, STORE)        \
  ATTR void NAME(std::size_t iterations, float* out) {                                   \
    alignas(sizeof(VEC)) float s[CHAINS][LANES];                                         \
    store_starts(s);                                                                     \
    VEC x[CHAINS];                                                                       \
    _Pragma("GCC unroll 16") for (int c = 0; c < CHAINS; ++c) x[c] = LOAD(s[c]);         \
    const VEC m = SET1(kFmaMul), a = SET1(kFmaAdd);                                      \
    for (std::size_t i = 0; i < iterations; ++i) {                                       \
      _Pragma("GCC unroll 16") for (int c = 0; c < CHAINS; ++c) x[c] = STEP(x[c], m, a); \
    }                                                                                    \
    _Pragma("GCC unroll 16") for (int c = 0; c < CHAINS; ++c) STORE(out + LANES * c, x[c]); \
  }

// Baseline x86-64 has no FMA instruction: a multiply then an add, counted as the same 2 FLOPs.
#define GPUDM_SSE_MUL_ADD(x, m, a) _mm_add_ps(_mm_mul_ps(x, m), a)

GPUDM_FMA_PROBE(fma_avx512, __attribute__((target("avx512f"))), __m512, 16, kAvx512Chains, _mm512_load_ps, _mm512_set1_ps,
                _mm512_fmadd_ps, _mm512_storeu_ps)
GPUDM_FMA_PROBE(fma_avx2, __attribute__((target("avx2,fma"))), __m256, 8, kAvx2Chains, _mm256_load_ps, _mm256_set1_ps,
                _mm256_fmadd_ps, _mm256_storeu_ps)
GPUDM_FMA_PROBE(fma_sse, , __m128, 4, kSseChains, _mm_load_ps, _mm_set1_ps, GPUDM_SSE_MUL_ADD, _mm_storeu_ps)

#undef GPUDM_SSE_MUL_ADD
#undef GPUDM_FMA_PROBE

__attribute__((target("popcnt"))) std::uint64_t popcount_hw(const std::uint64_t* w, std::size_t iterations) {
  std::uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (std::size_t it = 0; it < iterations; ++it) {
    const std::uint64_t k = it;
    for (std::size_t j = 0; j < kPopcountWords; j += 4) {
      a0 += static_cast<std::uint64_t>(__builtin_popcountll(w[j] ^ k));
      a1 += static_cast<std::uint64_t>(__builtin_popcountll(w[j + 1] ^ k));
      a2 += static_cast<std::uint64_t>(__builtin_popcountll(w[j + 2] ^ k));
      a3 += static_cast<std::uint64_t>(__builtin_popcountll(w[j + 3] ^ k));
    }
  }
  return a0 + a1 + a2 + a3;
}
#endif

// Portable: the optimiser may not reduce this to the popcnt instruction (baseline ISA).
std::uint64_t popcount_portable(const std::uint64_t* w, std::size_t iterations) {
  std::uint64_t acc = 0;
  for (std::size_t it = 0; it < iterations; ++it)
    for (std::size_t j = 0; j < kPopcountWords; ++j) {
      std::uint64_t v = w[j] ^ static_cast<std::uint64_t>(it);
      v = v - ((v >> 1) & 0x5555555555555555ull);
      v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
      v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
      acc += (v * 0x0101010101010101ull) >> 56;
    }
  return acc;
}

#ifndef GPUDM_CEILINGS_X86
void fma_generic(std::size_t iterations, float* out) {
  constexpr int kChains = 8;
  float x[kChains];
  for (int c = 0; c < kChains; ++c) x[c] = fma_start(static_cast<std::uint32_t>(c), 0);
  for (std::size_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) x[c] = x[c] * kFmaMul + kFmaAdd;
  for (int c = 0; c < kChains; ++c) out[c] = x[c];
}
#endif

FmaKernelInfo detect_fma() {
#ifdef GPUDM_CEILINGS_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512f", 16, kAvx512Chains, true};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2+fma", 8, kAvx2Chains, true};
  return {"sse2 mul+add (no FMA instruction)", 4, kSseChains, false};
#else
  return {"generic", 1, 8, false};
#endif
}

}  // namespace

const FmaKernelInfo& fma_kernel() {
  static const FmaKernelInfo k = detect_fma();
  return k;
}

void run_fma(std::size_t iterations, float* out) {
#ifdef GPUDM_CEILINGS_X86
  const auto& k = fma_kernel();
  if (k.isa == "avx512f") return fma_avx512(iterations, out);
  if (k.isa == "avx2+fma") return fma_avx2(iterations, out);
  return fma_sse(iterations, out);
#else
  fma_generic(iterations, out);
#endif
}

ProbeCheck check_fma(const float* out, int threads, std::size_t iterations) {
  const auto& k = fma_kernel();
  ProbeCheck c;
  c.what = "FMA chains equal the scalar " + std::string(k.fused ? "std::fma" : "mul+add") + " reference";
  const std::size_t per_thread = static_cast<std::size_t>(k.chains * k.lanes);
  const int picks[3][2] = {{0, 0}, {k.chains / 2, k.lanes > 3 ? 3 : 0}, {k.chains - 1, k.lanes - 1}};
  for (const auto& pk : picks) {
    const float ref = fma_reference(fma_start(static_cast<std::uint32_t>(pk[0]), static_cast<std::uint32_t>(pk[1])),
                                    iterations, k.fused);
    for (int t = 0; t < threads; ++t) {
      const float v = out[static_cast<std::size_t>(t) * per_thread + static_cast<std::size_t>(pk[0] * k.lanes + pk[1])];
      c.max_error = std::max(c.max_error, static_cast<double>(std::fabs(v - ref)));
    }
  }
  return c;
}

void fill_popcount_words(std::uint64_t* words) {
  for (std::size_t j = 0; j < kPopcountWords; ++j)
    words[j] = (static_cast<std::uint64_t>(fmix32(static_cast<std::uint32_t>(2 * j))) << 32) |
               fmix32(static_cast<std::uint32_t>(2 * j + 1));
}

const std::string& popcount_isa() {
  static const std::string isa = [] {
#ifdef GPUDM_CEILINGS_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("popcnt")) return std::string("popcnt");
#endif
    return std::string("generic");
  }();
  return isa;
}

std::uint64_t run_popcount(const std::uint64_t* words, std::size_t iterations) {
#ifdef GPUDM_CEILINGS_X86
  if (popcount_isa() == "popcnt") return popcount_hw(words, iterations);
#endif
  return popcount_portable(words, iterations);
}

std::uint64_t popcount_reference(const std::uint64_t* words, std::size_t iterations) {
  return popcount_portable(words, iterations);
}

void copy(float* dst, const float* src, std::size_t n) { std::memcpy(dst, src, n * sizeof(float)); }

}  // namespace gpudm::ceilings::cpu
