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

// The one timing loop of every family (issue 25 item 1): `warmup` runs with a disabled timer, then
// the timed repetitions (host wall clock around each; max(1, repetitions) of them, fewer when
// `enough(done, spent)` says so) with their phases in `breakdown`; `before_timed` / `after_timed`
// around those. `run_once` must leave no device work pending when it returns (synchronise inside).
struct TimedRepetitions {
  TimingStats timing;  // warm-up count set, one sample per timed repetition
  PhaseTimer breakdown;
};
inline TimedRepetitions time_repetitions(int warmup, int repetitions, const std::function<void(PhaseTimer&)>& run_once,
                                         const std::function<void()>& before_timed = {},
                                         const std::function<void()>& after_timed = {},
                                         const std::function<bool(int done, double spent)>& enough = {}) {
  PhaseTimer untimed;
  untimed.set_enabled(false);
  for (int i = 0; i < warmup; ++i) run_once(untimed);
  TimedRepetitions out;
  out.timing.warmup = warmup;
  if (before_timed) before_timed();
  const int reps = std::max(1, repetitions);
  out.timing.samples.reserve(static_cast<std::size_t>(reps));
  double spent = 0.0;
  for (int i = 0; i < reps; ++i) {
    Stopwatch sw;
    run_once(out.breakdown);
    out.timing.samples.push_back(sw.seconds());
    spent += out.timing.samples.back();
    if (enough && enough(i + 1, spent)) break;
  }
  if (after_timed) after_timed();
  return out;
}

// The same loop for a step without phases: `fn` run `warmup` times untimed, then timed;
// `on_rep(i)` after every timed repetition (progress reporting).
inline TimingStats measure(int warmup, int repetitions, const std::function<void()>& fn,
                           const std::function<void(int)>& on_rep = {}) {
  return time_repetitions(warmup, repetitions, [&](PhaseTimer&) { fn(); }, {}, {},
                          [&](int done, double) {
                            if (on_rep) on_rep(done - 1);
                            return false;
                          })
      .timing;
}

}  // namespace gpudm
