#pragma once
// The rule engine's kernels. Included by launch.cu only (it defines the constant-memory
// population of the faithful path). C++17 (nvcc).
#include <cstddef>
#include <cstdint>

#include "algorithms/rules/opcodes.hpp"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/rules/args.cuh"
#include "backends/cuda/rules/device.cuh"
#include "backends/cuda/rules/policy.cuh"

namespace gpudm::backend::cuda::rules_kernels {

// ---------------------------------------------------------------------------------------
// Faithful path: the GP paper's two kernels (Cano, Zafra, Ventura 2012, Sec. 5.2.2).
// ---------------------------------------------------------------------------------------
// The individuals of one launch: offsets (chunk rules + 1, absolute into this array) then the
// words, uploaded before each match launch (the paper copies the phenotypes every generation).
__constant__ std::uint32_t c_population[FaithfulPolicy::kConstantWords];

// Byte of the results array for an instance the rule does not cover; covered instances store
// their class (the paper stores tp/fp/tn/fn for the one consequent; storing the class lets one
// pass count every class: tp/fp/tn/fn of any consequent follow on the host).
inline constexpr std::uint8_t kNotCovered = 0xFF;

// Algorithm 3: grid (chunk rules, instance blocks), one thread per (rule, instance); thread i of
// a block reads instance i of a column of the transposed, padded data (coalesced), the rule's
// tokens are broadcast from constant memory. result[(first + rule) * aligned + instance].
__global__ void match_kernel(DatasetView d, std::uint32_t first, std::uint8_t* result, std::size_t aligned) {
  const std::uint32_t rl = blockIdx.x;
  const std::uint32_t* tokens = c_population + c_population[rl];
  std::uint8_t* out = result + (static_cast<std::size_t>(first) + rl) * aligned;
  for (std::size_t row = static_cast<std::size_t>(blockIdx.y) * blockDim.x + threadIdx.x; row < d.rows;
       row += static_cast<std::size_t>(gridDim.y) * blockDim.x) {
    const std::size_t pr = d.padded_rows;
    const float* x = d.features + row;
    const bool covers = ::gpudm::rules::evaluate(tokens, [&](std::uint32_t a) { return x[a * pr]; });
    out[row] = covers ? static_cast<std::uint8_t>(d.labels[row]) : kNotCovered;
  }
}

// The reduction kernel: grid (rules), kReduceThreads threads. Thread t counts items
// t, t + B, t + 2B, ... of its rule's row of the results array (coalesced) into its own
// shared-memory counters (one per class: classes x B), then after one barrier thread c sums
// class c's B counters: a two-level reduction, as the paper's (one barrier, no tree).
__global__ void reduce_kernel(const std::uint8_t* result, std::size_t aligned, std::size_t rows, int classes,
                              std::uint32_t* counts) {
  constexpr int B = FaithfulPolicy::kReduceThreads;
  extern __shared__ std::uint32_t s_cnt[];  // classes x B
  const int t = threadIdx.x;
  for (int c = 0; c < classes; ++c) s_cnt[c * B + t] = 0;
  const std::uint8_t* codes = result + static_cast<std::size_t>(blockIdx.x) * aligned;
  for (std::size_t i = t; i < rows; i += B) {
    const std::uint8_t c = codes[i];
    if (c != kNotCovered) ++s_cnt[c * B + t];
  }
  __syncthreads();
  for (int c = t; c < classes; c += B) {
    std::uint32_t s = 0;
    for (int k = 0; k < B; ++k) s += s_cnt[c * B + k];
    counts[static_cast<std::size_t>(blockIdx.x) * classes + c] = s;
  }
}

// Coverage bits from the results array (only when the caller asks for coverage): one thread per
// 32-row word of one rule.
__global__ void pack_coverage_kernel(const std::uint8_t* result, std::size_t aligned, std::size_t rows,
                                     std::size_t rules, std::size_t words_per_rule, std::uint32_t* coverage) {
  const std::size_t total = rules * words_per_rule;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = i / words_per_rule, w = i % words_per_rule;
    const std::uint8_t* codes = result + r * aligned + w * 32;
    std::uint32_t bits = 0;
    for (int j = 0; j < 32; ++j)
      if (w * 32 + j < rows && codes[j] != kNotCovered) bits |= 1u << j;
    coverage[i] = bits;
  }
}

