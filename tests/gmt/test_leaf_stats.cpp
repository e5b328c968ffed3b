// The leaf sufficient statistics the host and the CUDA kernels share (algorithms/gmt/leaf_stats.hpp):
// the packed layout, partial sums taken with different shifts merged by shift_stats, the solve from
// statistics against the exact QR rank rule (eval_steps.cpp least_squares_rank_rule), and the SSE of
// given coefficients from the statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "algorithms/core/rng.hpp"
#include "algorithms/gmt/eval_steps.hpp"
#include "algorithms/gmt/leaf_stats.hpp"

using namespace gpudm;
using namespace gpudm::gmt;
namespace ls = gpudm::gmt::leafstats;

namespace {

// A leaf: n rows of k attribute values (as the evaluators read them: floats widened to double) and y.
struct Leaf {
  int k = 0;
  std::vector<std::vector<double>> x;  // [row][attribute]
  std::vector<double> y;
  long long n() const { return static_cast<long long>(y.size()); }
};

// Values of row r: the attributes, then y.
std::vector<double> row_values(const Leaf& l, std::size_t r) {
  std::vector<double> v = l.x[r];
  v.push_back(l.y[r]);
  return v;
}

// Packed statistics of rows [r0, r1) shifted by `shift` (kv values).
std::vector<double> stats_of(const Leaf& l, std::size_t r0, std::size_t r1, const std::vector<double>& shift) {
  const int kv = l.k + 1;
  std::vector<double> s(static_cast<std::size_t>(ls::n_stats(kv)), 0.0);
  std::vector<double> v(static_cast<std::size_t>(kv));
  for (std::size_t r = r0; r < r1; ++r) {
    const auto raw = row_values(l, r);
    for (int j = 0; j < kv; ++j) v[static_cast<std::size_t>(j)] = raw[static_cast<std::size_t>(j)] - shift[static_cast<std::size_t>(j)];
    ls::add_row(s.data(), v.data(), kv);
  }
  return s;
}

struct Solved {
  ls::SolveOut out;
  std::vector<double> coef;
};

// solve_stats with the leaf's first row as the shift (what the evaluators do).
Solved solve(const Leaf& l, const ls::SolveParams& p) {
  const int kv = l.k + 1;
  const std::vector<double> shift = l.n() > 0 ? row_values(l, 0) : std::vector<double>(static_cast<std::size_t>(kv), 0.0);
  const std::vector<double> s = stats_of(l, 0, l.y.size(), shift);
  std::vector<double> work(static_cast<std::size_t>(ls::solve_work_doubles(kv)));
  std::vector<int> kept(static_cast<std::size_t>(std::max(l.k, 1)));
  Solved r;
  r.coef.assign(static_cast<std::size_t>(l.k) + 1, -99.0);
  r.out = ls::solve_stats(l.k, l.n(), s.data(), shift.data(), p, work.data(), kept.data(), r.coef.data());
  return r;
}

struct Qr {
  int rank;
  double sse;
  std::vector<double> coef;
};

// The exact solver: Householder QR of [1, x, y] with the rank rule.
Qr qr(const Leaf& l, const ls::SolveParams& p) {
  const auto rows = static_cast<std::int64_t>(l.y.size());
  const int cols = l.k + 1;
  std::vector<double> s(static_cast<std::size_t>(rows * (cols + 1)));
  for (std::int64_t i = 0; i < rows; ++i) {
    s[static_cast<std::size_t>(i)] = 1.0;
    for (int j = 0; j < l.k; ++j) s[static_cast<std::size_t>((j + 1) * rows + i)] = l.x[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
    s[static_cast<std::size_t>(cols * rows + i)] = l.y[static_cast<std::size_t>(i)];
  }
  int max_params = std::numeric_limits<int>::max();
  if (p.rows_per_param > 0) max_params = static_cast<int>(std::max<double>(1.0, std::ceil(double(rows) / p.rows_per_param) - 1.0));
  Qr q;
  q.coef.assign(static_cast<std::size_t>(cols), 0.0);
  q.rank = least_squares_rank_rule(s.data(), rows, cols, p.rank_tol, q.coef.data(), &q.sse, max_params);
  return q;
}

// A random leaf: attributes uniform in [0, 10] (as floats), y linear in them plus noise.
Leaf random_leaf(Rng& rng, int n, int k, double noise) {
  Leaf l;
  l.k = k;
  std::vector<double> beta(static_cast<std::size_t>(k) + 1);
  for (double& b : beta) b = rng.uniform(-3, 3);
  for (int r = 0; r < n; ++r) {
    std::vector<double> x(static_cast<std::size_t>(k));
    double y = beta[0];
    for (int j = 0; j < k; ++j) {
      x[static_cast<std::size_t>(j)] = static_cast<float>(rng.uniform(0, 10));
      y += beta[static_cast<std::size_t>(j) + 1] * x[static_cast<std::size_t>(j)];
    }
    l.x.push_back(x);
    l.y.push_back(static_cast<float>(y + noise * rng.normal()));
  }
  return l;
}

// solve_stats == the QR rule: the same rank and dropped columns, coefficients within 1e-8 of the
// largest, SSE within 1e-8 (relative, plus 1e-12 of the sum of squared targets for exact fits, as
// test_reference.cpp: an exact fit's SSE is rounding on either side).
void expect_agree(const Leaf& l, const ls::SolveParams& p) {
  const Solved s = solve(l, p);
  const Qr q = qr(l, p);
  ASSERT_EQ(s.out.flag, ls::kSolved);
  EXPECT_EQ(s.out.rank, q.rank);
  double scale = 1e-300, yy = 0;
  for (double c : q.coef) scale = std::max(scale, std::fabs(c));
  for (double y : l.y) yy += y * y;
  for (std::size_t j = 0; j < q.coef.size(); ++j) {
    EXPECT_NEAR(s.coef[j], q.coef[j], 1e-8 * scale) << "coefficient " << j;
    EXPECT_EQ(s.coef[j] == 0.0, q.coef[j] == 0.0) << "coefficient " << j << ": the same columns dropped";
  }
  EXPECT_NEAR(s.out.sse, q.sse, 1e-8 * q.sse + 1e-12 * yy);
}

}  // namespace

TEST(GmtLeafStats, PackedLayoutIsWhatAddRowWrites) {
  for (int kv = 1; kv <= 6; ++kv) {
    // stat_index enumerates 0 .. n_stats - 1 row by row
    int p = 0;
    for (int i = 0; i <= kv; ++i)
      for (int j = i; j <= kv; ++j) {
        if (i == 0 && j == 0) continue;
        EXPECT_EQ(ls::stat_index(i, j, kv), p++) << i << "," << j;
      }
    EXPECT_EQ(p, ls::n_stats(kv));
    std::vector<double> v(static_cast<std::size_t>(kv)), s(static_cast<std::size_t>(ls::n_stats(kv)), 0.0);
    for (int j = 0; j < kv; ++j) v[static_cast<std::size_t>(j)] = 2.0 + j;
    ls::add_row(s.data(), v.data(), kv);
    for (int i = 0; i < kv; ++i) {
      EXPECT_EQ(s[static_cast<std::size_t>(ls::stat_index(0, i + 1, kv))], v[static_cast<std::size_t>(i)]);
      for (int j = i; j < kv; ++j)
        EXPECT_EQ(s[static_cast<std::size_t>(ls::stat_index(i + 1, j + 1, kv))], v[static_cast<std::size_t>(i)] * v[static_cast<std::size_t>(j)]);
    }
  }
}

TEST(GmtLeafStats, PartialSumsWithDifferentShiftsMergeToTheDirectSums) {
  Rng rng(1);
  for (int trial = 0; trial < 50; ++trial) {
    const bool integers = trial % 2 == 0;  // integer data: every sum exact, the merge must be too
    const int k = rng.below_int(6);
    const int kv = k + 1;
    const int n = 1 + rng.below_int(300);
    Leaf l;
    l.k = k;
    for (int r = 0; r < n; ++r) {
      std::vector<double> x(static_cast<std::size_t>(k));
      for (double& v : x) v = integers ? double(rng.below_int(101) - 50) : rng.uniform(-20, 20);
      l.x.push_back(x);
      l.y.push_back(integers ? double(rng.below_int(101) - 50) : rng.uniform(-20, 20));
    }
    // Direct sums with the target shift (a row of the leaf, or any vector).
    std::vector<double> target = row_values(l, rng.below(l.y.size()));
    if (trial % 4 == 1)
      for (double& t : target) t = integers ? double(rng.below_int(21) - 10) : rng.uniform(-5, 5);
    const std::vector<double> direct = stats_of(l, 0, l.y.size(), target);
    // Parts (up to 4), each with its first row as the shift, moved to the target shift and added.
    std::vector<double> merged(direct.size(), 0.0);
    std::size_t r0 = 0;
    while (r0 < l.y.size()) {
      const std::size_t r1 = std::min(l.y.size(), r0 + 1 + rng.below(l.y.size() / 2 + 1));
      const std::vector<double> shift = row_values(l, r0);
      std::vector<double> part = stats_of(l, r0, r1, shift);
      std::vector<double> d(static_cast<std::size_t>(kv));
      for (int j = 0; j < kv; ++j) d[static_cast<std::size_t>(j)] = shift[static_cast<std::size_t>(j)] - target[static_cast<std::size_t>(j)];
      ls::shift_stats(part.data(), d.data(), static_cast<long long>(r1 - r0), kv);
      for (std::size_t q = 0; q < part.size(); ++q) merged[q] += part[q];
      r0 = r1;
    }
    for (std::size_t q = 0; q < direct.size(); ++q) {
      if (integers) {
        EXPECT_EQ(merged[q], direct[q]) << "trial " << trial << " stat " << q;
      } else {
        double mag = 1.0;  // the size of the terms summed
        for (std::size_t r = 0; r < l.y.size(); ++r) mag += 1600.0;
        EXPECT_NEAR(merged[q], direct[q], 1e-12 * mag) << "trial " << trial << " stat " << q;
      }
    }
  }
}

TEST(GmtLeafStats, SolveAgreesWithTheQrRankRuleOnWellConditionedLeaves) {
  Rng rng(2);
  const ls::SolveParams p;
  for (int trial = 0; trial < 300; ++trial) {
    const int k = rng.below_int(7);
    const int n = k + 2 + rng.below_int(500);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(n) + " rows, " + std::to_string(k) + " attributes");
    expect_agree(random_leaf(rng, n, k, trial % 3 == 0 ? 0.0 : 1.0), p);
  }
}

