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
}

// The one timing loop: warm-ups with a disabled timer, then the timed repetitions with theirs;
// set_up before and tear_down after every run (told whether it was timed); `enough` stops early.
TEST(Timing, TheOneLoopRunsWarmupsRepetitionsAndTheHooksInOrder) {
  std::string log;
  const TimedRepetitions t = time_repetitions(
      2, 3, [&](PhaseTimer& timer) { log += timer.enabled() ? "R" : "W"; }, [&] { log += "<"; }, [&] { log += ">"; }, {},
      [&] { log += "s"; }, [&](bool timed) { log += timed ? "t" : "u"; });
  EXPECT_EQ(log, "sWusWu<sRtsRtsRt>");
  EXPECT_EQ(t.timing.warmup, 2);
  EXPECT_EQ(t.timing.samples.size(), 3u);
  int runs = 0;
  const TimedRepetitions early = time_repetitions(0, 10, [&](PhaseTimer&) { ++runs; }, {}, {}, [](int done, double) { return done == 4; });
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(early.timing.samples.size(), 4u);
}

TEST(PhaseTimer, SlowestAndMeanOfParallelTimers) {
  std::vector<PhaseTimer> ts(2);
  ts[0].add("a", 1.0);
  ts[0].add("b", 4.0, PhaseClock::device);
  ts[1].add("b", 6.0, PhaseClock::device);
  ts[1].add("c", 2.0);  // only on the second timer
  const PhaseTimer s = PhaseTimer::slowest(ts);
  ASSERT_EQ(s.phases().size(), 3u);
  EXPECT_EQ(s.phases()[0].name, "a");
  EXPECT_EQ(s.phases()[2].name, "c");
  EXPECT_DOUBLE_EQ(s.seconds("a"), 1.0);
  EXPECT_DOUBLE_EQ(s.seconds("b"), 6.0);
  EXPECT_EQ(s.phases()[1].clock, PhaseClock::device);
  EXPECT_DOUBLE_EQ(s.seconds("c"), 2.0);
  const PhaseTimer m = PhaseTimer::mean(ts);
  EXPECT_DOUBLE_EQ(m.seconds("a"), 0.5);
  EXPECT_DOUBLE_EQ(m.seconds("b"), 5.0);
  EXPECT_DOUBLE_EQ(m.seconds("c"), 1.0);
  EXPECT_EQ(m.phases()[1].clock, PhaseClock::device);
}

TEST(PhaseTimer, MergeAddsCallCounts) {
  PhaseTimer a, b;
  for (int i = 0; i < 3; ++i) a.add("separate", 0.5, PhaseClock::device);
  b.add("separate", 1.0, PhaseClock::device);
  b.merge(a);
  b.merge(a);
  ASSERT_EQ(b.phases().size(), 1u);
  EXPECT_EQ(b.phases()[0].calls, 7);  // 1 + 3 + 3: a rate per call (gmt's data passes) needs them all
  EXPECT_DOUBLE_EQ(b.seconds("separate"), 4.0);
}
