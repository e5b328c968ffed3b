#pragma once
// Pittsburgh kernels (__global__ and __device__ code only; launched by launch.cu, tuned in
// policy.cuh). C++17 (nvcc). Opcode meaning comes from algorithms/rules/opcodes.hpp;
// populations reach the kernels validated (algorithms/pittsburgh/population.cpp), so the
// interpreters do no bounds checks.
#include <cstdint>

#include <cuda_fp16.h>

#include "algorithms/rules/confusion.hpp"
#include "algorithms/rules/opcodes.hpp"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/pittsburgh/policy.cuh"
#include "backends/cuda/pittsburgh/views.cuh"

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
  const std::uint32_t* tokens = pop.words + pop.rule_word_begin[r];
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
//  - grid.x = persistent blocks striding over tiles of T = BLOCK * R rows; a tile's columns
//    are staged once in shared memory and reused by every rule of every individual of the group;
//  - every warp interprets the same token at the same time (uniform branches), each thread
//    R rows, so one token decode serves R comparisons; the boolean stack is a 32-bit shift
//    register per row (push = 2*st + p; AND/OR/NOT are two bit operations);
//  - counting: a warp ballot per (rule, 32 rows) gives the coverage mask; TP/FP/FN are
//    popcounts against the ballot of (label == consequent); the decision list keeps an
//    "undecided" mask per 32 rows, so classification costs three bit operations per rule;
//    counts go to shared-memory counters, flushed with one global atomic per block at the end.
// ---------------------------------------------------------------------------------------
template <int BLOCK, int R>
__device__ __forceinline__ void interpret_rows(const std::uint32_t* tok, const float* s_x, std::uint32_t (&st)[R]) {
  constexpr int T = BLOCK * R;
  const int tid = threadIdx.x;
#pragma unroll
  for (int k = 0; k < R; ++k) st[k] = 1u;  // bit 0 = top of stack; an empty antecedent covers all
  for (int i = 0;;) {
    const std::uint32_t w = tok[i];
    const std::uint32_t op = w & 0xFFu;
    if (op == rules::kEnd) break;
    if (op <= rules::kOut) {
      const float* col = s_x + (w >> 8) * T + tid;
      const float a = __uint_as_float(tok[i + 1]);
      float x[R];
#pragma unroll
      for (int k = 0; k < R; ++k) x[k] = col[k * BLOCK];
      std::uint32_t p[R];
      switch (op) {
        case rules::kGt:
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] > a;
          break;
        case rules::kGe:
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] >= a;
          break;
        case rules::kLt:
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] < a;
          break;
        case rules::kLe:
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] <= a;
          break;
        case rules::kEq:
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] == a;
          break;
        case rules::kNe:  // NaN (missing) compares false, as in rules::compare
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] != a && x[k] == x[k];
          break;
        case rules::kIn: {
          const float b = __uint_as_float(tok[i + 2]);
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] >= a && x[k] <= b;
          break;
        }
        default: {  // kOut
          const float b = __uint_as_float(tok[i + 2]);
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] < a || x[k] > b;
          break;
        }
      }
#pragma unroll
      for (int k = 0; k < R; ++k) st[k] = (st[k] << 1) | p[k];
      i += op >= rules::kIn ? 3 : 2;
    } else if (op == rules::kAnd) {
#pragma unroll
      for (int k = 0; k < R; ++k) st[k] = (st[k] >> 1) & (st[k] | ~1u);
      ++i;
    } else if (op == rules::kOr) {
#pragma unroll
      for (int k = 0; k < R; ++k) st[k] = (st[k] >> 1) | (st[k] & 1u);
      ++i;
    } else {  // kNot
#pragma unroll
      for (int k = 0; k < R; ++k) st[k] ^= 1u;
      ++i;
    }
  }
}

