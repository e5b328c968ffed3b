#pragma once
// Leaf sufficient statistics and everything about them that the host and the CUDA kernels must
// compute the same way (GPUDM_HD, C++17: CUDA code includes it), for the fused statistics pass.
//
// Keys. Dipole rows are integer reductions (order-independent, so exact under atomics):
//   lo_key / hi_key: target order in the high 32 bits, the row in the low 32 bits (ties go to the
//   lower row); the lowest-target row is the minimum lo_key, the highest-target row the maximum
//   hi_key.
//   dipole_key: a hash of (salt, row) in the high 32 bits and the row in the low 32 bits; the row
//   of minimum key is a uniformly drawn row (tree.hpp).
// Rows are < 2^32 - 1 (evaluators check it at prepare).
//
// Statistics of a leaf whose model has k attributes a_1 < ... < a_k: with the leaf's shift row K
// (its first row) and v = [x_a1 - x_a1(K), ..., x_ak - x_ak(K), y - y(K)] (kv = k + 1 values) and
// u = [1, v], the sums of u_i u_j over the leaf's rows for i <= j except (0, 0) (that is the row
// count n, kept as an integer), packed row by row: (0,1) ... (0,kv), (1,1) ... (1,kv), (2,2) ...
// Shifting by a row of the leaf makes a column that is constant in the leaf exactly zero and keeps
// the sums small; partial sums with different shifts combine exactly in their algebra
// (shift_stats).
#include <cmath>
#include <cstdint>

#include "algorithms/core/hd.hpp"
#include "algorithms/core/splitmix.hpp"