TEST(GmtLeafStats, SolveDropsExactlyConstantColumnsAsTheQrRule) {
  Rng rng(3);
  const ls::SolveParams p;
  for (int trial = 0; trial < 100; ++trial) {
    const int k = 1 + rng.below_int(5);
    const int n = k + 2 + rng.below_int(200);
    Leaf l = random_leaf(rng, n, k, 0.5);
    const int c = rng.below_int(k);  // constant in the leaf (0 on some trials)
    const double v = trial % 3 == 0 ? 0.0 : static_cast<float>(rng.uniform(-10, 10));
    for (auto& x : l.x) x[static_cast<std::size_t>(c)] = v;
    SCOPED_TRACE("trial " + std::to_string(trial));
    const Solved s = solve(l, p);
    EXPECT_EQ(s.out.flag, ls::kSolved);
    EXPECT_EQ(s.coef[static_cast<std::size_t>(c) + 1], 0.0);
    EXPECT_EQ(s.out.rank, k);  // intercept + the k - 1 others
    expect_agree(l, p);
  }
}

TEST(GmtLeafStats, SolveRespectsRowsPerParamAndFewRowsAsTheQrRule) {
  Rng rng(4);
  for (int trial = 0; trial < 200; ++trial) {
    const int k = 1 + rng.below_int(6);
    ls::SolveParams p;
    int n;
    if (trial % 2 == 0) {
      p.rows_per_param = 1.0 + rng.below_int(8);  // degrees-of-freedom guard
      n = 1 + rng.below_int(60);
    } else {
      n = 1 + rng.below_int(k + 1);  // fewer rows than columns (or just as many)
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(n) + " rows, " + std::to_string(k) +
                 " attributes, rows_per_param " + std::to_string(p.rows_per_param));
    const Leaf l = random_leaf(rng, n, k, 1.0);
    const Solved s = solve(l, p);
    if (s.out.flag != ls::kSolved) {
      // a few rows can leave a pivot the Gram cannot decide: then the exact solver takes the leaf
      ADD_FAILURE() << "ambiguous pivot on a random leaf";
      continue;
    }
    long long max_params = n + 1;
    if (p.rows_per_param > 0) max_params = std::max<long long>(1, static_cast<long long>(std::ceil(n / p.rows_per_param)) - 1);
    EXPECT_EQ(s.out.rank, std::min<long long>({n, max_params, k + 1}));  // generic data: only the limits drop columns
    // the first columns are kept: intercept, then attributes in order
    for (int j = 0; j <= k; ++j) EXPECT_EQ(s.coef[static_cast<std::size_t>(j)] != 0.0, j < s.out.rank) << "column " << j;
    expect_agree(l, p);
  }
}

