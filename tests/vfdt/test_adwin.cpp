// ADWIN on 0/1 error streams: detection delay after an abrupt rise, no false alarm on a
// stationary stream, no alarm when the error falls, histogram invariants.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "algorithms/core/rng.hpp"
#include "algorithms/vfdt/vfdt_math.hpp"

namespace gpudm::vfdt {
namespace {

void check_invariants(const Adwin& a) {
  std::uint64_t w = 0, ones = 0;
  for (int r = 0; r < a.rows; ++r) {
    ASSERT_LE(a.count[r], Adwin::kM) << "row " << r;
    for (int k = 0; k < a.count[r]; ++k) {
      w += std::uint64_t(1) << r;
      ones += a.total[r][k];
      ASSERT_LE(a.total[r][k], std::uint64_t(1) << r);
    }
  }
  ASSERT_EQ(w, a.width);
  ASSERT_EQ(ones, a.ones);
}

// Returns the index (after the change point) of the first detection, or -1.
long long first_detection(double p0, double p1, std::size_t change_at, std::size_t total, std::uint64_t seed,
                          long long* false_alarms) {
  auto a = std::make_unique<Adwin>();
  adwin_init(*a);
  Rng rng(seed);
  *false_alarms = 0;
  for (std::size_t i = 0; i < total; ++i) {
    const std::uint32_t x = rng.bernoulli(i < change_at ? p0 : p1) ? 1 : 0;
    if (adwin_update(*a, x, 0.002)) {
      if (i < change_at) ++*false_alarms;
      else return static_cast<long long>(i - change_at);
    }
  }
  return -1;
}

// The prefix-sum form (AdwinPrefix over a running count P, as the CUDA "prefix" kernel keeps it)
// makes the same decision as the bucket ADWIN at every input, and holds the same window, on
// streams that rise, fall and drift slowly, with delta large enough that windows shrink often.
TEST(Adwin, PrefixFormDecidesAsTheBucketForm) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    for (double delta : {0.002, 0.3}) {
      auto a = std::make_unique<Adwin>();
      AdwinPrefix b;
      adwin_init(*a);
      adwinp_init(b);
      const std::size_t n = 60000;
      std::vector<std::uint32_t> P(n + 1, 0);
      Rng rng(seed);
      long long changes = 0, shrinks = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double p = i < 20000 ? 0.1 : i < 35000 ? 0.6 : 0.6 - 0.5 * double(i - 35000) / double(n - 35000);
        const std::uint32_t x = rng.bernoulli(p) ? 1 : 0;
        P[i + 1] = P[i] + x;
        const std::uint64_t w0 = a->width;
        const bool ca = adwin_update(*a, x, delta);
        const bool cb = adwinp_update(b, static_cast<std::uint32_t>(i), P.data(), delta);
        ASSERT_EQ(ca, cb) << "seed " << seed << " delta " << delta << " input " << i;
        ASSERT_EQ(a->width, b.width) << "input " << i;
        ASSERT_EQ(a->ones, adwinp_ones(b, P.data())) << "input " << i;
        ASSERT_EQ(a->rows, b.rows) << "input " << i;
        for (int r = 0; r < a->rows; ++r) ASSERT_EQ(a->count[r], b.count[r]) << "input " << i << " row " << r;
        changes += ca;
        shrinks += a->width < w0 + 1;
        if (ca) {  // the forest resets the tree and its detector
          adwin_init(*a);
          adwinp_init(b);
        }
      }
      EXPECT_GT(shrinks, 0) << "the case must cut windows";
      if (delta > 0.1) {
        EXPECT_GT(changes, 0);
      }
    }
  }
}

// k inputs at once give the counts of k single inputs (what each speculative tick computes).
TEST(Adwin, PrefixBlockInsertEqualsSingleInserts) {
  for (std::uint32_t k : {1u, 5u, 31u, 32u, 33u, 1000u, 4096u, 100000u}) {
    AdwinPrefix one, many;
    adwinp_init(one);
    adwinp_init(many);
    adwinp_insert(one, 7, 77);
    adwinp_insert(many, 7, 77);
    for (std::uint32_t i = 0; i < k; ++i) adwinp_insert(one, 84 + i, 1);
    adwinp_insert(many, 84, k);
    ASSERT_EQ(one.width, many.width);
    ASSERT_EQ(one.time, many.time);
    ASSERT_EQ(one.rows, many.rows) << "k " << k;
    ASSERT_EQ(one.start, 7u);
    ASSERT_EQ(many.start, 7u);
    for (int r = 0; r < one.rows; ++r) ASSERT_EQ(one.count[r], many.count[r]) << "k " << k << " row " << r;
  }
}

