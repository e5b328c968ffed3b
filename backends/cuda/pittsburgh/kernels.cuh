#pragma once
// Pittsburgh kernels (__global__ code only; launched by launch.cu, tuned in policy.cuh). C++17
// (nvcc). Opcode meaning comes from algorithms/rules/opcodes.hpp; the fast path's tile staging,
// interpretation and coverage ballots are the rule engine's device functions
// (backends/cuda/rules/device.cuh). Populations reach the kernels validated
// (algorithms/pittsburgh/population.cpp), so the interpreters do no bounds checks.
#include <cstdint>

#include "algorithms/rules/confusion.hpp"
#include "algorithms/rules/opcodes.hpp"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/pittsburgh/policy.cuh"
#include "backends/cuda/pittsburgh/args.cuh"
#include "backends/cuda/rules/device.cuh"

namespace gpudm::backend::cuda::pitt {

// ---------------------------------------------------------------------------------------
// Faithful path: the paper's four kernels (Cano, Zafra, Ventura 2014, Listings 1-4).
// ---------------------------------------------------------------------------------------
// Grid (individuals, row blocks, rules): one thread interprets one rule on one instance and
// writes the outcome code into result[(ind * max_rules + rule) * stride + row].
__global__ void coverage_kernel(PopView pop, DatasetView data, std::uint8_t* result, std::size_t stride) {
  const std::uint32_t ind = blockIdx.x;
  const std::uint32_t rl = blockIdx.z;
  const std::uint32_t r0 = pop.ind_rule_begin[ind];
  if (rl >= pop.ind_rule_begin[ind + 1] - r0) return;
  const std::uint32_t r = r0 + rl;
  const std::uint32_t* tokens = pop.words + pop.rule_begin[r];
  const std::int32_t cons = pop.rule_consequent[r];
  std::uint8_t* out = result + (static_cast<std::size_t>(ind) * pop.max_rules + rl) * stride;
  for (std::size_t row = static_cast<std::size_t>(blockIdx.y) * blockDim.x + threadIdx.x; row < data.rows;
       row += static_cast<std::size_t>(gridDim.y) * blockDim.x) {
    const float* x = data.features + row;
    const std::size_t pr = data.padded_rows;
    const bool covers = rules::evaluate(tokens, [&](std::uint32_t a) { return x[a * pr]; });
    out[row] = rules::outcome(covers, data.labels[row] == cons);
  }
}

// Grid (individuals, rules), 128 threads: counts the outcome codes of one rule (each thread a
// strided slice, then a shared-memory tree reduction) and computes sensitivity x specificity.
__global__ void rule_fitness_kernel(PopView pop, const std::uint8_t* result, std::size_t stride, std::size_t rows,
                                    rules::ConfusionMatrix* confusion, float* fitness) {
  constexpr int B = FaithfulPolicy::kRuleFitnessThreads;
  __shared__ unsigned cnt[4][B];
  const std::uint32_t ind = blockIdx.x, rl = blockIdx.y;
  const std::uint32_t r0 = pop.ind_rule_begin[ind];
  if (rl >= pop.ind_rule_begin[ind + 1] - r0) return;
  const int t = threadIdx.x;
  unsigned c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  const std::uint8_t* codes = result + (static_cast<std::size_t>(ind) * pop.max_rules + rl) * stride;
  for (std::size_t i = t; i < rows; i += B) {
    const std::uint8_t c = codes[i];
    c0 += c == rules::kTP;
    c1 += c == rules::kTN;
    c2 += c == rules::kFP;
    c3 += c == rules::kFN;
  }
  cnt[0][t] = c0;
  cnt[1][t] = c1;
  cnt[2][t] = c2;
  cnt[3][t] = c3;
  __syncthreads();
  for (int s = B / 2; s > 0; s >>= 1) {
    if (t < s)
      for (int k = 0; k < 4; ++k) cnt[k][t] += cnt[k][t + s];
    __syncthreads();
  }
  if (t == 0) {
    rules::ConfusionMatrix m;
    m.tp = cnt[rules::kTP][0];
    m.tn = cnt[rules::kTN][0];
    m.fp = cnt[rules::kFP][0];
    m.fn = cnt[rules::kFN][0];
    confusion[r0 + rl] = m;
    fitness[r0 + rl] = rules::sensitivity_specificity(m);
  }
}

// Grid (individuals, row blocks): decision list over the coverage codes (first covering rule
// decides: TP = correct, FP = wrong; none covers: default class). 1 = correctly classified.
__global__ void classification_kernel(PopView pop, DatasetView data, const std::uint8_t* result, std::size_t stride,
                                      std::uint8_t* classified) {
  const std::uint32_t ind = blockIdx.x;
  const std::uint32_t nr = pop.ind_rule_begin[ind + 1] - pop.ind_rule_begin[ind];
  const std::int32_t def = pop.default_class[ind];
  const std::uint8_t* codes = result + static_cast<std::size_t>(ind) * pop.max_rules * stride;
  for (std::size_t row = static_cast<std::size_t>(blockIdx.y) * blockDim.x + threadIdx.x; row < data.rows;
       row += static_cast<std::size_t>(gridDim.y) * blockDim.x) {
    std::uint8_t ok = data.labels[row] == def;
    for (std::uint32_t r = 0; r < nr; ++r) {
      const std::uint8_t c = codes[static_cast<std::size_t>(r) * stride + row];
      if (c == rules::kTP) { ok = 1; break; }
      if (c == rules::kFP) { ok = 0; break; }
    }
    classified[static_cast<std::size_t>(ind) * stride + row] = ok;
  }
}

// Grid (individuals), 128 threads: counts correct predictions (accuracy = correct / rows).
__global__ void ruleset_fitness_kernel(const std::uint8_t* classified, std::size_t stride, std::size_t rows,
                                       std::uint32_t* correct) {
  constexpr int B = FaithfulPolicy::kRuleSetFitnessThreads;
  __shared__ unsigned cnt[B];
  const int t = threadIdx.x;
  const std::uint8_t* c = classified + static_cast<std::size_t>(blockIdx.x) * stride;
  unsigned s = 0;
  for (std::size_t i = t; i < rows; i += B) s += c[i];
  cnt[t] = s;
  __syncthreads();
  for (int k = B / 2; k > 0; k >>= 1) {
    if (t < k) cnt[t] += cnt[t + k];
    __syncthreads();
  }
  if (t == 0) correct[blockIdx.x] = cnt[0];
}

// ---------------------------------------------------------------------------------------
// Fast path: one fused kernel.
//  - grid.y = groups of whole individuals whose tokens fit kWordsBudget words; the group's
//    tokens live in shared memory for the whole kernel (warp-uniform broadcast reads);
//  - grid.x = persistent blocks striding over tiles of T = BLOCK * R slots; a tile's columns
//    are staged once in shared memory (stage_tile) and reused by every rule of every individual
//    of the group;
//  - every warp interprets the same token at the same time (interpret_rows / interpret_pairs:
//    uniform branches), each thread R slots of one row (f32) or two (f16x2, ranked codes), so
//    one token decode serves R or 2R comparisons; the boolean stack is a shift register per row;
//  - counting: count_covered's warp ballot per (rule, 32 rows) is the coverage mask, its lane c
//    counts the covered rows of class c (lane `consequent` holds TP); the rows of the consequent
//    are lane `consequent`'s class mask (one shuffle); the decision list keeps an "undecided"
//    mask per 32 rows, so classification costs three bit operations per rule; TP and the covered
//    count go to shared-memory counters (FP, FN and TN follow from the class sizes in
//    finalize_kernel), flushed with one global atomic per block at the end.
// ---------------------------------------------------------------------------------------
namespace rk = rules_kernels;

template <int BLOCK, int R, class Rows>
__global__ void __launch_bounds__(BLOCK, 1024 / BLOCK) fused_kernel(FastArgs args) {  // <= 64 registers: no spills (ptxas spilled R = 1, 2 at 32 registers without the minimum)
  constexpr int T = BLOCK * R;  // words per column per tile
  constexpr int S = Rows::kRowsPerSlot;
  constexpr unsigned kFull = 0xFFFFFFFFu;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const DatasetView& data = args.data;
  const PopView& pop = args.pop;
  const int tid = threadIdx.x, lane = tid & 31;
  const std::size_t cols = data.cols;
  const std::size_t col_words = data.padded_rows / S;
  const std::uint32_t* feat = S == 1 ? reinterpret_cast<const std::uint32_t*>(data.features) : args.features16;
  std::uint32_t* s_x = reinterpret_cast<std::uint32_t*>(smem_raw);
  std::uint32_t* s_words = s_x + cols * T;
  std::uint32_t* s_cnt = s_words + args.max_group_words;

  const std::uint32_t g = blockIdx.y;
  const std::uint32_t i0 = args.group_begin[g], i1 = args.group_begin[g + 1];
  const std::uint32_t w0 = pop.ind_word_begin[i0], nw = pop.ind_word_begin[i1] - w0;
  const std::uint32_t rr0 = pop.ind_rule_begin[i0], nrules = pop.ind_rule_begin[i1] - rr0;
  const std::uint32_t ncnt = 2 * nrules + (i1 - i0);
  std::uint32_t* s_correct = s_cnt + 2 * nrules;
  for (std::uint32_t j = tid; j < nw; j += BLOCK) s_words[j] = pop.words[w0 + j];
  for (std::uint32_t j = tid; j < ncnt; j += BLOCK) s_cnt[j] = 0;

  for (std::uint32_t tile = blockIdx.x; tile < args.tiles; tile += gridDim.x) {
    __syncthreads();  // the previous tile is consumed (and the staging above is complete)
    const std::size_t wbase = static_cast<std::size_t>(tile) * T;
    rk::stage_tile<BLOCK, R>(feat, cols, col_words, wbase, s_x);
    rk::TileLabels<R, S> lab;
    rk::load_tile_labels<BLOCK, R, S>(data.labels, data.rows, wbase, args.classes, lab);
    __syncthreads();
    for (std::uint32_t ind = i0; ind < i1; ++ind) {
      std::uint32_t und[R][S], corr[R][S];
#pragma unroll
      for (int k = 0; k < R; ++k)
#pragma unroll
        for (int h = 0; h < S; ++h) {
          und[k][h] = lab.valid[k][h];
          corr[k][h] = 0;
        }
      const std::uint32_t rb = pop.ind_rule_begin[ind], re = pop.ind_rule_begin[ind + 1];
      for (std::uint32_t r = rb; r < re; ++r) {
        const std::uint32_t* tok = s_words + (pop.rule_begin[r] - w0);
        const std::int32_t cons = pop.rule_consequent[r];
        std::uint32_t st[R];
        if constexpr (S == 1) rk::interpret_rows<BLOCK, R>(tok, reinterpret_cast<const float*>(s_x), st);
        else rk::interpret_pairs<BLOCK, R>(tok, s_x, st);
        std::uint32_t m[R][S];
        const std::uint32_t tp = rk::count_covered<R, S>(st, lab, m);  // on lane `cons`
        std::uint32_t covered = 0;
#pragma unroll
        for (int k = 0; k < R; ++k)
#pragma unroll
          for (int h = 0; h < S; ++h) {
            const std::uint32_t e = __shfl_sync(kFull, lab.cls[k][h], cons);  // rows of class `cons`
            covered += __popc(m[k][h]);
            corr[k][h] |= m[k][h] & und[k][h] & e;
            und[k][h] &= ~m[k][h];
          }
        std::uint32_t* c = s_cnt + 2 * (r - rr0);
        if (lane == cons && tp) atomicAdd(c, tp);
        if (lane == 0 && covered) atomicAdd(c + 1, covered);
      }
      const std::int32_t def = pop.default_class[ind];
      std::uint32_t ok = 0;
#pragma unroll
      for (int k = 0; k < R; ++k)
#pragma unroll
        for (int h = 0; h < S; ++h) ok += __popc(corr[k][h] | (und[k][h] & __shfl_sync(kFull, lab.cls[k][h], def)));
      if (lane == 0 && ok) atomicAdd(s_correct + (ind - i0), ok);
    }
  }
  __syncthreads();
  for (std::uint32_t j = tid; j < 2 * nrules; j += BLOCK)
    if (s_cnt[j]) atomicAdd(args.rule_counts + 2 * rr0 + j, s_cnt[j]);
  for (std::uint32_t j = tid; j < i1 - i0; j += BLOCK)
    if (s_correct[j]) atomicAdd(args.correct + i0 + j, s_correct[j]);
}

// Per rule from TP and the covered count: FP = covered - TP, FN = rows of the consequent - TP,
// TN = rows - covered - FN, and the fitness.
__global__ void finalize_kernel(const std::uint32_t* counts, const std::int32_t* consequent,
                                const std::uint32_t* class_rows, std::uint32_t rules, std::uint32_t rows,
                                rules::ConfusionMatrix* confusion, float* fitness) {
  const std::uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rules) return;
  rules::ConfusionMatrix m;
  const std::uint32_t covered = counts[2 * r + 1];
  m.tp = counts[2 * r];
  m.fp = covered - m.tp;
  m.fn = class_rows[consequent[r]] - m.tp;
  m.tn = rows - covered - m.fn;
  confusion[r] = m;
  fitness[r] = rules::sensitivity_specificity(m);
}

}  // namespace gpudm::backend::cuda::pitt
