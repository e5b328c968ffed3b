// ADWIN on 0/1 error streams: detection delay after an abrupt rise, no false alarm on a
// stationary stream, no alarm when the error falls, histogram invariants.
#include <gtest/gtest.h>

#include <memory>

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

}  // namespace
}  // namespace gpudm::vfdt
