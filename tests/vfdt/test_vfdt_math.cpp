// Hand-checked arithmetic of the Hoeffding tree: logarithms, information gain, Hoeffding bound,
// split rule, Poisson(1) weights, attribute subsets.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "algorithms/vfdt/vfdt_math.hpp"

namespace gpudm::vfdt {
namespace {

TEST(VfdtMath, DeterministicLogMatchesLibm) {
  for (double x : {1.0, 1.5, 2.0, 3.0, 7.0, 10.0, 1000.0, 123456789.0, 0.001, 4294967295.0}) {
    EXPECT_NEAR(det_log2(x), std::log2(x), 4e-16 * std::max(1.0, std::fabs(std::log2(x)))) << x;
    EXPECT_NEAR(det_ln(x), std::log(x), 4e-16 * std::max(1.0, std::fabs(std::log(x)))) << x;
  }
  EXPECT_EQ(xlog2x_fixed(0), 0);
  EXPECT_EQ(xlog2x_fixed(1), 0);
  EXPECT_EQ(xlog2x_fixed(2), 2LL << kGainFracBits);   // 2*log2(2) = 2
  EXPECT_EQ(xlog2x_fixed(8), 24LL << kGainFracBits);  // 8*3
}

// Gain of the table [[8,2],[1,9]] (values x classes), n = 20, by hand:
// H(pre) = H(9/20, 11/20) = 0.992774453; H(8/10) = 0.721928095; H(1/10) = 0.468995594;
// gain = 0.992774453 - 0.5*0.721928095 - 0.5*0.468995594 = 0.397312609.
TEST(VfdtMath, InformationGainByHand) {
  const std::uint32_t cnt[4] = {8, 2, 1, 9};
  const std::uint64_t n = 20;
  const std::int64_t class_term = xlog2x_fixed(20) - xlog2x_fixed(9) - xlog2x_fixed(11);
  const std::int64_t m = gain_merit(cnt, 2, 2, n, class_term);
  EXPECT_NEAR(merit_to_gain(m, n), 0.397312609, 1e-6);
  // A useless attribute: both values have the class ratio of the whole.
  const std::uint32_t flat[4] = {9, 11, 9, 11};
  const std::int64_t cf = xlog2x_fixed(40) - xlog2x_fixed(18) - xlog2x_fixed(22);
  EXPECT_NEAR(merit_to_gain(gain_merit(flat, 2, 2, 40, cf), 40), 0.0, 1e-6);
  // Three values, three classes: pure branches -> gain = H(pre) = log2(3).
  const std::uint32_t pure[9] = {5, 0, 0, 0, 5, 0, 0, 0, 5};
  const std::int64_t cp = xlog2x_fixed(15) - 3 * xlog2x_fixed(5);
  EXPECT_NEAR(merit_to_gain(gain_merit(pure, 3, 3, 15, cp), 15), std::log2(3.0), 1e-6);
}

TEST(VfdtMath, SplitNeedsTwoBranchesWithMoreThanOnePercent) {
  const std::uint32_t one_branch[4] = {10, 10, 0, 0};
  EXPECT_EQ(gain_merit(one_branch, 2, 2, 20, xlog2x_fixed(20) - 2 * xlog2x_fixed(10)), -1);
  const std::uint32_t tiny[4] = {600, 399, 1, 0};  // 1 of 1000 = 0.1% in branch 1
  EXPECT_EQ(gain_merit(tiny, 2, 2, 1000, xlog2x_fixed(1000) - xlog2x_fixed(601) - xlog2x_fixed(399)), -1);
}

// sqrt(R^2 ln(1/delta) / 2n) with R = log2(2) = 1, delta = 1e-7, n = 200:
// ln(1e7) = 16.11809565, /400 = 0.04029524, sqrt = 0.20073675.
TEST(VfdtMath, HoeffdingBoundByHand) {
  const double numer = std::log(1e7);
  EXPECT_NEAR(hoeffding_bound(numer, 200), 0.20073675, 1e-8);
  // 7 classes: R = log2 7 = 2.80735492, R^2 = 7.881378, n = 1000: sqrt(7.881378*16.118096/2000) = 0.2520224
  const double r = std::log2(7.0);
  EXPECT_NEAR(hoeffding_bound(r * r * numer, 1000), 0.2520224, 1e-6);
}

TEST(VfdtMath, SplitRule) {
  const double numer = std::log(1e7);  // two classes
  const std::uint64_t n = 200;         // HB = 0.2007
  auto merit = [&](double gain) { return static_cast<std::int64_t>(gain * n * (1 << kGainFracBits)); };
  EXPECT_TRUE(should_split(merit(0.5), merit(0.25), n, n, numer, 0.05));    // 0.25 > 0.2007
  EXPECT_FALSE(should_split(merit(0.5), merit(0.35), n, n, numer, 0.05));   // 0.15 < 0.2007, HB > tau
  EXPECT_TRUE(should_split(merit(0.3), -1, n, n, numer, 0.05));             // second = null split (0)
  EXPECT_FALSE(should_split(0, -1, n, n, numer, 0.05));                     // nothing to gain
  // tie: n large enough that HB < tau = 0.05: n > ln(1e7)/(2*0.0025) = 3223.6
  EXPECT_TRUE(should_split(merit(0.30) * 20, merit(0.299) * 20, 4000, 4000, numer, 0.05));
  EXPECT_FALSE(should_split(merit(0.30) * 15, merit(0.299) * 15, 3000, 3000, numer, 0.05));
  // bound_weight "total": the same gains, the bound over n + 300 inherited = 500 -> HB = 0.1270
  EXPECT_FALSE(should_split(merit(0.5), merit(0.35), n, n, numer, 0.05));
  EXPECT_TRUE(should_split(merit(0.5), merit(0.35), n, n + 300, numer, 0.05));  // 0.15 > 0.1270
}

TEST(VfdtMath, PoissonWeightsHaveMeanOneAndTheRightZeroRate) {
  const int n = 1'000'000;
  double sum = 0, sq = 0;
  int zeros = 0, ones = 0, twos = 0;
  for (int i = 0; i < n; ++i) {
    const int k = poisson1(7, static_cast<std::uint32_t>(i % 100), static_cast<std::uint64_t>(i / 100));
    sum += k;
    sq += double(k) * k;
    zeros += k == 0;
    ones += k == 1;
    twos += k == 2;
  }
  const double mean = sum / n, var = sq / n - mean * mean;
  // standard errors: mean 1e-3, rates ~5e-4
  EXPECT_NEAR(mean, 1.0, 5e-3);
  EXPECT_NEAR(var, 1.0, 1e-2);
  EXPECT_NEAR(double(zeros) / n, std::exp(-1.0), 3e-3);
  EXPECT_NEAR(double(ones) / n, std::exp(-1.0), 3e-3);
  EXPECT_NEAR(double(twos) / n, std::exp(-1.0) / 2, 3e-3);
  // counter-based: the same (seed, tree, instance) always gives the same weight
  EXPECT_EQ(poisson1(3, 5, 12345), poisson1(3, 5, 12345));
}

TEST(VfdtMath, AttributeSubsetsAreDistinctSortedAndUniform) {
  std::vector<int> hits(10, 0);
  for (std::uint64_t key = 0; key < 20000; ++key) {
    std::int16_t s[3];
    draw_subset(splitmix64_mix(key), 10, 3, s);
    EXPECT_TRUE(s[0] < s[1] && s[1] < s[2]);
    EXPECT_GE(s[0], 0);
    EXPECT_LT(s[2], 10);
    for (auto a : s) ++hits[a];
  }
  for (int h : hits) EXPECT_NEAR(h / 60000.0, 0.1, 0.01);
  std::int16_t all[5];
  draw_subset(42, 5, 5, all);
  for (int a = 0; a < 5; ++a) EXPECT_EQ(all[a], a);
}

TEST(VfdtMath, MajorityBreaksTiesTowardsTheLowestClass) {
  const std::uint32_t a[3] = {2, 5, 5}, z[3] = {0, 0, 0};
  EXPECT_EQ(majority(a, 3), 1);
  EXPECT_EQ(majority(z, 3), 0);
}

TEST(VfdtMath, NaiveBayesVoteByHand) {
  // one attribute (2 values) in the leaf's subset, 2 classes; counters cnt[v*C + c]
  const std::uint32_t cls[2] = {3, 5};
  const std::uint32_t cnt[4] = {2, 1,   // v = 0: class 0, class 1
                                1, 4};  // v = 1
  const std::int16_t subset[1] = {0};
  const std::int32_t values[1] = {2};
  const std::uint8_t x0[1] = {0}, x1[1] = {1};
  // v = 0: ln 3 + ln(3/5) = ln 1.8  >  ln 5 + ln(2/7) = ln 1.43 -> class 0 (the majority is 1)
  EXPECT_EQ(naive_bayes_vote(cls, cnt, subset, values, x0, 1, 2, 2), 0);
  // v = 1: ln 3 + ln(2/5) = ln 1.2  <  ln 5 + ln(5/7) = ln 3.57 -> class 1
  EXPECT_EQ(naive_bayes_vote(cls, cnt, subset, values, x1, 1, 2, 2), 1);
  // a class the leaf has not learned (counters 0) gets no vote even with an inherited count
  const std::uint32_t inherited[2] = {50, 5}, learned_c1[4] = {0, 1, 0, 4};
  EXPECT_EQ(naive_bayes_vote(inherited, learned_c1, subset, values, x0, 1, 2, 2), 1);
  // nothing learned yet: the majority class
  const std::uint32_t none[4] = {0, 0, 0, 0};
  EXPECT_EQ(naive_bayes_vote(inherited, none, subset, values, x0, 1, 2, 2), 0);
}

TEST(VfdtMath, MajorityMarginIsTheLeadOverTheRunnerUp) {
  std::uint32_t m = 99;
  const std::uint32_t a[4] = {3, 9, 4, 1}, tie[3] = {2, 5, 5}, z[2] = {0, 0};
  EXPECT_EQ(majority_margin(a, 4, &m), 1);
  EXPECT_EQ(m, 5u);
  EXPECT_EQ(majority_margin(tie, 3, &m), 1);
  EXPECT_EQ(m, 0u);
  EXPECT_EQ(majority_margin(z, 2, &m), 0);
  EXPECT_EQ(m, 0u);
  EXPECT_EQ(class_total(a, 4), 17u);
  EXPECT_EQ(class_total(z, 2), 0u);
  // the "settled" rule: adding less than the margin to other classes never changes the majority;
  // adding the margin makes a tie, which a lower class index wins
  std::uint32_t b[4] = {3, 9, 4, 1};
  b[2] += 4;
  EXPECT_EQ(majority(b, 4), 1);
  b[2] += 1;  // class 2 reaches 9: a tie, class 1 keeps it (lower index)
  EXPECT_EQ(majority(b, 4), 1);
  b[0] += 6;  // class 0 reaches 9: a tie that class 0 wins (lower index)
  EXPECT_EQ(majority(b, 4), 0);
}

}  // namespace
}  // namespace gpudm::vfdt