TEST(Adwin, HistogramInvariantsHold) {
  auto a = std::make_unique<Adwin>();
  adwin_init(*a);
  Rng rng(3);
  for (int i = 0; i < 100000; ++i) {
    adwin_update(*a, rng.bernoulli(0.3) ? 1 : 0, 0.002);
    if (i % 997 == 0) check_invariants(*a);
  }
  EXPECT_EQ(a->time, 100000u);
  EXPECT_EQ(a->width, 100000u);  // stationary: nothing was cut
  // O(log W) buckets: at most M per row, ~log2(W/M) rows
  EXPECT_LE(a->rows, 17);
}

TEST(Adwin, NoFalseAlarmOnStationaryStreams) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    for (double p : {0.05, 0.2, 0.5}) {
      long long fa = 0;
      EXPECT_EQ(first_detection(p, p, 200000, 200000, seed, &fa), -1) << "seed " << seed << " p " << p;
      EXPECT_EQ(fa, 0);
    }
  }
}

// An abrupt rise from 0.2 to 0.8 after 20k inputs: detection needs a few clock ticks (32)
// once the newer sub-window is large enough: m ~ 1/n1 with eps ~ |0.6| gives n1 of a few tens.
TEST(Adwin, DetectsAnAbruptRiseWithinTheExpectedDelay) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    long long fa = 0;
    const long long delay = first_detection(0.2, 0.8, 20000, 40000, seed, &fa);
    EXPECT_EQ(fa, 0);
    ASSERT_GE(delay, 0) << "seed " << seed;
    EXPECT_LE(delay, 96) << "seed " << seed;
    // a smaller change (0.2 -> 0.4) takes longer but is still found within ~1k inputs
    const long long slow = first_detection(0.2, 0.4, 20000, 40000, seed, &fa);
    ASSERT_GE(slow, 0) << "seed " << seed;
    EXPECT_LE(slow, 1500) << "seed " << seed;
    EXPECT_GT(slow, delay) << "seed " << seed;
  }
}

TEST(Adwin, AFallInErrorShrinksTheWindowButIsNotReported) {
  auto a = std::make_unique<Adwin>();
  adwin_init(*a);
  Rng rng(9);
  bool reported = false;
  for (int i = 0; i < 40000; ++i) reported |= adwin_update(*a, rng.bernoulli(i < 20000 ? 0.6 : 0.05) ? 1 : 0, 0.002);
  EXPECT_FALSE(reported);
  EXPECT_LT(a->width, 25000u);  // the old high-error part was dropped
}

// reset_rule "any" (River's ARF): the same fall is reported, at the first cut, on both forms;
// with "rise" neither form reports it.
TEST(Adwin, OnAnyCutAFallIsReportedByBothForms) {
  for (const bool any : {false, true}) {
    auto a = std::make_unique<Adwin>();
    AdwinPrefix b;
    adwin_init(*a);
    adwinp_init(b);
    std::vector<std::uint32_t> P(40001, 0);
    Rng rng(9);
    long long first = -1;
    bool reported = false;
    for (int i = 0; i < 40000; ++i) {
      const std::uint32_t x = rng.bernoulli(i < 20000 ? 0.6 : 0.05) ? 1 : 0;
      P[i + 1] = P[i] + x;
      const std::uint64_t w0 = a->width;
      const bool ca = adwin_update(*a, x, 0.002, any);
      const bool cb = adwinp_update(b, static_cast<std::uint32_t>(i), P.data(), 0.002, any);
      ASSERT_EQ(ca, cb) << "input " << i;
      if (any && first < 0 && a->width < w0 + 1) first = i;  // the first cut
      if (ca) {
        reported = true;
        EXPECT_TRUE(any) << "a fall reported under rule rise at input " << i;
        EXPECT_EQ(first, i) << "rule any reports the first cut";
        break;
      }
    }
    EXPECT_EQ(reported, any);
    if (any) {
      EXPECT_GE(first, 20000);
    }
  }
  EXPECT_TRUE(adwin_signals(true, 100, 50, 60, 10));    // fell, any cut
  EXPECT_FALSE(adwin_signals(false, 100, 50, 60, 10));  // fell, rise only
  EXPECT_TRUE(adwin_signals(false, 100, 10, 60, 50));   // rose
}

