#pragma once
// Repetition policy: warm-up runs, then timed repetitions; median/min/max of wall clock.
#include <algorithm>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/phase_timer.hpp"
#include "algorithms/core/stopwatch.hpp"

namespace gpudm {

struct TimingStats {
  int warmup = 0;
  std::vector<double> samples;  // seconds, one per repetition, in run order

  double median() const {
    if (samples.empty()) return 0.0;
    std::vector<double> s = samples;
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  }
  double min() const { return samples.empty() ? 0.0 : *std::min_element(samples.begin(), samples.end()); }
  double max() const { return samples.empty() ? 0.0 : *std::max_element(samples.begin(), samples.end()); }

  nlohmann::ordered_json to_json() const {
    return {{"unit", "seconds"}, {"clock", "host_wall"}, {"warmup", warmup}, {"repetitions", samples.size()},
            {"samples", samples},  {"median", median()}, {"min", min()},     {"max", max()}};
  }
};

// The one timing loop of every family: `warmup` runs with a disabled timer, then the timed
// repetitions (host wall clock around each run_once alone; max(1, repetitions) of them, fewer when
// `enough(done, spent)` says so) with their phases in `breakdown`; `before_timed` / `after_timed`
// around those; `set_up` before and `tear_down(timed)` after every run, off the clock. `run_once`
// must leave no device work pending when it returns (synchronise inside).
struct TimedRepetitions {
  TimingStats timing;  // warm-up count set, one sample per timed repetition
  PhaseTimer breakdown;
};
inline TimedRepetitions time_repetitions(int warmup, int repetitions, const std::function<void(PhaseTimer&)>& run_once,
                                         const std::function<void()>& before_timed = {},
                                         const std::function<void()>& after_timed = {},
                                         const std::function<bool(int done, double spent)>& enough = {},
                                         const std::function<void()>& set_up = {},
                                         const std::function<void(bool timed)>& tear_down = {}) {
  PhaseTimer untimed;
  untimed.set_enabled(false);
  for (int i = 0; i < warmup; ++i) {
    if (set_up) set_up();
    run_once(untimed);
    if (tear_down) tear_down(false);
  }
  TimedRepetitions out;
  out.timing.warmup = warmup;
  if (before_timed) before_timed();
  const int reps = std::max(1, repetitions);
  out.timing.samples.reserve(static_cast<std::size_t>(reps));
  double spent = 0.0;
  for (int i = 0; i < reps; ++i) {
    if (set_up) set_up();
    Stopwatch sw;
    run_once(out.breakdown);
    out.timing.samples.push_back(sw.seconds());
    spent += out.timing.samples.back();
    if (tear_down) tear_down(true);
    if (enough && enough(i + 1, spent)) break;
  }
  if (after_timed) after_timed();
  return out;
}

}  // namespace gpudm