TEST(GmtLeafStats, NearCollinearColumnsAreFlaggedAmbiguous) {
  Rng rng(5);
  const ls::SolveParams p;
  for (int trial = 0; trial < 60; ++trial) {
    const int k = 2 + rng.below_int(4);
    const int n = 20 + rng.below_int(400);
    Leaf l = random_leaf(rng, n, k, 0.5);
    const int a = rng.below_int(k - 1), b = a + 1 + rng.below_int(k - a - 1);
    const double eps = trial % 3 == 0 ? 0.0 : trial % 3 == 1 ? 1e-7 : 1e-4;  // a duplicate, then near ones
    const double scale = trial % 2 == 0 ? 1.0 : -2.5;
    for (auto& x : l.x) x[static_cast<std::size_t>(b)] = scale * x[static_cast<std::size_t>(a)] + eps * rng.uniform(-1, 1);
    const Solved s = solve(l, p);
    EXPECT_EQ(s.out.flag, ls::kAmbiguous) << "trial " << trial << ": columns " << a << " and " << b << ", eps " << eps;
  }
  // A well-separated pair is not.
  Leaf l = random_leaf(rng, 200, 3, 0.5);
  for (auto& x : l.x) x[1] = x[0] + static_cast<float>(rng.uniform(0, 5));
  EXPECT_EQ(solve(l, p).out.flag, ls::kSolved);
}

