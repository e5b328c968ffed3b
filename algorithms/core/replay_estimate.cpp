#include "algorithms/core/replay_estimate.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "algorithms/core/error.hpp"
#include "algorithms/core/stopwatch.hpp"

namespace gpudm {

ReplayEstimate replay_estimate(const std::vector<double>& work_per_step, std::vector<ReplayPoint> points) {
  const double steps = static_cast<double>(work_per_step.size());
  for (const ReplayPoint& p : points)
    GPUDM_REQUIRE(p.step >= 0 && p.step < steps && p.work >= 0 && p.seconds >= 0,
                  "replay estimate: a sample at step " + std::to_string(p.step) + " of a run of " +
                      std::to_string(work_per_step.size()) + " steps (work " + std::to_string(p.work) + ")");
  std::stable_sort(points.begin(), points.end(), [](const ReplayPoint& a, const ReplayPoint& b) { return a.step < b.step; });
  std::vector<ReplayPoint> pooled;
  for (const ReplayPoint& p : points) {
    if (!pooled.empty() && pooled.back().step == p.step) {
      pooled.back().work += p.work;
      pooled.back().seconds += p.seconds;
    } else {
      pooled.push_back(p);
    }
  }
  pooled.erase(std::remove_if(pooled.begin(), pooled.end(), [](const ReplayPoint& p) { return !(p.work > 0); }), pooled.end());
  GPUDM_REQUIRE(!pooled.empty(), "replay estimate: no replayed sample with work > 0");
  ReplayEstimate e;
  e.samples = static_cast<int>(pooled.size());
  for (const ReplayPoint& p : pooled) e.replayed_work += p.work;
  std::size_t k = 0;  // pooled[k] is the first sample at or after step s (or the last)
  for (std::size_t s = 0; s < work_per_step.size(); ++s) {
    const double at = static_cast<double>(s);
    while (k + 1 < pooled.size() && pooled[k].step < at) ++k;
    double rate;
    if (at <= pooled.front().step) {
      rate = pooled.front().seconds / pooled.front().work;
    } else if (at >= pooled.back().step) {
      rate = pooled.back().seconds / pooled.back().work;
    } else {
      const ReplayPoint& a = pooled[k - 1];
      const ReplayPoint& b = pooled[k];
      const double ra = a.seconds / a.work, rb = b.seconds / b.work;
      const double w = (at - a.step) / (b.step - a.step);
      rate = ra + w * (rb - ra);
    }
    e.work += work_per_step[s];
    e.seconds += work_per_step[s] * rate;
  }
  return e;
}

ReplayTiming time_replay(ReplayCase& c, const std::vector<double>& work_per_step, double host_seconds, int warmup, int repetitions,
                         double max_seconds, const std::function<double(double)>& slowest) {
  GPUDM_REQUIRE(c.samples() > 0, "replay: no sample to replay");
  ReplayTiming out;
  out.timing.warmup = warmup;
  // One pass over `which`; its points and phases. `cap`: stop once the pass took this long.
  auto pass = [&](const std::vector<std::size_t>& which, PhaseTimer& timer, bool first, double cap) {
    ReplayRepetition r;
    std::vector<ReplayPoint> points;
    for (std::size_t i : which) {
      c.set_up(i);
      Stopwatch sw;
      c.run(i, timer);
      const double s = sw.seconds();
      c.check(i, first);
      points.push_back({c.step(i), c.work(i), s});
      r.replay_seconds += s;
      if (first) out.kept.push_back(i);
      if (cap > 0 && (slowest ? slowest(r.replay_seconds) : r.replay_seconds) >= cap) break;
    }
    r.estimate = replay_estimate(work_per_step, points);
    return r;
  };
  auto add = [&](ReplayRepetition r) {
    out.timing.samples.push_back(host_seconds + r.estimate.seconds);
    out.repetitions.push_back(std::move(r));
  };
  {
    PhaseTimer t;
    t.set_enabled(warmup == 0);
    ReplayRepetition first = pass(spread_order(c.samples()), t, true, max_seconds);
    first.phases = std::move(t);
    if (warmup == 0) add(std::move(first));
  }
  for (int i = 1; i < warmup; ++i) {
    PhaseTimer untimed;
    untimed.set_enabled(false);
    pass(out.kept, untimed, false, 0);
  }
  while (static_cast<int>(out.timing.samples.size()) < std::max(1, repetitions)) {
    PhaseTimer t;
    ReplayRepetition r = pass(out.kept, t, false, 0);
    r.phases = std::move(t);
    add(std::move(r));
  }
  return out;
}

std::vector<std::size_t> spread_order(std::size_t n) {
  int bits = 0;
  while ((std::size_t{1} << bits) < n) ++bits;
  auto rank = [bits](std::size_t i) {  // i with its `bits` low bits reversed
    std::size_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1u) << (bits - 1 - b);
    return r;
  };
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
  return order;
}

std::string replay_estimate_method(const std::string& recorded_backend, const std::string& step_name, const std::string& work_name,
                                   const ReplayEstimate& e, std::size_t steps) {
  char share[32];
  std::snprintf(share, sizeof share, "%.3g", e.work > 0 ? 100.0 * e.replayed_work / e.work : 0.0);
  return "replay: " + std::to_string(e.samples) + " " + step_name + "s of the " + recorded_backend + " run's " +
         std::to_string(steps) + " (" + share + " % of its " + work_name + ", spread over the run) re-evaluated on this backend; " +
         "time = the run's own host time + sum over its " + step_name + "s of " + work_name + " x this backend's seconds per " +
         work_name.substr(0, work_name.size() - (work_name.back() == 's' ? 1 : 0)) + ", interpolated linearly between the sampled " +
         step_name + "s (algorithms/core/replay_estimate.hpp)";
}

std::string sample_dataset_tag(const std::string& dataset, const nlohmann::json& options) {
  std::string tag = dataset;
  if (options.is_object())
    for (auto it = options.begin(); it != options.end(); ++it) {
      std::string v = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
      for (char& ch : v)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-') ch = '_';
      tag += "_" + it.key() + "-" + v;
    }
  return tag;
}

std::string expand_sample_pattern(std::string pattern, const std::string& experiment, const std::string& dataset_tag,
                                  std::uint64_t seed, const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::pair<std::string, std::string>> subs = {
      {"{experiment}", experiment}, {"{dataset}", dataset_tag}, {"{seed}", std::to_string(seed)}};
  subs.insert(subs.end(), extra.begin(), extra.end());
  for (const auto& [key, value] : subs)
    for (std::size_t at = pattern.find(key); at != std::string::npos; at = pattern.find(key, at + value.size()))
      pattern.replace(at, key.size(), value);
  return pattern;
}

}  // namespace gpudm