// ---- packed features: two rows per 32-bit word as fp16 (the "f16x2" layout) -------------
// Used when every feature value of the dataset is exactly representable in fp16 (Poker's 1-13,
// nominal indexes, small integers): one HSET2 compares two rows, one shift + LOP3 updates two
// row stacks, one LDS loads two rows. The host rewrites every threshold to an fp16 bound that
// gives the same answer on fp16-representable data (rewrite_f16_kernel below), so only
// >=, <=, =, != and the intervals remain, with these meanings in packed words:
//   kGe x >= a   kLe x <= a   kEq x == a   kNe x != a (ordered: false on NaN)
//   kIn a <= x <= b          kOut x <= a || x >= b   (a, b already moved past the bounds)
// Operand words hold the fp16 bound twice (both halves). Every comparison is false on NaN.
// Row stacks: 16 bits per row, bit 0 / bit 16 the tops; depth <= kMaxPackedDepth (policy.cuh) keeps each
// row's live bits below bit 15, so a shift only moves dead bits across the halves (the push
// selects the new tops with one LOP3, the pops' carry lands in dead bit 15).
struct F32Rows {
  static constexpr int kRowsPerSlot = 1;
};
struct F16x2Rows {
  static constexpr int kRowsPerSlot = 2;
};

// The threshold rewrite for the f16x2 layout, one thread per rule (the token stream keeps its
// word count, so every offset stays valid). For fp16-representable data x and a float a:
//   x >= a <=> x >= ru(a)          x > a <=> x >= above(a)
//   x <= a <=> x <= rd(a)          x < a <=> x <= below(a)
// with ru/rd the conversions rounding up/down (IEEE: past the range they give +-inf / the
// largest finite), above/below the nearest fp16 strictly greater/smaller; a bound that does not
// exist (above(+inf), below(-inf)) is NaN, which compares false. Thresholds are never NaN
// (validation rejects them).
namespace f16 {
constexpr unsigned short kNaN = 0x7E00, kPosInf = 0x7C00, kNegInf = 0xFC00;
__device__ __forceinline__ float value(unsigned short h) { return __half2float(__ushort_as_half(h)); }
__device__ __forceinline__ unsigned short next(unsigned short u) {  // smallest fp16 > u
  if (u == kPosInf) return kNaN;
  if (u == 0x0000 || u == 0x8000) return 0x0001;
  return (u & 0x8000) ? u - 1 : u + 1;
}
__device__ __forceinline__ unsigned short prev(unsigned short u) {  // largest fp16 < u
  if (u == kNegInf) return kNaN;
  if (u == 0x0000 || u == 0x8000) return 0x8001;
  return (u & 0x8000) ? u + 1 : u - 1;
}
__device__ __forceinline__ unsigned short up(float a) { return __half_as_ushort(__float2half_ru(a)); }
__device__ __forceinline__ unsigned short down(float a) { return __half_as_ushort(__float2half_rd(a)); }
__device__ __forceinline__ unsigned short above(float a) {
  const unsigned short h = up(a);
  return value(h) == a ? next(h) : h;
}
__device__ __forceinline__ unsigned short below(float a) {
  const unsigned short h = down(a);
  return value(h) == a ? prev(h) : h;
}
__device__ __forceinline__ bool exact(float a) { return __half2float(__float2half_rn(a)) == a; }
__device__ __forceinline__ std::uint32_t pair(unsigned short h) { return h | (static_cast<std::uint32_t>(h) << 16); }
}  // namespace f16

__global__ void rewrite_f16_kernel(const std::uint32_t* in, const std::uint32_t* rule_word_begin, std::uint32_t rules,
                                   std::uint32_t* out) {
  const std::uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rules) return;
  for (std::uint32_t i = rule_word_begin[r];;) {
    const std::uint32_t w = in[i], op = rules::opcode_of(w), attr = rules::attribute_of(w);
    if (op == rules::kEnd) {
      out[i] = w;
      break;
    }
    if (!rules::is_comparison(op)) {
      out[i++] = w;
      continue;
    }
    const float a = __uint_as_float(in[i + 1]);
    std::uint32_t nop = op, na = 0;
    switch (op) {
      case rules::kGt: nop = rules::kGe; na = f16::pair(f16::above(a)); break;
      case rules::kGe: na = f16::pair(f16::up(a)); break;
      case rules::kLt: nop = rules::kLe; na = f16::pair(f16::below(a)); break;
      case rules::kLe: na = f16::pair(f16::down(a)); break;
      case rules::kEq: na = f16::pair(f16::exact(a) ? f16::up(a) : f16::kNaN); break;  // no x equals an inexact a
      case rules::kNe:  // != a value the data cannot hold: true unless missing, i.e. x <= +inf
        if (f16::exact(a)) na = f16::pair(f16::up(a));
        else {
          nop = rules::kLe;
          na = f16::pair(f16::kPosInf);
        }
        break;
      case rules::kIn:
        na = f16::pair(f16::up(a));
        out[i + 2] = f16::pair(f16::down(__uint_as_float(in[i + 2])));
        break;
      default:  // kOut
        na = f16::pair(f16::below(a));
        out[i + 2] = f16::pair(f16::above(__uint_as_float(in[i + 2])));
        break;
    }
    out[i] = rules::make_word(nop, attr);
    out[i + 1] = na;
    i += 1 + rules::operand_count(op);
  }
}

