#pragma once
// Host/device arithmetic of the streaming forest, shared verbatim by the CPU backends and the
// CUDA kernels (C++17: nvcc compiles it). Everything that decides the shape of a tree is made
// bit-identical on both sides:
//  * counts are integers; information gain is accumulated as a sum of fixed-point x*log2(x)
//    terms (int64), so any summation order (sequential loop, shared-memory reduction, atomics)
//    gives the same value;
//  * logarithms come from one software routine built only from IEEE +,*,/ (det_log2), and on the
//    device the operations go through __d*_rn intrinsics so nvcc cannot contract them into FMAs;
//  * random draws (Poisson weights, attribute subsets) are counter-based hashes of
//    (seed, tree, instance) or of a node key, so they do not depend on visiting order.
#include <cstdint>

#include "algorithms/core/hd.hpp"
#include "algorithms/core/splitmix.hpp"

#if !defined(__CUDACC__)
#include <cmath>
#endif

namespace gpudm::vfdt {

// ---------------------------------------------------------------- deterministic double ops
GPUDM_HD double dmul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
GPUDM_HD double dadd(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
GPUDM_HD double dsub(double a, double b) { return dadd(a, -b); }
GPUDM_HD double ddiv(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
GPUDM_HD double dsqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
GPUDM_HD double dabs(double a) { return a < 0 ? -a : a; }

// Natural logarithm of x > 0 from IEEE-exact operations only: x = m * 2^e with m in
// [sqrt(1/2), sqrt(2)], ln m = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.172, series to s^25
// (truncation error < 1e-19). Same bits on host and device.
GPUDM_HD double det_ln(double x) {
  constexpr double kLn2 = 0.69314718055994530942;
  constexpr double kSqrt2 = 1.41421356237309504880;
  int e = 0;
  // frexp is an exact bit operation on every IEEE platform: x = m * 2^e, m in [0.5, 1).
#if defined(__CUDA_ARCH__)
  x = ::frexp(x, &e);
#else
  x = std::frexp(x, &e);
#endif
  x = dmul(x, 2.0);
  --e;
  if (x > kSqrt2) {
    x = dmul(x, 0.5);
    ++e;
  }
  const double s = ddiv(dsub(x, 1.0), dadd(x, 1.0));
  const double s2 = dmul(s, s);
  // 2 * (s + s^3/3 + ... + s^25/25), Horner from the highest term.
  constexpr double c[13] = {1.0,        1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9,  1.0 / 11, 1.0 / 13,
                            1.0 / 15,   1.0 / 17, 1.0 / 19, 1.0 / 21, 1.0 / 23, 1.0 / 25};
  double p = c[12];
  for (int k = 11; k >= 0; --k) p = dadd(dmul(p, s2), c[k]);
  const double ln_m = dmul(2.0, dmul(s, p));
  return dadd(ln_m, dmul(static_cast<double>(e), kLn2));
}
GPUDM_HD double det_log2(double x) {
  constexpr double kLog2e = 1.44269504088896340736;
  return dmul(det_ln(x), kLog2e);
}

// x*log2(x) in fixed point (scale 2^20), exact integer thereafter. x up to 2^32 keeps the value
// below 2^57.
constexpr int kGainFracBits = 20;
GPUDM_HD std::int64_t xlog2x_fixed(std::uint64_t x) {
  if (x <= 1) return 0;
  const double v = dmul(dmul(static_cast<double>(x), det_log2(static_cast<double>(x))),
                        static_cast<double>(1u << kGainFracBits));
  return static_cast<std::int64_t>(dadd(v, 0.5));  // v > 0: round half up, deterministic
}

// Hoeffding bound sqrt(R^2 ln(1/delta) / (2n)); numer = R^2 ln(1/delta) is computed once.
GPUDM_HD double hoeffding_bound(double numer, double n) { return dsqrt(ddiv(numer, dmul(2.0, n))); }

// Scaled information-gain merit of one attribute: n * gain * 2^20, given its counter block
// cnt[v*C + c] (V values x C classes). Returns -1 when the split is not admissible (fewer than
// two branches with more than 1% of the weight, MOA's minBranchFraction). `n` is the weight the
// block counted; `class_term` = F(n) - sum_c F(n_c) is the same for every attribute of a leaf.
GPUDM_HD std::int64_t gain_merit(const std::uint32_t* cnt, int values, int classes, std::uint64_t n,
                                 std::int64_t class_term) {
  int branches = 0;
  std::int64_t post = 0;  // sum_j F(n_j) - sum_jk F(n_jk)
  for (int v = 0; v < values; ++v) {
    std::uint64_t nj = 0;
    for (int c = 0; c < classes; ++c) {
      const std::uint32_t x = cnt[v * classes + c];
      nj += x;
      post -= xlog2x_fixed(x);
    }
    post += xlog2x_fixed(nj);
    if (nj * 100 > n) ++branches;
  }
  if (branches < 2) return -1;
  const std::int64_t m = class_term - post;
  return m < 0 ? 0 : m;
}
GPUDM_HD double merit_to_gain(std::int64_t merit, std::uint64_t n) {
  return ddiv(ddiv(static_cast<double>(merit), static_cast<double>(1u << kGainFracBits)), static_cast<double>(n));
}

// The two best merits of a leaf's k subset attributes, in attribute order (the first of equal
// merits wins): *best, *second (-1 when absent) and the returned position of the best (-1 when no
// attribute has a merit >= 0). merit(p) is the merit of subset attribute p (gain_merit, or one
// computed earlier); host and device both choose through this one function.
template <class Merit>
GPUDM_HD int best_two_merits(int k, Merit merit, std::int64_t* best, std::int64_t* second) {
  std::int64_t b = -1, s = -1;
  int best_p = -1;
  for (int p = 0; p < k; ++p) {
    const std::int64_t m = merit(p);
    if (m > b) {
      s = b;
      b = m;
      best_p = p;
    } else if (m > s) {
      s = m;
    }
  }
  *best = b;
  *second = s;
  return best_p;
}

// Split rule of the Hoeffding tree: best - second > HB, or HB < tau (tie). Merits scaled by n*2^20
// (n: the weight the leaf's counters hold). n_bound is the n of the bound: n itself (VFDT's "examples
// seen at the leaf") or, with ForestParams::bound_weight "total", n plus the class counts the leaf
// inherited from its parent's branch (MOA's and River's weightSeen).
GPUDM_HD bool should_split(std::int64_t best, std::int64_t second, std::uint64_t n, std::uint64_t n_bound,
                           double hb_numer, double tau) {
  if (best <= 0) return false;
  const double hb = hoeffding_bound(hb_numer, static_cast<double>(n_bound));
  const double diff = merit_to_gain(best - (second > 0 ? second : 0), n);
  return diff > hb || hb < tau;
}

// ---------------------------------------------------------------- counter-based randomness
// Counter-based hash of three words, chained through the SplitMix64 mix (core/splitmix.hpp).
GPUDM_HD std::uint64_t hash3(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return splitmix64_mix(splitmix64_mix(splitmix64_mix(a) ^ b) ^ c);
}
// Uniform integer in [0, n) from a 64-bit hash (multiply-high; bias < n/2^64).
GPUDM_HD std::uint32_t hash_below(std::uint64_t h, std::uint32_t n) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__umul64hi(h, n));
#else
  return static_cast<std::uint32_t>((static_cast<unsigned __int128>(h) * n) >> 64);
#endif
}

// Poisson(1) weight of instance `i` for tree `t` (online bagging), by inversion of the CDF
// on a 53-bit uniform; capped at 12 (P(k > 12) < 2e-10).
GPUDM_HD int poisson1(std::uint64_t seed, std::uint32_t tree, std::uint64_t i) {
  constexpr double kCdf[13] = {
      0.36787944117144233, 0.73575888234288467, 0.91969860292860584, 0.98101184312384615,
      0.99634015317265637, 0.99940581518343931, 0.99991675885190314, 0.99998975080453940,
      0.99999887479861893, 0.99999989856240751, 0.99999999092546066, 0.99999999931210704,
      0.99999999993431085};
  const std::uint64_t h = hash3(seed ^ 0x506F6973736F6E31ull, tree, i);
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
  int k = 0;
  while (k < 12 && u >= kCdf[k]) ++k;
  return k;
}

// Keys identify a leaf independently of the memory layout: root = f(seed, tree, generation),
// child j = f(parent, j). Attribute subsets are drawn from the key.
GPUDM_HD std::uint64_t root_key(std::uint64_t seed, std::uint32_t tree, std::uint32_t generation) {
  return hash3(seed ^ 0x526F6F744B657931ull, tree, generation);
}
GPUDM_HD std::uint64_t child_key(std::uint64_t parent, std::uint32_t j) { return hash3(parent, j + 1, 0x4368696C64ull); }

// k distinct attributes of d drawn from `key`, written in ascending order. k == d gives 0..d-1.
GPUDM_HD void draw_subset(std::uint64_t key, int d, int k, std::int16_t* out) {
  if (k >= d) {
    for (int a = 0; a < d; ++a) out[a] = static_cast<std::int16_t>(a);
    return;
  }
  std::uint64_t counter = 0;
  for (int i = 0; i < k; ++i) {
    for (;;) {
      const auto a = static_cast<std::int16_t>(hash_below(hash3(key, counter++, 0x537562736574ull), static_cast<std::uint32_t>(d)));
      bool dup = false;
      for (int j = 0; j < i; ++j) dup = dup || out[j] == a;
      if (!dup) {
        // insertion keeps the subset sorted
        int j = i;
        while (j > 0 && out[j - 1] > a) {
          out[j] = out[j - 1];
          --j;
        }
        out[j] = a;
        break;
      }
    }
  }
}

// Majority class of a class-count vector (ties and all-zero -> lowest index, as MOA's maxIndex).
// A leaf's whole class count: n of the Hoeffding bound with ForestParams::bound_weight "total".
GPUDM_HD std::uint64_t class_total(const std::uint32_t* counts, int classes) {
  std::uint64_t n = 0;
  for (int c = 0; c < classes; ++c) n += counts[c];
  return n;
}

GPUDM_HD int majority(const std::uint32_t* counts, int classes) {
  int best = 0;
  std::uint32_t bv = counts[0];
  for (int c = 1; c < classes; ++c)
    if (counts[c] > bv) {
      bv = counts[c];
      best = c;
    }
  return best;
}

// majority() and how far ahead it is: *margin = counts[top] - the largest other count (0 on a tie).
// A leaf whose margin exceeds the weight that other classes can still add keeps its majority
// (batch_order "stream" on the GPU: such leaves need no instance-by-instance walk).
GPUDM_HD int majority_margin(const std::uint32_t* counts, int classes, std::uint32_t* margin) {
  const int top = majority(counts, classes);
  std::uint32_t second = 0;
  for (int c = 0; c < classes; ++c)
    if (c != top && counts[c] > second) second = counts[c];
  *margin = counts[top] - second;
  return top;
}

// Naive Bayes vote of a leaf (MOA's LearningNodeNB / NaiveBayes.doNaiveBayesPrediction): class c
// scores ln n_c + sum over the leaf's attributes p of ln P(x_p | c), with
// P(v | c) = (n_pvc + 1) / (n_c' + V_p): Laplace over the attribute's V_p values, n_pvc and
// n_c' = sum_v n_pvc counted since the leaf was created (its counters, cnt[(p*V + v)*C + c]); n_c
// is the leaf's class count (inherited from the parent's branch, as MOA's observed class
// distribution). A class with n_c = 0 or n_c' = 0 gets no vote (MOA: probability 0). If no class has
// a vote (a leaf that has learned nothing yet) the leaf votes its majority class. Highest score
// wins, ties -> the lowest class. det_ln and the d* ops give the same bits on host and device.
GPUDM_HD int naive_bayes_vote(const std::uint32_t* cls, const std::uint32_t* cnt, const std::int16_t* subset,
                              const std::int32_t* attr_values, const std::uint8_t* x, int features, int values,
                              int classes) {
  int best = -1;
  double best_score = 0.0;
  for (int c = 0; c < classes; ++c) {
    if (cls[c] == 0) continue;
    std::uint64_t learned = 0;  // n_c': the same for every attribute of the leaf (each counts every instance)
    for (int v = 0; v < values; ++v) learned += cnt[std::size_t(v) * classes + c];
    if (learned == 0) continue;
    double score = det_ln(static_cast<double>(cls[c]));
    int last_v = -1;  // ln(n_c' + V) is reused while consecutive attributes have the same V
    double ln_den = 0.0;
    for (int p = 0; p < features; ++p) {
      const int a = subset[p];
      const std::uint32_t n = cnt[(std::size_t(p) * values + x[a]) * classes + c];
      if (attr_values[a] != last_v) {
        last_v = attr_values[a];
        ln_den = det_ln(static_cast<double>(learned) + static_cast<double>(last_v));
      }
      score = dadd(score, dsub(det_ln(static_cast<double>(n) + 1.0), ln_den));
    }
    if (best < 0 || score > best_score) {
      best = c;
      best_score = score;
    }
  }
  return best >= 0 ? best : majority(cls, classes);
}

// ---------------------------------------------------------------- ADWIN on a 0/1 stream
// MOA's ADWIN (exponential histogram, M = 5 buckets per row, clock 32, minimum window 10,
// sub-windows > 6, cut when |mu0 - mu1| > sqrt(2 m v dd) + 2/3 dd m with m = 1/(n0-4)+1/(n1-4),
// dd = ln(2 ln W / delta)). Inputs are 0/1 errors, so bucket totals are integers and the window
// variance is computed in closed form p(1-p) (equal, in exact arithmetic, to MOA's incrementally
// maintained VARIANCE/W). A check asks whether *any* boundary cuts, which is what MOA's rescan
// loop computes; it therefore parallelises over boundaries without changing the result.
struct Adwin {
  static constexpr int kM = 5;        // MAXBUCKETS
  static constexpr int kRows = 40;    // supports windows far beyond 2^32
  static constexpr int kClock = 32;
  static constexpr int kMinWindow = 10;  // mintMinimLongitudWindow
  static constexpr int kMinSub = 5;      // mintMinWinLength
  std::uint32_t total[kRows][kM + 1];    // ones in each bucket, oldest first within a row
  std::uint8_t count[kRows];
  std::int32_t rows;
  std::uint64_t width, ones, time;
};

GPUDM_HD void adwin_init(Adwin& a) {
  for (int r = 0; r < Adwin::kRows; ++r) a.count[r] = 0;
  a.rows = 0;
  a.width = a.ones = a.time = 0;
}

GPUDM_HD void adwin_insert(Adwin& a, std::uint32_t x) {
  a.width += 1;
  a.ones += x;
  if (a.rows == 0) a.rows = 1;
  a.total[0][a.count[0]++] = x;
  for (int r = 0; r < Adwin::kRows - 1; ++r) {
    if (a.count[r] <= Adwin::kM) break;
    const std::uint32_t merged = a.total[r][0] + a.total[r][1];
    for (int k = 2; k < a.count[r]; ++k) a.total[r][k - 2] = a.total[r][k];
    a.count[r] -= 2;
    a.total[r + 1][a.count[r + 1]++] = merged;
    if (r + 1 >= a.rows) a.rows = r + 2;
  }
}

// Block insertion of k inputs, equal to k calls of adwin_insert. Each row is a FIFO of buckets
// (oldest first); appends go to its end, and whenever it holds M+1 buckets its two oldest merge
// into one bucket appended to the next row. So after the block, row r's queue (its buckets, then
// the k_r arriving ones) has lost its first 2*m_r entries, merged pairwise in order into the
// m_r buckets arriving at row r+1, with m_r = adwin_block_merges(count_r, k_r).
GPUDM_HD int adwin_block_merges(int have, int incoming) {
  const int q = have + incoming;
  return q >= Adwin::kM + 1 ? (q - (Adwin::kM + 1)) / 2 + 1 : 0;
}
// xs: k <= 64 inputs in stream order. Scalar reference of the warp version in the CUDA kernel.
GPUDM_HD void adwin_insert_block(Adwin& a, const std::uint32_t* xs, int k) {
  std::uint32_t inc[64], out[32];
  for (int i = 0; i < k; ++i) {
    inc[i] = xs[i];
    a.ones += xs[i];
  }
  a.width += static_cast<std::uint64_t>(k);
  if (k > 0 && a.rows == 0) a.rows = 1;
  int kin = k;
  for (int r = 0; r < Adwin::kRows && kin > 0; ++r) {
    const int have = a.count[r], q = have + kin;
    const int m = adwin_block_merges(have, kin);
    auto queue = [&](int i) { return i < have ? a.total[r][i] : inc[i - have]; };
    for (int i = 0; i < m; ++i) out[i] = queue(2 * i) + queue(2 * i + 1);
    std::uint32_t keep[Adwin::kM + 1];
    const int left = q - 2 * m;
    for (int i = 0; i < left; ++i) keep[i] = queue(2 * m + i);
    for (int i = 0; i < left; ++i) a.total[r][i] = keep[i];
    a.count[r] = static_cast<std::uint8_t>(left);
    for (int i = 0; i < m; ++i) inc[i] = out[i];
    kin = m;
    if (m > 0 && r + 1 >= a.rows) a.rows = r + 2;
  }
}

GPUDM_HD int adwin_buckets(const Adwin& a) {
  int nb = 0;
  for (int r = 0; r < a.rows; ++r) nb += a.count[r];
  return nb;
}

// Constants of one check (they depend on the window only, not on the boundary).
struct AdwinCheck {
  double v;   // window variance of the 0/1 inputs, p(1-p)
  double dd;  // ln(2 ln W / delta)
  // Division-free necessary conditions of a cut (see adwin_cut_test), with a 1e-9 margin.
  double t1, t2;
};
GPUDM_HD AdwinCheck adwin_check_constants(std::uint64_t width, std::uint64_t ones, double delta) {
  const double w = static_cast<double>(width);
  const double pm = ddiv(static_cast<double>(ones), w);
  AdwinCheck k;
  k.v = dmul(pm, dsub(1.0, pm));
  k.dd = det_ln(ddiv(dmul(2.0, det_ln(w)), delta));
  constexpr double kSlack = 1.0 - 1e-9;
  k.t1 = dmul(dmul(dmul(2.0 / 3.0, k.dd), w), kSlack);
  k.t2 = dmul(dmul(dmul(dmul(2.0, k.v), k.dd), w), kSlack);
  return k;
}
GPUDM_HD AdwinCheck adwin_check_constants(const Adwin& a, double delta) {
  return adwin_check_constants(a.width, a.ones, delta);
}

// The cut test at a boundary with the older sub-window holding n0 inputs of which u0 ones.
// Pre-filter: with D = |u0 n1 - u1 n0| (exact integers), mu0 - mu1 = D / (n0 n1), and since
// m = 1/(n0-4) + 1/(n1-4) > W / (n0 n1) by a factor >= 1 + 4/W, a cut needs
// D > 2/3 dd W and D^2 > 2 v dd W n0 n1. Rejecting on these (with a 1e-9 margin, far above the
// 1e-15 rounding of the full test) never rejects a cut the full test would accept, so results
// are unchanged; most boundaries then cost two multiplications. Valid for windows < 2^31.
GPUDM_HD bool adwin_cut_test(std::uint64_t width, std::uint64_t ones, const AdwinCheck& k, std::uint64_t n0,
                             std::uint64_t u0) {
  const std::uint64_t n1 = width - n0, u1 = ones - u0;
  if (!(n0 > Adwin::kMinSub + 1 && n1 > Adwin::kMinSub + 1)) return false;
  const std::uint64_t p = u0 * n1, q = u1 * n0;
  const double dD = static_cast<double>(p > q ? p - q : q - p);
  if (dD <= k.t1) return false;
  if (dmul(dD, dD) <= dmul(dmul(k.t2, static_cast<double>(n0)), static_cast<double>(n1))) return false;
  const double m = dadd(ddiv(1.0, static_cast<double>(n0 - Adwin::kMinSub + 1)),
                        ddiv(1.0, static_cast<double>(n1 - Adwin::kMinSub + 1)));
  const double eps = dadd(dsqrt(dmul(dmul(dmul(2.0, m), k.v), k.dd)), dmul(dmul(2.0 / 3.0, k.dd), m));
  const double diff = dsub(ddiv(static_cast<double>(u0), static_cast<double>(n0)),
                           ddiv(static_cast<double>(u1), static_cast<double>(n1)));
  return dabs(diff) > eps;
}
GPUDM_HD bool adwin_cut_test(const Adwin& a, const AdwinCheck& k, std::uint64_t n0, std::uint64_t u0) {
  return adwin_cut_test(a.width, a.ones, k, n0, u0);
}

// Necessary condition of a cut with a lower bound dd_lo <= dd (e.g. dd of a smaller window):
// the thresholds only shrink, so a boundary the exact test cuts always passes. Lets a check skip
// the two logarithms when no boundary can cut (the usual case).
GPUDM_HD bool adwin_may_cut(std::uint64_t width, std::uint64_t ones, double v, double dd_lo, std::uint64_t n0,
                            std::uint64_t u0) {
  const std::uint64_t n1 = width - n0, u1 = ones - u0;
  if (!(n0 > Adwin::kMinSub + 1 && n1 > Adwin::kMinSub + 1)) return false;
  constexpr double kSlack = 1.0 - 1e-9;
  const double w = static_cast<double>(width);
  const double t1 = dmul(dmul(dmul(2.0 / 3.0, dd_lo), w), kSlack);
  const double t2 = dmul(dmul(dmul(dmul(2.0, v), dd_lo), w), kSlack);
  const std::uint64_t p = u0 * n1, q = u1 * n0;
  const double dD = static_cast<double>(p > q ? p - q : q - p);
  return dD > t1 && dmul(dD, dD) > dmul(dmul(t2, static_cast<double>(n0)), static_cast<double>(n1));
}
GPUDM_HD bool adwin_may_cut(const Adwin& a, double v, double dd_lo, std::uint64_t n0, std::uint64_t u0) {
  return adwin_may_cut(a.width, a.ones, v, dd_lo, n0, u0);
}
GPUDM_HD double adwin_variance(std::uint64_t width, std::uint64_t ones) {
  const double pm = ddiv(static_cast<double>(ones), static_cast<double>(width));
  return dmul(pm, dsub(1.0, pm));
}
GPUDM_HD double adwin_variance(const Adwin& a) { return adwin_variance(a.width, a.ones); }

// Does the boundary after bucket p (p = 0 is the oldest bucket) cut the window? The boundary
// after the newest bucket is never tested (MOA exits before it). O(buckets): used by the
// warp-parallel check, where each lane owns a few boundaries.
GPUDM_HD bool adwin_boundary_cuts(const Adwin& a, const AdwinCheck& k, int p) {
  std::uint64_t n0 = 0, u0 = 0;
  int q = 0;
  bool reached = false;
  for (int r = a.rows - 1; r >= 0 && !reached; --r) {
    for (int i = 0; i < a.count[r] && !reached; ++i, ++q) {
      n0 += std::uint64_t(1) << r;
      u0 += a.total[r][i];
      reached = q == p;
    }
  }
  if (!reached || n0 >= a.width) return false;
  return adwin_cut_test(a, k, n0, u0);
}

// Sequential scan over all boundaries, oldest first, with running sums (same tests, same bits).
GPUDM_HD bool adwin_any_cut(const Adwin& a, double delta) {
  const AdwinCheck k = adwin_check_constants(a, delta);
  std::uint64_t n0 = 0, u0 = 0;
  for (int r = a.rows - 1; r >= 0; --r) {
    for (int i = 0; i < a.count[r]; ++i) {
      n0 += std::uint64_t(1) << r;
      u0 += a.total[r][i];
      if (n0 >= a.width) return false;
      if (adwin_cut_test(a, k, n0, u0)) return true;
    }
  }
  return false;
}

GPUDM_HD void adwin_delete_oldest(Adwin& a) {
  const int r = a.rows - 1;
  a.width -= std::uint64_t(1) << r;
  a.ones -= a.total[r][0];
  for (int k = 1; k < a.count[r]; ++k) a.total[r][k - 1] = a.total[r][k];
  a.count[r] -= 1;
  if (a.count[r] == 0) a.rows -= 1;
}

GPUDM_HD bool adwin_check_due(const Adwin& a) {
  return a.time % Adwin::kClock == 0 && a.width > static_cast<std::uint64_t>(Adwin::kMinWindow);
}

// Does a cut of the window signal drift? MOA's ADWINChangeDetector (reset_rule "rise", the
// default): only when the error estimate went up, exactly ones/width > ones_before/w_before.
// River's ARF (reset_rule "any"): on every cut, also when the error fell.
GPUDM_HD bool adwin_signals(bool on_any_cut, std::uint64_t w_before, std::uint64_t ones_before, std::uint64_t width,
                            std::uint64_t ones) {
  if (on_any_cut) return true;
  if (w_before == 0) return ones > 0;
  return ones * w_before > ones_before * width;
}

// ADWINChangeDetector.input: insert, check every 32 inputs, report a change when the window was
// cut and adwin_signals says so. Sequential reference of the check.
GPUDM_HD bool adwin_update(Adwin& a, std::uint32_t x, double delta, bool on_any_cut = false) {
  const std::uint64_t w_before = a.width, ones_before = a.ones;
  a.time += 1;
  adwin_insert(a, x);
  bool cut = false;
  if (adwin_check_due(a)) {
    for (;;) {
      if (!adwin_any_cut(a, delta)) break;
      cut = true;
      if (a.width == 0) break;
      adwin_delete_oldest(a);
    }
  }
  if (!cut) return false;
  return adwin_signals(on_any_cut, w_before, ones_before, a.width, a.ones);
}


// ---- ADWIN over a prefix-sum history (the CUDA "prefix" kernel's state; same decisions) ----
// Every bucket of ADWIN's exponential histogram covers a contiguous run of inputs (2^r of them in
// row r), oldest buckets in the highest row, so the bucket totals are differences of the running
// count of ones P over the inputs: a bucket [a, b) holds P[b] - P[a] ones. With P kept for the
// whole stream (P[i] = ones among the tree's inputs at stream positions < i), the state reduces
// to the bucket counts per row and the window's first position; and the counts after k more
// inputs depend on k only (adwin_block_merges, row by row). So every clock tick of a mini-batch
// can be tested independently of the others as long as none of the earlier ones cut: the CUDA
// kernel tests all ticks of a batch at once and replays from the first one that cuts. The
// decisions are those of adwin_update input by input (tests/vfdt/test_adwin.cpp checks it).
struct AdwinPrefix {
  static constexpr int kRows = 32;  // windows < 2^32 inputs (positions are 32-bit)
  std::uint8_t count[kRows];        // buckets per row
  std::int32_t rows;
  std::uint32_t start;  // stream position of the window's oldest input (valid when width > 0)
  std::uint32_t width;
  std::uint32_t time;   // inputs since creation (a check is due when time % 32 == 0)
};

GPUDM_HD void adwinp_init(AdwinPrefix& a) {
  for (int r = 0; r < AdwinPrefix::kRows; ++r) a.count[r] = 0;
  a.rows = 0;
  a.start = 0;
  a.width = 0;
  a.time = 0;
}

// k more inputs, the first at stream position pos (counts only: the totals live in P).
GPUDM_HD void adwinp_insert(AdwinPrefix& a, std::uint32_t pos, std::uint32_t k) {
  if (k == 0) return;
  if (a.width == 0) a.start = pos;
  a.width += k;
  a.time += k;
  if (a.rows == 0) a.rows = 1;
  std::uint32_t kin = k;
  for (int r = 0; r < AdwinPrefix::kRows && kin > 0; ++r) {
    const int have = a.count[r];
    const std::uint32_t q = static_cast<std::uint32_t>(have) + kin;
    const std::uint32_t m = q >= Adwin::kM + 1 ? (q - (Adwin::kM + 1)) / 2 + 1 : 0;
    a.count[r] = static_cast<std::uint8_t>(q - 2 * m);
    if (m > 0 && r + 1 >= a.rows) a.rows = r + 2;
    kin = m;
  }
}

GPUDM_HD bool adwinp_check_due(const AdwinPrefix& a) {
  return a.time % Adwin::kClock == 0 && a.width > static_cast<std::uint32_t>(Adwin::kMinWindow);
}

GPUDM_HD std::uint64_t adwinp_ones(const AdwinPrefix& a, const std::uint32_t* P) {
  return a.width == 0 ? 0 : static_cast<std::uint64_t>(P[a.start + a.width] - P[a.start]);
}

// Sequential scan of every boundary, oldest first (reference of the warp version).
GPUDM_HD bool adwinp_any_cut(const AdwinPrefix& a, const std::uint32_t* P, double delta) {
  if (a.width == 0) return false;
  const std::uint64_t ones = adwinp_ones(a, P);
  const AdwinCheck k = adwin_check_constants(a.width, ones, delta);
  std::uint64_t n0 = 0;
  for (int r = a.rows - 1; r >= 0; --r) {
    for (int i = 0; i < a.count[r]; ++i) {
      n0 += std::uint64_t(1) << r;
      if (n0 >= a.width) return false;
      const std::uint64_t u0 = P[a.start + n0] - P[a.start];
      if (adwin_cut_test(a.width, ones, k, n0, u0)) return true;
    }
  }
  return false;
}

GPUDM_HD void adwinp_delete_oldest(AdwinPrefix& a) {
  const int r = a.rows - 1;
  a.start += std::uint32_t(1) << r;
  a.width -= std::uint32_t(1) << r;
  a.count[r] -= 1;
  if (a.count[r] == 0) a.rows -= 1;
}

// adwin_update for the input at stream position pos (P[pos + 1] already includes it).
GPUDM_HD bool adwinp_update(AdwinPrefix& a, std::uint32_t pos, const std::uint32_t* P, double delta,
                            bool on_any_cut = false) {
  const std::uint64_t w_before = a.width, ones_before = adwinp_ones(a, P);
  adwinp_insert(a, pos, 1);
  bool cut = false;
  if (adwinp_check_due(a)) {
    while (a.width > 0 && adwinp_any_cut(a, P, delta)) {
      cut = true;
      adwinp_delete_oldest(a);
    }
  }
  if (!cut) return false;
  return adwin_signals(on_any_cut, w_before, ones_before, a.width, adwinp_ones(a, P));
}

}  // namespace gpudm::vfdt
