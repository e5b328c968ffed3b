#pragma once
// The ranked fp16 layout of a dataset: every value of a column is replaced by the code of its
// rank among the column's distinct values, code(i) = 0x0400 + i as fp16 bits (the i-th positive
// normal half, so codes order and compare exactly like the values they stand for); missing
// values are NaN. Any column with at most kMaxRanks distinct values qualifies (KDDcup's largest
// has 10,725), not only data that fp16 holds exactly. The CUDA fast path keeps two rows per
// 32-bit word (one HSET2 compares two rows) and rewrites every comparison's threshold to codes
// (rank_comparison) so each packed comparison gives the answer of rules::compare on the original
// floats:
//   x >= a  <=> rank >= lb(a)        x > a  <=> rank >= ub(a)
//   x <= a  <=> rank <= ub(a) - 1    x < a  <=> rank <= lb(a) - 1
//   x == a  <=> rank == lb(a) when a is one of the values (else never)
//   x != a  <=> rank != lb(a) when a is one of the values (else: not missing, i.e. <= +inf)
//   IN  [lo, hi] <=> lb(lo) <= rank <= ub(hi) - 1
//   OUT [lo, hi] <=> rank <= lb(lo) - 1 || rank >= ub(hi)
// with lb(a) = the first rank whose value is >= a, ub(a) = the first whose value is > a; a bound
// that does not exist (rank -1, rank n) is NaN, which compares false. Host/device (C++17).
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/hd.hpp"
#include "algorithms/rules/opcodes.hpp"

namespace gpudm::rules {

inline constexpr std::uint16_t kRankBase = 0x0400;    // the smallest positive normal fp16
inline constexpr std::uint32_t kMaxRanks = 0x7C00 - 0x0400;  // 30,720 normal positive halves
inline constexpr std::uint16_t kRankNaN = 0x7E00;     // missing values, "never" bounds
inline constexpr std::uint16_t kRankPosInf = 0x7C00;  // above every code

GPUDM_HD std::uint16_t rank_code(std::uint32_t rank) { return static_cast<std::uint16_t>(kRankBase + rank); }

// First index in the sorted distinct values v[0, n) whose value is >= a (lower) or > a (upper).
GPUDM_HD std::uint32_t rank_lower(const float* v, std::uint32_t n, float a) {
  std::uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (v[mid] < a) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
GPUDM_HD std::uint32_t rank_upper(const float* v, std::uint32_t n, float a) {
  std::uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (v[mid] <= a) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// A comparison in the packed form: op one of kGe, kLe, kEq, kNe, kIn (a <= x <= b),
// kOut (x <= a || x >= b); bounds are codes or kRankNaN.
struct RankedComparison {
  std::uint32_t op;
  std::uint16_t a, b;
};

GPUDM_HD RankedComparison rank_comparison(std::uint32_t op, float a, float b, const float* v, std::uint32_t n) {
  const auto at = [](std::uint32_t r) { return rank_code(r); };
  RankedComparison c{op, kRankNaN, kRankNaN};
  switch (op) {
    case kGe: {
      const std::uint32_t r = rank_lower(v, n, a);
      c.a = r < n ? at(r) : kRankNaN;
      break;
    }
    case kGt: {
      const std::uint32_t r = rank_upper(v, n, a);
      c.op = kGe;
      c.a = r < n ? at(r) : kRankNaN;
      break;
    }
    case kLe: {
      const std::uint32_t r = rank_upper(v, n, a);
      c.a = r > 0 ? at(r - 1) : kRankNaN;
      break;
    }
    case kLt: {
      const std::uint32_t r = rank_lower(v, n, a);
      c.op = kLe;
      c.a = r > 0 ? at(r - 1) : kRankNaN;
      break;
    }
    case kEq: {
      const std::uint32_t r = rank_lower(v, n, a);
      c.a = r < n && v[r] == a ? at(r) : kRankNaN;
      break;
    }
    case kNe: {
      const std::uint32_t r = rank_lower(v, n, a);
      if (r < n && v[r] == a) c.a = at(r);
      else {
        c.op = kLe;
        c.a = kRankPosInf;
      }
      break;
    }
    case kIn: {
      const std::uint32_t lo = rank_lower(v, n, a), hi = rank_upper(v, n, b);
      c.a = lo < n ? at(lo) : kRankNaN;
      c.b = hi > 0 ? at(hi - 1) : kRankNaN;
      break;
    }
    default: {  // kOut
      const std::uint32_t lo = rank_lower(v, n, a), hi = rank_upper(v, n, b);
      c.a = lo > 0 ? at(lo - 1) : kRankNaN;
      c.b = hi < n ? at(hi) : kRankNaN;
      break;
    }
  }
  return c;
}

// What one packed comparison answers for a code x (HSET2 semantics on ordered positive halves:
// codes compare like integers; NaN, a code above kRankPosInf, compares false). The tests check
// rank_comparison + this against rules::compare on the original values.
GPUDM_HD bool ranked_compare(const RankedComparison& c, std::uint16_t x) {
  const auto nan = [](std::uint16_t h) { return h > kRankPosInf; };
  const auto ge = [&](std::uint16_t p, std::uint16_t q) { return !nan(p) && !nan(q) && p >= q; };
  const auto le = [&](std::uint16_t p, std::uint16_t q) { return !nan(p) && !nan(q) && p <= q; };
  switch (c.op) {
    case kGe: return ge(x, c.a);
    case kLe: return le(x, c.a);
    case kEq: return !nan(x) && !nan(c.a) && x == c.a;
    case kNe: return !nan(x) && !nan(c.a) && x != c.a;
    case kIn: return ge(x, c.a) && le(x, c.b);
    default: return le(x, c.a) || ge(x, c.b);
  }
}

// The ranked layout of a dataset (host): per column the sorted distinct values (values[begin[c],
// begin[c + 1]), NaN excluded; -0 and +0 are one value) and the codes of every cell, column-major
// with padded_rows halves per column (padding 0). Empty `codes` and the reason when a column has
// more than kMaxRanks distinct values.
struct RankedColumns {
  std::vector<float> values;
  std::vector<std::uint32_t> begin;  // cols + 1
  std::vector<std::uint16_t> codes;
  std::string reason;  // why not, when codes is empty
};
RankedColumns rank_columns(const Dataset& d);

}  // namespace gpudm::rules