template <int BLOCK, int R>
__device__ __forceinline__ void interpret_pairs(const std::uint32_t* tok, const std::uint32_t* s_x,
                                                std::uint32_t (&st)[R]) {
  constexpr int T = BLOCK * R;  // words per column in the tile
  constexpr std::uint32_t kTops = 0x00010001u;
  const int tid = threadIdx.x;
#pragma unroll
  for (int k = 0; k < R; ++k) st[k] = kTops;
  for (int i = 0;;) {
    const std::uint32_t w = tok[i];
    const std::uint32_t op = w & 0xFFu;
    if (op == rules::kEnd) break;
    if (op <= rules::kOut) {
      const std::uint32_t* col = s_x + (w >> 8) * T + tid;
      const __half2 a = __halves2half2(__ushort_as_half(static_cast<unsigned short>(tok[i + 1] & 0xFFFFu)),
                                       __ushort_as_half(static_cast<unsigned short>(tok[i + 1] >> 16)));
      __half2 x[R];
#pragma unroll
      for (int k = 0; k < R; ++k) {
        const std::uint32_t v = col[k * BLOCK];
        x[k] = *reinterpret_cast<const __half2*>(&v);
      }
      std::uint32_t m[R];
      switch (op) {
        case rules::kGe:
#pragma unroll
          for (int k = 0; k < R; ++k) m[k] = __hge2_mask(x[k], a);
          break;
        case rules::kLe:
#pragma unroll
          for (int k = 0; k < R; ++k) m[k] = __hle2_mask(x[k], a);
          break;
        case rules::kEq:
#pragma unroll
          for (int k = 0; k < R; ++k) m[k] = __heq2_mask(x[k], a);
          break;
        case rules::kNe:
#pragma unroll
          for (int k = 0; k < R; ++k) m[k] = __hne2_mask(x[k], a);
          break;
        case rules::kIn: {
          const std::uint32_t bw = tok[i + 2];
          const __half2 b = *reinterpret_cast<const __half2*>(&bw);
#pragma unroll
          for (int k = 0; k < R; ++k) m[k] = __hge2_mask(x[k], a) & __hle2_mask(x[k], b);
          break;
        }
        default: {  // kOut
          const std::uint32_t bw = tok[i + 2];
          const __half2 b = *reinterpret_cast<const __half2*>(&bw);
#pragma unroll
          for (int k = 0; k < R; ++k) m[k] = __hle2_mask(x[k], a) | __hge2_mask(x[k], b);
          break;
        }
      }
#pragma unroll
      for (int k = 0; k < R; ++k) st[k] = ((st[k] << 1) & ~kTops) | (m[k] & kTops);
      i += op >= rules::kIn ? 3 : 2;
    } else if (op == rules::kAnd) {
#pragma unroll
      for (int k = 0; k < R; ++k) st[k] = (st[k] >> 1) & (st[k] | ~kTops);
      ++i;
    } else if (op == rules::kOr) {
#pragma unroll
      for (int k = 0; k < R; ++k) st[k] = (st[k] >> 1) | (st[k] & kTops);
      ++i;
    } else {  // kNot
#pragma unroll
      for (int k = 0; k < R; ++k) st[k] ^= kTops;
      ++i;
    }
  }
}