namespace gpudm {
namespace gmt {
namespace leafstats {

inline constexpr std::uint64_t kNoLoKey = ~0ull;  // the identity of min(lo_key) and min(dipole_key)
inline constexpr std::uint64_t kNoHiKey = 0ull;   // the identity of max(hi_key)
inline constexpr std::uint64_t kRowMask = 0xFFFFFFFFull;

// The salt's 32-bit word for dipole_key_s (once per tree and evaluation).
GPUDM_HD constexpr std::uint32_t dipole_salt32(std::uint64_t salt) { return static_cast<std::uint32_t>(splitmix64_mix(salt) >> 32); }
// The key of `row` under a salt word s: fmix32(row x golden ratio xor s) above the row. For one
// salt a bijection of the rows (two 32-bit multiplies a row; SplitMix64 on (salt, row) measured 16 %
// of the GPU stats pass's instructions on Armchair 1M).
GPUDM_HD constexpr std::uint64_t dipole_key_s(std::uint32_t s, std::uint64_t row) {
  const std::uint32_t h = fmix32((static_cast<std::uint32_t>(row) * 0x9E3779B1u) ^ s);
  return (static_cast<std::uint64_t>(h) << 32) | (row & kRowMask);
}
GPUDM_HD constexpr std::uint64_t dipole_key(std::uint64_t salt, std::uint64_t row) { return dipole_key_s(dipole_salt32(salt), row); }
// Unsigned order equal to the float order (-0 counts as +0, as == does; no NaN targets reach an
// evaluator). The host and the device must agree on it (the GPU finish propagates the device's keys):
// the CUDA code is built without -ftz / --use_fast_math, which would make a denormal compare equal to 0.
GPUDM_HD std::uint32_t float_order(float y) {
  if (y == 0.0f) y = 0.0f;
  std::uint32_t b;
  static_assert(sizeof b == sizeof y, "float is 32 bits");
#if defined(__CUDA_ARCH__)
  b = __float_as_uint(y);
#else
  __builtin_memcpy(&b, &y, sizeof b);
#endif
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
GPUDM_HD std::uint64_t lo_key(float y, std::uint64_t row) {
  return (static_cast<std::uint64_t>(float_order(y)) << 32) | (row & kRowMask);
}
GPUDM_HD std::uint64_t hi_key(float y, std::uint64_t row) {
  return (static_cast<std::uint64_t>(float_order(y)) << 32) | (kRowMask - (row & kRowMask));
}
GPUDM_HD std::int64_t lo_row(std::uint64_t key) { return key == kNoLoKey ? -1 : static_cast<std::int64_t>(key & kRowMask); }
GPUDM_HD std::int64_t hi_row(std::uint64_t key) {
  return key == kNoHiKey ? -1 : static_cast<std::int64_t>(kRowMask - (key & kRowMask));
}
GPUDM_HD std::int64_t rand_row(std::uint64_t key) { return lo_row(key); }

// ---- statistics layout ---------------------------------------------------------------------
GPUDM_HD int n_stats(int kv) { return (kv + 1) * (kv + 2) / 2 - 1; }
// Packed position of (i, j), 0 <= i <= j <= kv, (i, j) != (0, 0).
GPUDM_HD int stat_index(int i, int j, int kv) { return i * (kv + 1) - i * (i - 1) / 2 + (j - i) - 1; }

// Adds one row's shifted values v[0..kv) to the packed sums s.
GPUDM_HD void add_row(double* s, const double* v, int kv) {
  int p = 0;
  for (int j = 0; j < kv; ++j) s[p++] += v[j];
  for (int i = 0; i < kv; ++i)
    for (int j = i; j < kv; ++j) s[p++] += v[i] * v[j];
}

// Re-expresses sums taken with one shift in another: d = old shift - new shift (per value), n rows.
// sum(w + d) = S1 + n d; sum((w + d)(w + d)^T) = S2 + d S1^T + S1 d^T + n d d^T.
GPUDM_HD void shift_stats(double* s, const double* d, long long n, int kv) {
  const double nn = static_cast<double>(n);
  for (int i = 0; i < kv; ++i)
    for (int j = i; j < kv; ++j) {
      const double si = s[stat_index(0, i + 1, kv)], sj = s[stat_index(0, j + 1, kv)];
      s[stat_index(i + 1, j + 1, kv)] += d[i] * sj + d[j] * si + nn * d[i] * d[j];
    }
  for (int j = 0; j < kv; ++j) s[stat_index(0, j + 1, kv)] += nn * d[j];
}

// ---- the solve -------------------------------------------------------------------------------
// The leaf rule (EvalOptions::rows_per_param r > 0): a leaf of n rows keeps fewer than n / r
// model parameters, the intercept included, and at least the intercept: ceil(n / r) - 1. At r = 1
// this is the GMT papers' rule (a leaf has more rows than its model has parameters). r <= 0: only
// the rows limit the parameters, so a leaf of 5 rows can fit 5 parameters exactly.
GPUDM_HD long long max_leaf_params(long long n, double rows_per_param) {
  const long long none = 0x7FFFFFFFFFFFFFFFll;
  if (rows_per_param <= 0) return none;
  const double mp = ceil(static_cast<double>(n) / rows_per_param) - 1.0;
  if (mp < 1.0) return 1;
  return mp >= 9.0e18 ? none : static_cast<long long>(mp);
}

struct SolveParams {
  double rank_tol = 1e-9;      // the CPU's rank rule (EvalOptions::rank_tol)
  double pivot_guard = 1e-6;   // EvalOptions::fast_pivot_guard
  double rows_per_param = 0;   // EvalOptions::rows_per_param
};
enum SolveFlag : int { kSolved = 0, kAmbiguous = 1 };
struct SolveOut {
  int rank = 0;   // columns kept, intercept included
  int flag = kSolved;
  double sse = 0;
};

// Work space of solve_stats: kv * kv doubles and k ints.
GPUDM_HD int solve_work_doubles(int kv) { return kv * kv; }

// Least squares of y on [1, x_a1 .. x_ak] from the statistics (shift values `shift`: the attributes'
// then y's value at the shift row), with the CPU's rank rule (eval_steps.cpp
// least_squares_rank_rule: columns in order, the intercept first; a column is dropped when the
// rows are used up, when max_params are kept, or when its remaining norm is <= rank_tol x its raw
// norm). The remaining norm^2 of a column is the pivot of the centred Gram's Cholesky in column
// order. Pivots the Gram cannot decide are flagged ambiguous (the caller solves the leaf again with
// the exact QR solver): a pivot <= pivot_guard x the column's centred norm^2 (cond(X) >~ 1e3 in that
// column, where the Gram's rounding reaches 1e-10 of the pivot), within 100x of the rank rule's
// threshold, or a centred norm lost to cancellation. A column whose centred sums are exactly zero
// (constant in the leaf) is dropped, as the CPU's rule drops it. coef: k + 1 values (intercept,
// then per attribute; 0 for dropped columns). SSE = C_yy - |L^-1 C_Sy|^2 (clamped at 0).
GPUDM_HD SolveOut solve_stats(int k, long long n, const double* s, const double* shift, const SolveParams& p,
                              double* work, int* kept, double* coef) {
  SolveOut o;
  const int kv = k + 1;
  for (int j = 0; j <= k; ++j) coef[j] = 0.0;
  if (n <= 0) return o;
  const double nn = static_cast<double>(n);
  const long long max_params = max_leaf_params(n, p.rows_per_param);
  // Centred Gram C (kv x kv, row-major, full) of [x_a1 .. x_ak, y].
  double* c = work;
  for (int i = 0; i < kv; ++i)
    for (int j = i; j < kv; ++j) {
      const double v = s[stat_index(i + 1, j + 1, kv)] - s[stat_index(0, i + 1, kv)] * s[stat_index(0, j + 1, kv)] / nn;
      c[i * kv + j] = v;
      c[j * kv + i] = v;
    }
  o.rank = 1;  // the intercept: n > 0 rows, max_params >= 1
  int nk = 0;  // kept attributes; their Cholesky factor L is stored in c's lower triangle rows kept[]
  for (int j = 0; j < k; ++j) {
    if (static_cast<long long>(o.rank) >= n || static_cast<long long>(o.rank) >= max_params) continue;  // dropped
    const double sjj = s[stat_index(j + 1, j + 1, kv)];
    const double cjj = c[j * kv + j];
    if (sjj == 0.0 && s[stat_index(0, j + 1, kv)] == 0.0) continue;  // constant in the leaf: dropped
    // l_t = (C_j,kept[t] - sum_{u<t} l_u L_kept[t],u) / L_kept[t],kept[t]; stored in row j of c's
    // lower part at column kept[t] (row j's entries left of the diagonal are not read again).
    double rem = cjj;
    for (int t = 0; t < nk; ++t) {
      const int q = kept[t];
      double v = c[j * kv + q];
      for (int u = 0; u < t; ++u) v -= c[j * kv + kept[u]] * c[q * kv + kept[u]];
      v /= c[q * kv + q];
      c[j * kv + q] = v;
      rem -= v * v;
    }
    const double raw = sjj + 2.0 * shift[j] * s[stat_index(0, j + 1, kv)] + nn * shift[j] * shift[j];
    const double tol2 = p.rank_tol * p.rank_tol;
    if (!(cjj > 1e-9 * sjj) || !(rem > p.pivot_guard * cjj) || !(rem > 1e4 * tol2 * raw)) {
      o.flag = kAmbiguous;
      return o;
    }
    c[j * kv + j] = sqrt(rem);
    kept[nk++] = j;
    ++o.rank;
  }
  // z = L^-1 C_kept,y; then L^T b = z.
  const int y = k;
  double zz = 0.0;
  for (int t = 0; t < nk; ++t) {
    const int q = kept[t];
    double v = c[y * kv + q];
    for (int u = 0; u < t; ++u) v -= c[y * kv + kept[u]] * c[q * kv + kept[u]];
    v /= c[q * kv + q];
    c[y * kv + q] = v;  // z_t
    zz += v * v;
  }
  for (int t = nk - 1; t >= 0; --t) {
    const int q = kept[t];
    double v = c[y * kv + q];
    for (int u = t + 1; u < nk; ++u) v -= c[kept[u] * kv + q] * coef[1 + kept[u]];
    coef[1 + q] = v / c[q * kv + q];
  }
  const double sse = c[y * kv + y] - zz;
  o.sse = sse > 0.0 ? sse : 0.0;
  double c0 = shift[k] + s[stat_index(0, kv, kv)] / nn;
  for (int t = 0; t < nk; ++t) {
    const int q = kept[t];
    c0 -= coef[1 + q] * (shift[q] + s[stat_index(0, q + 1, kv)] / nn);
  }
  coef[0] = c0;
  return o;
}

// SSE of a leaf with given coefficients (intercept first) from its statistics: the residual
// r = y - c0 - sum c_j x_j = (y - yK) - sum c_j (x_j - xK_j) + e0 with e0 = yK - c0 - sum c_j xK_j:
// sum r^2 = sum (w . g)^2 + 2 e0 sum (w . g) + n e0^2, g = [-c_1 .. -c_k, 1].
GPUDM_HD double sse_with_coef(int k, long long n, const double* s, const double* shift, const double* coef) {
  if (n <= 0) return 0.0;
  const int kv = k + 1;
  double e0 = shift[k] - coef[0];
  for (int j = 0; j < k; ++j) e0 -= coef[1 + j] * shift[j];
  double lin = 0.0, quad = 0.0;
  for (int i = 0; i < kv; ++i) {
    const double gi = i < k ? -coef[1 + i] : 1.0;
    lin += gi * s[stat_index(0, i + 1, kv)];
    for (int j = i; j < kv; ++j) {
      const double gj = j < k ? -coef[1 + j] : 1.0;
      quad += (i == j ? 1.0 : 2.0) * gi * gj * s[stat_index(i + 1, j + 1, kv)];
    }
  }
  const double v = quad + 2.0 * e0 * lin + static_cast<double>(n) * e0 * e0;
  return v > 0.0 ? v : 0.0;
}

}  // namespace leafstats
}  // namespace gmt
}  // namespace gpudm
