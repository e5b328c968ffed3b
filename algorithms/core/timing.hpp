#pragma once
// Repetition policy: warm-up runs, then timed repetitions; median/min/max of wall clock.
#include <algorithm>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

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

// Runs `fn` warmup times untimed, then `repetitions` times timed with the host wall clock.
// `fn` must leave no device work pending when it returns (synchronise inside).
// `on_rep(i)` is called after every timed repetition (progress reporting).
inline TimingStats measure(int warmup, int repetitions, const std::function<void()>& fn,
                           const std::function<void(int)>& on_rep = {}) {
  TimingStats t;
  t.warmup = warmup;
  for (int i = 0; i < warmup; ++i) fn();
  t.samples.reserve(static_cast<std::size_t>(repetitions));
  for (int i = 0; i < repetitions; ++i) {
    Stopwatch sw;
    fn();
    t.samples.push_back(sw.seconds());
    if (on_rep) on_rep(i);
  }
  return t;
}

}  // namespace gpudm
