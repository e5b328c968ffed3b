#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "algorithms/core/rng.hpp"

using gpudm::Rng;

TEST(Rng, SameSeedSameStream) {
  Rng a(42), b(42);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a(), b());
}

TEST(Rng, SplitIsIndependentOfConsumption) {
  Rng a(7), b(7);
  for (int i = 0; i < 100; ++i) a();  // consuming the parent does not change its children
  Rng ca = a.split(3), cb = b.split(3);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(ca(), cb());
  EXPECT_NE(a.split(3)(), a.split(4)());
}

TEST(Rng, BelowIsInRangeAndCoversAll) {
  Rng r(1);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    auto v = r.below(7);
    ASSERT_LT(v, 7u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
}

TEST(Rng, UniformMeanAndNormalMoments) {
  Rng r(3);
  double s = 0, s2 = 0, m = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    m += r.uniform();
    double z = r.normal();
    s += z;
    s2 += z * z;
  }
  EXPECT_NEAR(m / n, 0.5, 0.005);
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(s2 / n, 1.0, 0.02);
}

TEST(Rng, PoissonOneHasMeanOneAndZeroRateOneOverE) {
  Rng r(11);
  const int n = 200000;
  double sum = 0;
  int zeros = 0;
  for (int i = 0; i < n; ++i) {
    int k = r.poisson(1.0);
    sum += k;
    zeros += k == 0;
  }
  EXPECT_NEAR(sum / n, 1.0, 0.01);
  EXPECT_NEAR(double(zeros) / n, std::exp(-1.0), 0.005);
}

// The one SplitMix64 (core/splitmix.hpp) gives the reference generator's bits (Vigna's
// splitmix64.c from state 0), and its mix is the generator's output for a given state.
TEST(SplitMix64, MatchesTheReferenceOutputs) {
  using gpudm::kSplitmixGamma;
  using gpudm::splitmix64;
  using gpudm::splitmix64_mix;
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(splitmix64(state), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(splitmix64(state), 0x06C45D188009454Full);
  EXPECT_EQ(state, 3 * kSplitmixGamma);
  EXPECT_EQ(splitmix64_mix(kSplitmixGamma), 0x6E789E6AA1B965F4ull);
  static_assert(splitmix64_mix(0) == 0xE220A8397B1DCDAFull, "constexpr on the host");
}