// One fused kernel for both layouts. A "slot" is one feature word per column: one row (F32Rows)
// or two rows (F16x2Rows, rows 2j and 2j+1 of the column's half array). A thread owns R slots
// k*BLOCK + tid of the tile, so the tile holds BLOCK * R words per column.
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
  const std::uint32_t ncnt = 3 * nrules + (i1 - i0);
  std::uint32_t* s_correct = s_cnt + 3 * nrules;
  for (std::uint32_t j = tid; j < nw; j += BLOCK) s_words[j] = pop.words[w0 + j];
  for (std::uint32_t j = tid; j < ncnt; j += BLOCK) s_cnt[j] = 0;

  for (std::uint32_t tile = blockIdx.x; tile < args.tiles; tile += gridDim.x) {
    __syncthreads();  // the previous tile is consumed (and the staging above is complete)
    const std::size_t wbase = static_cast<std::size_t>(tile) * T;
    for (std::size_t c = 0; c < cols; ++c) {
      const uint4* src = reinterpret_cast<const uint4*>(feat + c * col_words + wbase);
      uint4* dst = reinterpret_cast<uint4*>(s_x + c * T);
      for (int j = tid; j < T / 4; j += BLOCK)
        dst[j] = wbase + 4 * static_cast<std::size_t>(j) < col_words ? src[j] : make_uint4(0u, 0u, 0u, 0u);
    }
    int lab[R][S];
    std::uint32_t valid[R][S];
#pragma unroll
    for (int k = 0; k < R; ++k)
#pragma unroll
      for (int h = 0; h < S; ++h) {
        const std::size_t row = (wbase + static_cast<std::size_t>(k) * BLOCK + tid) * S + h;
        lab[k][h] = row < data.rows ? data.labels[row] : -1;
        valid[k][h] = __ballot_sync(kFull, row < data.rows);
      }
    __syncthreads();
    for (std::uint32_t ind = i0; ind < i1; ++ind) {
      std::uint32_t und[R][S], corr[R][S];
#pragma unroll
      for (int k = 0; k < R; ++k)
#pragma unroll
        for (int h = 0; h < S; ++h) {
          und[k][h] = valid[k][h];
          corr[k][h] = 0;
        }
      const std::uint32_t rb = pop.ind_rule_begin[ind], re = pop.ind_rule_begin[ind + 1];
      for (std::uint32_t r = rb; r < re; ++r) {
        const std::uint32_t* tok = s_words + (pop.rule_word_begin[r] - w0);
        const std::int32_t cons = pop.rule_consequent[r];
        std::uint32_t st[R];
        if constexpr (S == 1) interpret_rows<BLOCK, R>(tok, reinterpret_cast<const float*>(s_x), st);
        else interpret_pairs<BLOCK, R>(tok, s_x, st);
        std::uint32_t tp = 0, fp = 0, fn = 0;
#pragma unroll
        for (int k = 0; k < R; ++k)
#pragma unroll
          for (int h = 0; h < S; ++h) {
            const std::uint32_t m = __ballot_sync(kFull, (st[k] >> (16 * h)) & 1u) & valid[k][h];
            const std::uint32_t e = __ballot_sync(kFull, lab[k][h] == cons);
            tp += __popc(m & e);
            fp += __popc(m & ~e);
            fn += __popc(~m & e);
            corr[k][h] |= m & und[k][h] & e;
            und[k][h] &= ~m;
          }
        if (lane == 0) {
          std::uint32_t* c = s_cnt + 3 * (r - rr0);
          if (tp) atomicAdd(c, tp);
          if (fp) atomicAdd(c + 1, fp);
          if (fn) atomicAdd(c + 2, fn);
        }
      }
      const std::int32_t def = pop.default_class[ind];
      std::uint32_t ok = 0;
#pragma unroll
      for (int k = 0; k < R; ++k)
#pragma unroll
        for (int h = 0; h < S; ++h) ok += __popc(corr[k][h] | (und[k][h] & __ballot_sync(kFull, lab[k][h] == def)));
      if (lane == 0 && ok) atomicAdd(s_correct + (ind - i0), ok);
    }
  }
  __syncthreads();
  for (std::uint32_t j = tid; j < 3 * nrules; j += BLOCK)
    if (s_cnt[j]) atomicAdd(args.rule_counts + 3 * rr0 + j, s_cnt[j]);
  for (std::uint32_t j = tid; j < i1 - i0; j += BLOCK)
    if (s_correct[j]) atomicAdd(args.correct + i0 + j, s_correct[j]);
}

// Per rule: TN = rows - TP - FP - FN, and the fitness.
__global__ void finalize_kernel(const std::uint32_t* counts, std::uint32_t rules, std::uint32_t rows,
                                rules::ConfusionMatrix* confusion, float* fitness) {
  const std::uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rules) return;
  rules::ConfusionMatrix m;
  m.tp = counts[3 * r];
  m.fp = counts[3 * r + 1];
  m.fn = counts[3 * r + 2];
  m.tn = rows - m.tp - m.fp - m.fn;
  confusion[r] = m;
  fitness[r] = rules::sensitivity_specificity(m);
}

}  // namespace gpudm::backend::cuda::pitt