// ---------------------------------------------------------------------------------------
// Fast path: one fused kernel over the whole population.
//  - grid.y = groups of rules whose tokens (and counters) fit the shared-memory budgets; the
//    group's tokens live in shared memory for the whole kernel (warp-uniform broadcast reads);
//  - grid.x = persistent blocks striding over tiles of T = BLOCK * R slots; a tile's columns are
//    staged once in shared memory and reused by every rule of the group;
//  - every warp interprets the same token at the same time, each thread R slots, so one decode
//    serves R (f32) or 2R (f16x2) comparisons;
//  - counting: a warp ballot per (rule, 32 slots) gives the coverage mask, lane c adds the
//    popcount of mask & (rows of class c) to the group's shared counter of (rule, c), flushed
//    with one global atomic per block and counter at the end; coverage words (when requested)
//    are written by lane 0.
// ---------------------------------------------------------------------------------------
template <int BLOCK, int R, class Rows>
// <= 64 registers per thread (min blocks 1024 / BLOCK): without the minimum ptxas spilled R = 1, 2
// at 32-40 registers (as pittsburgh's fused kernel did).
__global__ void __launch_bounds__(BLOCK, 1024 / BLOCK) fused_kernel(FastArgs a) {
  constexpr int T = BLOCK * R;  // slots per column per tile
  constexpr int S = Rows::kRowsPerSlot;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int tid = threadIdx.x, lane = tid & 31;
  const std::size_t cols = a.data.cols;
  const std::size_t col_words = a.data.padded_rows / S;
  const std::uint32_t* feat = S == 1 ? reinterpret_cast<const std::uint32_t*>(a.data.features) : a.features16;
  std::uint32_t* s_x = reinterpret_cast<std::uint32_t*>(smem_raw);
  std::uint32_t* s_words = s_x + cols * T;
  std::uint32_t* s_cnt = s_words + a.max_group_words;
  const int classes = a.classes;

  const std::uint32_t r0 = a.group_begin[blockIdx.y], r1 = a.group_begin[blockIdx.y + 1];
  const std::uint32_t w0 = a.rule_begin[r0], nw = a.rule_begin[r1] - w0;
  const std::uint32_t ncnt = (r1 - r0) * static_cast<std::uint32_t>(classes);
  for (std::uint32_t j = tid; j < nw; j += BLOCK) s_words[j] = a.words[w0 + j];
  for (std::uint32_t j = tid; j < ncnt; j += BLOCK) s_cnt[j] = 0;

  for (std::uint32_t tile = blockIdx.x; tile < a.tiles; tile += gridDim.x) {
    __syncthreads();  // the previous tile is consumed (and the staging above is complete)
    const std::size_t wbase = static_cast<std::size_t>(tile) * T;
    stage_tile<BLOCK, R>(feat, cols, col_words, wbase, s_x);
    TileLabels<R, S> lab;
    load_tile_labels<BLOCK, R, S>(a.data.labels, a.data.rows, wbase, classes, lab);
    __syncthreads();
    for (std::uint32_t rule = r0; rule < r1; ++rule) {
      const std::uint32_t* tok = s_words + (a.rule_begin[rule] - w0);
      std::uint32_t st[R];
      if constexpr (S == 1) interpret_rows<BLOCK, R>(tok, reinterpret_cast<const float*>(s_x), st);
      else interpret_pairs<BLOCK, R>(tok, s_x, st);
      std::uint32_t m[R][S];
      const std::uint32_t n = count_covered<R, S>(st, lab, m);
      if (lane < classes && n) atomicAdd(s_cnt + (rule - r0) * static_cast<std::uint32_t>(classes) + lane, n);
      if (a.coverage != nullptr && lane == 0) {
        std::uint32_t* cov = a.coverage + static_cast<std::size_t>(rule) * a.words_per_rule;
#pragma unroll
        for (int k = 0; k < R; ++k) {
          const std::size_t slot0 = wbase + static_cast<std::size_t>(k) * BLOCK + (tid & ~31);
          if constexpr (S == 1) {
            if (slot0 / 32 < a.words_per_rule) cov[slot0 / 32] = m[k][0];
          } else {
            const unsigned long long v = interleave_bits(m[k][0], m[k][S - 1]);
            const std::size_t word = slot0 / 16;  // rows 2 * slot0 .. 2 * slot0 + 63
            if (word < a.words_per_rule) cov[word] = static_cast<std::uint32_t>(v);
            if (word + 1 < a.words_per_rule) cov[word + 1] = static_cast<std::uint32_t>(v >> 32);
          }
        }
      }
    }
  }
  __syncthreads();
  for (std::uint32_t j = tid; j < ncnt; j += BLOCK)
    if (s_cnt[j]) atomicAdd(a.counts + static_cast<std::size_t>(r0) * classes + j, s_cnt[j]);
}

