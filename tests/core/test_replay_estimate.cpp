// The shared replay estimator (algorithms/core/replay_estimate.hpp): exact on a cost that is
// linear in the step, constant rate outside the samples, pooling, and refusals.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/core/error.hpp"
#include "algorithms/core/replay_estimate.hpp"

using namespace gpudm;

TEST(ReplayEstimate, ExactWhenTheRateIsLinearInTheStep) {
  // work grows and the cost per unit of work grows linearly: rate(s) = 1 + 0.01 s
  std::vector<double> work(101);
  double want = 0;
  for (std::size_t s = 0; s < work.size(); ++s) {
    work[s] = 10.0 + static_cast<double>(s);
    want += work[s] * (1.0 + 0.01 * static_cast<double>(s));
  }
  std::vector<ReplayPoint> pts;
  for (int s : {0, 25, 50, 100}) pts.push_back({double(s), work[std::size_t(s)], work[std::size_t(s)] * (1.0 + 0.01 * s)});
  const ReplayEstimate e = replay_estimate(work, pts);
  EXPECT_NEAR(e.seconds, want, 1e-9 * want);
  EXPECT_EQ(e.samples, 4);
  double total = 0;
  for (double w : work) total += w;
  EXPECT_DOUBLE_EQ(e.work, total);
  // A constant-rate estimate (time per unit of work of the first samples) is biased here.
  const double first_rate = pts[0].seconds / pts[0].work;
  EXPECT_GT(std::fabs(first_rate * total - want) / want, 0.3);
}

TEST(ReplayEstimate, ConstantOutsideTheSamplesAndPooledAtOneStep) {
  const std::vector<double> work = {1, 1, 1, 1, 1};
  // two pieces of step 2 (pooled: 3 s for 2 units = 1.5 s per unit), one at step 3 (2 s per unit)
  const ReplayEstimate e = replay_estimate(work, {{3, 1, 2.0}, {2, 1, 1.0}, {2, 1, 2.0}});
  EXPECT_EQ(e.samples, 2);
  EXPECT_DOUBLE_EQ(e.seconds, 1.5 + 1.5 + 1.5 + 2.0 + 2.0);
  EXPECT_DOUBLE_EQ(e.replayed_work, 3.0);
}

TEST(ReplayEstimate, RefusesNoSamplesAndStepsOutsideTheRun) {
  EXPECT_THROW(replay_estimate({1, 2}, {}), Error);
  EXPECT_THROW(replay_estimate({1, 2}, {{0, 0, 1.0}}), Error);
  EXPECT_THROW(replay_estimate({1, 2}, {{2, 1, 1.0}}), Error);
  EXPECT_THROW(replay_estimate({1, 2}, {{-1, 1, 1.0}}), Error);
  const ReplayEstimate e = replay_estimate({1, 2}, {{1, 2, 4.0}});
  EXPECT_NE(replay_estimate_method("cuda", "engine call", "GPops", e, 2).find("1 engine calls of the cuda run's 2"), std::string::npos);
}

TEST(ReplayEstimate, SpreadOrderPrefixesCoverTheRange) {
  EXPECT_EQ(spread_order(0), std::vector<std::size_t>{});
  EXPECT_EQ(spread_order(1), std::vector<std::size_t>{0});
  EXPECT_EQ(spread_order(8), (std::vector<std::size_t>{0, 4, 2, 6, 1, 5, 3, 7}));
  EXPECT_EQ(spread_order(5), (std::vector<std::size_t>{0, 4, 2, 1, 3}));  // a permutation for any n
}

// The replay's loop (time_replay): the first pass takes the samples in spread order and stops at the
// time cap (the samples kept), set_up / check run around every run off the clock, warm-ups are
// untimed passes, and each timed pass gives one estimate = host seconds + the interpolated replay.
namespace {
struct ToyReplay final : ReplayCase {
  std::vector<std::string> log;
  double sleep_seconds_per_work = 0;  // 0: as fast as it goes
  std::size_t samples() const override { return 8; }
  double step(std::size_t i) const override { return static_cast<double>(i); }
  double work(std::size_t i) const override { return 1.0 + static_cast<double>(i); }
  void set_up(std::size_t i) override { log.push_back("s" + std::to_string(i)); }
  void run(std::size_t i, PhaseTimer& t) override {
    log.push_back(std::string(t.enabled() ? "R" : "W") + std::to_string(i));
    t.add("work", work(i));
  }
  void check(std::size_t i, bool first) override { log.push_back(std::string(first ? "c" : "k") + std::to_string(i)); }
};
}  // namespace

TEST(ReplayEstimate, TheReplayLoopSpreadsCapsWarmsUpAndEstimatesEachRepetition) {
  ToyReplay toy;
  const std::vector<double> work(8, 1.0);
  const ReplayTiming all = time_replay(toy, work, 2.0, 0, 2, 0.0);
  ASSERT_EQ(all.kept.size(), 8u);
  EXPECT_EQ(all.kept, spread_order(8));
  EXPECT_EQ(all.timing.samples.size(), 2u);
  EXPECT_EQ(all.timing.warmup, 0);
  ASSERT_EQ(all.repetitions.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_DOUBLE_EQ(all.timing.samples[k], 2.0 + all.repetitions[k].estimate.seconds);
    EXPECT_EQ(all.repetitions[k].estimate.samples, 8);
    EXPECT_GT(all.repetitions[k].phases.seconds("work"), 0.0);  // the timed passes' phases
  }
  EXPECT_EQ(toy.log[0], "s0");
  EXPECT_EQ(toy.log[1], "R0");
  EXPECT_EQ(toy.log[2], "c0");
  EXPECT_EQ(toy.log[3], "s4");  // spread order
  EXPECT_EQ(toy.log[3 * 8], "s0");
  EXPECT_EQ(toy.log[3 * 8 + 2], "k0");  // the later passes' checks

  // A cap that every sample reaches keeps the first sample only; with a warm-up the first pass is
  // untimed and one more pass per repetition follows.
  ToyReplay capped;
  const ReplayTiming one = time_replay(capped, work, 0.0, 1, 1, 1e-12, [](double s) { return s; });
  EXPECT_EQ(one.kept, (std::vector<std::size_t>{0}));
  EXPECT_EQ(one.timing.samples.size(), 1u);
  EXPECT_EQ(one.timing.warmup, 1);
  EXPECT_EQ(capped.log, (std::vector<std::string>{"s0", "W0", "c0", "s0", "R0", "k0"}));
  EXPECT_EQ(one.repetitions[0].estimate.samples, 1);
}
