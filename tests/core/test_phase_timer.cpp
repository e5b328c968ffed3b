#include <gtest/gtest.h>

#include "algorithms/core/phase_timer.hpp"
#include "algorithms/core/timing.hpp"

using namespace gpudm;

TEST(PhaseTimer, AccumulatesAndKeepsOrder) {
  PhaseTimer t;
  t.add("b", 1.0);
  t.add("a", 2.0);
  t.add("b", 0.5);
  ASSERT_EQ(t.phases().size(), 2u);
  EXPECT_EQ(t.phases()[0].name, "b");
  EXPECT_DOUBLE_EQ(t.seconds("b"), 1.5);
  auto j = t.to_json(2.0);
  EXPECT_DOUBLE_EQ(j["a"]["seconds"].get<double>(), 1.0);
}

TEST(PhaseTimer, RefusesMixingClocks) {
  PhaseTimer t;
  t.add("k", 1.0, PhaseClock::device);
  EXPECT_THROW(t.add("k", 1.0, PhaseClock::host), Error);
}

TEST(Timing, MedianMinMax) {
  TimingStats s;
  s.samples = {3, 1, 2, 10};
  EXPECT_DOUBLE_EQ(s.median(), 2.5);
  EXPECT_DOUBLE_EQ(s.min(), 1);
  EXPECT_DOUBLE_EQ(s.max(), 10);
  int calls = 0;
  auto m = measure(2, 3, [&] { ++calls; });
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(m.samples.size(), 3u);
}