TEST(GmtLeafStats, SseWithCoefEqualsTheResidualSum) {
  Rng rng(6);
  for (int trial = 0; trial < 200; ++trial) {
    const int k = rng.below_int(6);
    const int n = 1 + rng.below_int(400);
    const Leaf l = random_leaf(rng, n, k, 2.0);
    const int kv = k + 1;
    const std::vector<double> shift = row_values(l, 0);
    const std::vector<double> s = stats_of(l, 0, l.y.size(), shift);
    std::vector<double> coef(static_cast<std::size_t>(kv));
    for (double& c : coef) c = rng.uniform(-3, 3);
    if (trial % 4 == 0) coef = solve(l, ls::SolveParams{}).coef;  // the least squares fit
    long double direct = 0;
    for (std::size_t r = 0; r < l.y.size(); ++r) {
      long double e = l.y[r] - coef[0];
      for (int j = 0; j < k; ++j) e -= static_cast<long double>(coef[static_cast<std::size_t>(j) + 1]) * l.x[r][static_cast<std::size_t>(j)];
      direct += e * e;
    }
    double yy = 0;
    for (double y : l.y) yy += y * y;
    const double got = ls::sse_with_coef(k, l.n(), s.data(), shift.data(), coef.data());
    EXPECT_NEAR(got, static_cast<double>(direct), 1e-9 * static_cast<double>(direct) + 1e-12 * yy) << "trial " << trial;
    if (trial % 4 == 0) {
      const Solved sv = solve(l, ls::SolveParams{});
      if (sv.out.flag == ls::kSolved) {
        EXPECT_NEAR(sv.out.sse, got, 1e-8 * got + 1e-12 * yy);
      }
    }
  }
}

TEST(GmtLeafStats, NoRowsGiveTheZeroModel) {
  Leaf l;
  l.k = 3;
  const Solved s = solve(l, ls::SolveParams{});
  EXPECT_EQ(s.out.rank, 0);
  EXPECT_EQ(s.out.flag, ls::kSolved);
  EXPECT_EQ(s.out.sse, 0.0);
  for (double c : s.coef) EXPECT_EQ(c, 0.0);
  const std::vector<double> st(static_cast<std::size_t>(ls::n_stats(4)), 0.0), shift(4, 1.0), coef{1, 2, 3, 4};
  EXPECT_EQ(ls::sse_with_coef(3, 0, st.data(), shift.data(), coef.data()), 0.0);
}

