#pragma once
// Device functions of the fused rule kernels: the rule engine's fast path (kernels.cuh here) and
// pittsburgh's decision-list kernel (backends/cuda/pittsburgh/kernels.cuh) call the same ones:
//   stage_tile                         a tile of every column into shared memory;
//   interpret_rows / interpret_pairs   one rule on R row slots per thread of a shared-memory tile,
//                                      warp-uniform (every lane decodes the same token), the
//                                      boolean stack a shift register per slot;
//   load_tile_labels / count_covered   coverage by warp ballot, covered rows of every class by
//                                      one AND + popcount per slot, lane c counting class c;
//   rewrite_ranked_comparison          a threshold as ranked fp16 codes for the f16x2 layout.
// Opcode meaning is rules::compare's (algorithms/rules/opcodes.hpp); rules reach the kernels
// validated (check_population), so no bounds checks happen here. C++17 (nvcc).
#include <cstddef>
#include <cstdint>

#include <cuda_fp16.h>

#include "algorithms/rules/opcodes.hpp"
#include "algorithms/rules/ranked.hpp"

namespace gpudm::backend::cuda::rules_kernels {

namespace r = ::gpudm::rules;

// A "slot" is one feature word per column: one row (F32Rows) or two rows (F16x2Rows: rows 2j
// and 2j+1 of the column's half array). A thread owns slots k*BLOCK + tid of the tile, k < R.
struct F32Rows {
  static constexpr int kRowsPerSlot = 1;
};
struct F16x2Rows {
  static constexpr int kRowsPerSlot = 2;
};
// Row stacks of the f16x2 layout are 16 bits per row; depth <= 13 keeps the live bits below
// bit 15 (see interpret_pairs).
inline constexpr int kMaxPackedDepth = 13;

// One rule on R f32 slots: st[k] bit 0 = top of the stack of slot k (an empty antecedent
// leaves the initial 1: covers every row). s_x is the tile: column c's T = BLOCK * R words at
// s_x + c * T.
template <int BLOCK, int R>
__device__ __forceinline__ void interpret_rows(const std::uint32_t* tok, const float* s_x, std::uint32_t (&st)[R]) {
  constexpr int T = BLOCK * R;
  const int tid = threadIdx.x;
#pragma unroll
  for (int k = 0; k < R; ++k) st[k] = 1u;
  for (int i = 0;;) {
    const std::uint32_t w = tok[i];
    const std::uint32_t op = w & 0xFFu;
    if (op == r::kEnd) break;
    if (op <= r::kOut) {
      const float* col = s_x + (w >> 8) * T + tid;
      const float a = __uint_as_float(tok[i + 1]);
      float x[R];
#pragma unroll
      for (int k = 0; k < R; ++k) x[k] = col[k * BLOCK];
      std::uint32_t p[R];
      switch (op) {
        case r::kGt:
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] > a;
          break;
        case r::kGe:
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] >= a;
          break;
        case r::kLt:
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] < a;
          break;
        case r::kLe:
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] <= a;
          break;
        case r::kEq:
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] == a;
          break;
        case r::kNe:  // NaN (missing) compares false, as in rules::compare