// The f16x2 threshold rewrite (ranked codes), one warp per rule: the warp copies the rule's words
// (coalesced), walks its tokens in step out of 32-word chunks held one word per lane (a shuffle a
// token, where one thread walking the rule in global memory waited on a dependent load a token),
// gives the k-th comparison to lane k % 32, and every 32 comparisons (and at the end) the lanes
// rank their thresholds at once (independent binary searches).
inline constexpr int kRewriteWarps = 4;
__global__ void __launch_bounds__(kRewriteWarps * 32)
    rewrite_ranked_kernel(const std::uint32_t* in, const std::uint32_t* rule_begin, std::uint32_t rules,
                          const float* values, const std::uint32_t* begin, std::uint32_t* out) {
  constexpr std::uint32_t kAll = 0xFFFFFFFFu, kNone = 0xFFFFFFFFu;
  const std::uint32_t lane = threadIdx.x & 31u;
  const std::uint32_t rl = blockIdx.x * kRewriteWarps + (threadIdx.x >> 5);
  if (rl >= rules) return;  // uniform in a warp: the rest of the kernel runs on whole warps
  const std::uint32_t b = rule_begin[rl], e = rule_begin[rl + 1];
  for (std::uint32_t k = b + lane; k < e; k += 32) out[k] = in[k];
  __syncwarp();  // the copies land before any lane overwrites a comparison's words
  std::uint32_t base = b, chunk = b + lane < e ? in[b + lane] : 0u;
  std::uint32_t mine = kNone, mine_w = 0, found = 0;
  for (std::uint32_t i = b; i < e;) {  // i, base, found: the same in every lane
    while (i >= base + 32) {
      base += 32;
      chunk = base + lane < e ? in[base + lane] : 0u;
    }
    const std::uint32_t w = __shfl_sync(kAll, chunk, i - base);
    const std::uint32_t op = r::opcode_of(w);
    if (op == r::kEnd) break;
    if (!r::is_comparison(op)) {
      ++i;
      continue;
    }
    if (lane == found % 32) {
      mine = i;
      mine_w = w;
    }
    i += 1 + r::operand_count(op);
    if (++found % 32 == 0) {
      rewrite_ranked_comparison(in, out, mine, mine_w, values, begin);
      mine = kNone;
    }
  }
  if (mine != kNone) rewrite_ranked_comparison(in, out, mine, mine_w, values, begin);
}

}  // namespace gpudm::backend::cuda::rules_kernels