TEST(GmtLeafStats, DipoleKeysOrderRowsAsTheirDefinitions) {
  // lo_key / hi_key: target order, ties to the lower row; dipole_key: the row in the low 32 bits.
  EXPECT_LT(ls::lo_key(-1.0f, 9), ls::lo_key(2.0f, 3));
  EXPECT_LT(ls::lo_key(2.0f, 3), ls::lo_key(2.0f, 4));
  EXPECT_LT(ls::lo_key(-0.5f, 4), ls::lo_key(0.0f, 1));
  EXPECT_GT(ls::hi_key(2.0f, 3), ls::hi_key(2.0f, 4));  // ties: the lower row is the maximum
  EXPECT_GT(ls::hi_key(3.0f, 4), ls::hi_key(2.0f, 3));
  EXPECT_EQ(ls::lo_row(ls::lo_key(1.0f, 77)), 77);
  EXPECT_EQ(ls::hi_row(ls::hi_key(1.0f, 77)), 77);
  EXPECT_EQ(ls::lo_row(ls::kNoLoKey), -1);
  EXPECT_EQ(ls::hi_row(ls::kNoHiKey), -1);
  for (std::uint64_t r : {0ull, 5ull, 123456789ull}) {
    EXPECT_EQ(dipole_key(42, r) & 0xFFFFFFFFull, r);
    EXPECT_EQ(ls::rand_row(dipole_key(42, r)), static_cast<std::int64_t>(r));
    EXPECT_EQ(dipole_key(42, r), ls::dipole_key(42, r));
  }
  // The minimum key is a uniformly drawn row: over salts, each of 8 rows about 1/8 of the time.
  std::vector<int> hits(8, 0);
  for (std::uint64_t salt = 0; salt < 8000; ++salt) {
    std::uint64_t best = ~0ull;
    for (std::uint64_t r = 0; r < 8; ++r) best = std::min(best, dipole_key(salt, r));
    ++hits[static_cast<std::size_t>(ls::rand_row(best))];
  }
  for (int h : hits) {
    EXPECT_GT(h, 800);
    EXPECT_LT(h, 1200);
  }
}

// The random dipole row of a node is its row of minimum dipole_key. For one salt the keys' hash
// words are distinct (a bijection of the rows), and over the salts the EA issues (consecutive
// counters) every row of a node is drawn equally often: a chi-square over 200,000 salts within six
// standard deviations of its degrees of freedom, for contiguous, strided and top-of-range rows.
// (A draw from the row bits alone, min of (row xor s), fails it: checked below.)
TEST(GmtLeafStats, DipoleDrawIsUniformOverConsecutiveSalts) {
  std::vector<std::vector<std::uint64_t>> sets(4);
  for (std::uint64_t k = 0; k < 10; ++k) sets[0].push_back(k);
  for (std::uint64_t k = 0; k < 64; ++k) sets[1].push_back(1000 + k);
  for (std::uint64_t k = 0; k < 50; ++k) sets[2].push_back(3 + 7 * k);
  for (std::uint64_t k = 0; k < 20; ++k) sets[3].push_back(4294967000ull + k);
  constexpr int kSalts = 200000;
  auto chi2_of = [&](const std::vector<std::uint64_t>& rows, auto key) {
    std::vector<double> count(rows.size(), 0.0);
    for (std::uint64_t salt = 1; salt <= kSalts; ++salt) {
      std::size_t best = 0;
      std::uint64_t kb = key(salt, rows[0]);
      for (std::size_t i = 1; i < rows.size(); ++i) {
        const std::uint64_t k = key(salt, rows[i]);
        if (k < kb) kb = k, best = i;
      }
      count[best] += 1.0;
    }
    const double e = double(kSalts) / double(rows.size());
    double chi2 = 0.0;
    for (double c : count) chi2 += (c - e) * (c - e) / e;
    return chi2;
  };
  for (const auto& rows : sets) {
    const double dof = double(rows.size() - 1);
    const double bound = dof + 6.0 * std::sqrt(2.0 * dof);
    EXPECT_LT(chi2_of(rows, [](std::uint64_t s, std::uint64_t r) { return ls::dipole_key(s, r); }), bound) << "rows from " << rows[0];
    std::vector<std::uint32_t> words;
    for (std::uint64_t r : rows) {
      const std::uint64_t k = ls::dipole_key(12345, r);
      EXPECT_EQ(k & ls::kRowMask, r & ls::kRowMask);
      words.push_back(static_cast<std::uint32_t>(k >> 32));
    }
    std::sort(words.begin(), words.end());
    EXPECT_EQ(std::adjacent_find(words.begin(), words.end()), words.end()) << "a bijection of the rows for one salt";
  }
  // The criterion can fail: without the mixing, the contiguous rows' draw is far from uniform.
  EXPECT_GT(chi2_of(sets[1], [](std::uint64_t s, std::uint64_t r) {
              return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(r) ^ ls::dipole_salt32(s)) << 32) | r;
            }),
            100.0);
}