#pragma unroll
          for (int k = 0; k < R; ++k) p[k] = x[k] != a && x[k] == x[k];
          break;
        case r::kIn: {
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
      i += op >= r::kIn ? 3 : 2;
    } else if (op == r::kAnd) {
#pragma unroll
      for (int k = 0; k < R; ++k) st[k] = (st[k] >> 1) & (st[k] | ~1u);
      ++i;
    } else if (op == r::kOr) {
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

// ---- the f16x2 layout: two rows per 32-bit word as fp16 ------------------------------------
// The dataset's ranked fp16 codes (algorithms/rules/ranked.hpp: each value replaced by the code
// of its rank among its column's distinct values, codes ordered like the values, NaN missing),
// two rows per word: one HSET2 compares two rows, one LDS loads two rows. Every threshold is
// rewritten to codes (rewrite_ranked_comparison), after which only >=, <=, =, != and the intervals
// remain, with these meanings in packed words:
//   kGe x >= a   kLe x <= a   kEq x == a   kNe x != a (false on NaN)
//   kIn a <= x <= b          kOut x <= a || x >= b   (a, b already moved past the bounds)
// Operand words hold the code in both halves. Row stacks: 16 bits per row, bit 0 / bit 16 the
// tops; depth <= kMaxPackedDepth keeps each row's live bits below bit 15, so a shift only moves
// dead bits across the halves.
__device__ __forceinline__ std::uint32_t code_pair(std::uint16_t h) { return h | (static_cast<std::uint32_t>(h) << 16); }

// Rewrites the comparison at word `i` of `in` (opcode word `w`) into `out` (same word count, so
// every offset stays valid); `values` + `begin` are the columns' sorted distinct values
// (RankedColumns).
__device__ __forceinline__ void rewrite_ranked_comparison(const std::uint32_t* in, std::uint32_t* out, std::uint32_t i,
                                                          std::uint32_t w, const float* values,
                                                          const std::uint32_t* begin) {
  const std::uint32_t op = r::opcode_of(w), attr = r::attribute_of(w);
  const int n = r::operand_count(op);
  const float a = __uint_as_float(in[i + 1]);
  const float b = n == 2 ? __uint_as_float(in[i + 2]) : 0.0f;
  const r::RankedComparison c = r::rank_comparison(op, a, b, values + begin[attr], begin[attr + 1] - begin[attr]);
  out[i] = r::make_word(c.op, attr);
  out[i + 1] = code_pair(c.a);
  if (n == 2) out[i + 2] = code_pair(c.b);
}

// One rule on R f16x2 slots (s_x: the tile's words, two rows each); st[k] bits 0 and 16 are
// the tops of the slot's two row stacks.
template <int BLOCK, int R>
__device__ __forceinline__ void interpret_pairs(const std::uint32_t* tok, const std::uint32_t* s_x, std::uint32_t (&st)[R]) {
  constexpr int T = BLOCK * R;
  constexpr std::uint32_t kTops = 0x00010001u;
  const int tid = threadIdx.x;
#pragma unroll
  for (int k = 0; k < R; ++k) st[k] = kTops;
  for (int i = 0;;) {
    const std::uint32_t w = tok[i];
    const std::uint32_t op = w & 0xFFu;
    if (op == r::kEnd) break;
    if (op <= r::kOut) {
      const std::uint32_t* col = s_x + (w >> 8) * T + tid;
      const std::uint32_t aw = tok[i + 1];
      const __half2 a = *reinterpret_cast<const __half2*>(&aw);
      __half2 x[R];
#pragma unroll
      for (int k = 0; k < R; ++k) {
        const std::uint32_t v = col[k * BLOCK];
        x[k] = *reinterpret_cast<const __half2*>(&v);
      }
      std::uint32_t m[R];
      switch (op) {
        case r::kGe:
#pragma unroll
          for (int k = 0; k < R; ++k) m[k] = __hge2_mask(x[k], a);
          break;
        case r::kLe:
#pragma unroll
          for (int k = 0; k < R; ++k) m[k] = __hle2_mask(x[k], a);
          break;
        case r::kEq:
#pragma unroll
          for (int k = 0; k < R; ++k) m[k] = __heq2_mask(x[k], a);
          break;
        case r::kNe:
#pragma unroll
          for (int k = 0; k < R; ++k) m[k] = __hne2_mask(x[k], a);
          break;
        case r::kIn: {
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
      i += op >= r::kIn ? 3 : 2;
    } else if (op == r::kAnd) {
#pragma unroll
      for (int k = 0; k < R; ++k) st[k] = (st[k] >> 1) & (st[k] | ~kTops);
      ++i;
    } else if (op == r::kOr) {
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

// ---- the tile ----------------------------------------------------------------------------
// Stages the tile starting at word `wbase` of every column of the column-major words `feat`
// (col_words words per column) into s_x (T = BLOCK * R words per column, 16-byte copies; words
// past a column's end are 0). The caller synchronises before and after.
template <int BLOCK, int R>
__device__ __forceinline__ void stage_tile(const std::uint32_t* feat, std::size_t cols, std::size_t col_words,
                                           std::size_t wbase, std::uint32_t* s_x) {
  constexpr int T = BLOCK * R;
  const int tid = threadIdx.x;
  for (std::size_t c = 0; c < cols; ++c) {
    const uint4* src = reinterpret_cast<const uint4*>(feat + c * col_words + wbase);
    uint4* dst = reinterpret_cast<uint4*>(s_x + c * T);
    for (int j = tid; j < T / 4; j += BLOCK)
      dst[j] = wbase + 4 * static_cast<std::size_t>(j) < col_words ? src[j] : make_uint4(0u, 0u, 0u, 0u);
  }
}

// ---- counting ----------------------------------------------------------------------------
// The labels of a tile as warp masks: valid[k][h] has the bits of the warp's rows < rows;
// cls[k][h] of lane c has the bits of the rows whose class is c (lanes >= classes: 0).
// Costs `classes` ballots per slot per tile, amortised over every rule evaluated on the tile.
template <int R, int S>
struct TileLabels {
  std::uint32_t valid[R][S];
  std::uint32_t cls[R][S];
};

template <int BLOCK, int R, int S>
__device__ __forceinline__ void load_tile_labels(const std::int32_t* labels, std::size_t rows, std::size_t slot_base,
                                                 int classes, TileLabels<R, S>& t) {
  constexpr unsigned kFull = 0xFFFFFFFFu;
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int k = 0; k < R; ++k)
#pragma unroll
    for (int h = 0; h < S; ++h) {
      const std::size_t row = (slot_base + static_cast<std::size_t>(k) * BLOCK + threadIdx.x) * S + h;
      const int lab = row < rows ? labels[row] : -1;
      t.valid[k][h] = __ballot_sync(kFull, row < rows);
      std::uint32_t mine = 0;
      for (int c = 0; c < classes; ++c) {
        const std::uint32_t m = __ballot_sync(kFull, lab == c);
        if (lane == c) mine = m;
      }
      t.cls[k][h] = mine;
    }
}

// Coverage masks of one interpreted rule (m[k][h]: the warp's covered rows of slot k, half h)
// and the lane's count: rows of class `lane` the rule covers among the thread's slots' warps.
template <int R, int S>
__device__ __forceinline__ std::uint32_t count_covered(const std::uint32_t (&st)[R], const TileLabels<R, S>& t,
                                                       std::uint32_t (&m)[R][S]) {
  constexpr unsigned kFull = 0xFFFFFFFFu;
  std::uint32_t n = 0;
#pragma unroll
  for (int k = 0; k < R; ++k)
#pragma unroll
    for (int h = 0; h < S; ++h) {
      m[k][h] = __ballot_sync(kFull, (st[k] >> (16 * h)) & 1u) & t.valid[k][h];
      n += __popc(m[k][h] & t.cls[k][h]);
    }
  return n;
}

// Row-ordered coverage of the f16x2 layout: even rows from `lo`, odd rows from `hi`.
__device__ __forceinline__ unsigned long long interleave_bits(std::uint32_t lo, std::uint32_t hi) {
  const auto spread = [](std::uint32_t x) {
    unsigned long long v = x;
    v = (v | (v << 16)) & 0x0000FFFF0000FFFFull;
    v = (v | (v << 8)) & 0x00FF00FF00FF00FFull;
    v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0Full;
    v = (v | (v << 2)) & 0x3333333333333333ull;
    v = (v | (v << 1)) & 0x5555555555555555ull;
    return v;
  };
  return spread(lo) | (spread(hi) << 1);
}

}  // namespace gpudm::backend::cuda::rules_kernels