// The CUDA kernel tests each boundary independently (one lane per boundary) and asks whether
// any cuts; the sequential scan runs over the boundaries with running sums. Same answer, always.
TEST(Adwin, PerBoundaryTestsAgreeWithTheSequentialScan) {
  auto a = std::make_unique<Adwin>();
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    adwin_init(*a);
    Rng rng(seed);
    int cuts = 0;
    for (int i = 0; i < 30000; ++i) {
      const double p = (i / 3000) % 2 ? 0.7 : 0.1;  // alternating regimes: many cuts
      a->time += 1;
      adwin_insert(*a, rng.bernoulli(p) ? 1 : 0);
      if (!adwin_check_due(*a)) continue;
      for (;;) {
        const AdwinCheck k = adwin_check_constants(*a, 0.002);
        bool any = false;
        for (int b = 0; b < adwin_buckets(*a) - 1; ++b) any = any || adwin_boundary_cuts(*a, k, b);
        ASSERT_EQ(any, adwin_any_cut(*a, 0.002)) << "seed " << seed << " input " << i;
        // the CUDA kernel's pre-filter with dd of a smaller window never rejects a cut
        Adwin smaller = *a;
        smaller.width = std::max<std::uint64_t>(11, a->width / 3);
        const double dd_lo = adwin_check_constants(smaller, 0.002).dd;
        ASSERT_LE(dd_lo, k.dd);
        std::uint64_t n0 = 0, u0 = 0;
        for (int r = a->rows - 1; r >= 0; --r)
          for (int q = 0; q < a->count[r]; ++q) {
            n0 += std::uint64_t(1) << r;
            u0 += a->total[r][q];
            if (n0 < a->width && adwin_cut_test(*a, k, n0, u0)) {
              ASSERT_TRUE(adwin_may_cut(*a, adwin_variance(*a), dd_lo, n0, u0)) << "input " << i;
            }
          }
        if (!any) break;
        ++cuts;
        adwin_delete_oldest(*a);
      }
    }
    EXPECT_GT(cuts, 10);
  }
}

// The block insertion the CUDA kernel uses (k inputs between two clock ticks at once) leaves
// exactly the state of k single insertions.
TEST(Adwin, BlockInsertionEqualsSingleInsertions) {
  auto a = std::make_unique<Adwin>(), b = std::make_unique<Adwin>();
  adwin_init(*a);
  adwin_init(*b);
  Rng rng(17);
  for (int step = 0; step < 20000; ++step) {
    const int k = 1 + rng.below_int(32);
    std::uint32_t xs[32];
    for (int i = 0; i < k; ++i) xs[i] = rng.bernoulli(0.3) ? 1 : 0;
    for (int i = 0; i < k; ++i) adwin_insert(*a, xs[i]);
    adwin_insert_block(*b, xs, k);
    ASSERT_EQ(a->width, b->width);
    ASSERT_EQ(a->ones, b->ones);
    ASSERT_EQ(a->rows, b->rows) << "step " << step;
    for (int r = 0; r < a->rows; ++r) {
      ASSERT_EQ(a->count[r], b->count[r]) << "step " << step << " row " << r;
      for (int i = 0; i < a->count[r]; ++i) ASSERT_EQ(a->total[r][i], b->total[r][i]) << "step " << step << " row " << r;
    }
    if (step % 500 == 499) {  // a cut now and then, as a check would do
      adwin_delete_oldest(*a);
      adwin_delete_oldest(*b);
    }
  }
}

}  // namespace
}  // namespace gpudm::vfdt
