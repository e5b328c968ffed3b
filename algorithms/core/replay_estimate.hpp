#pragma once
// Whole-run time of a slow backend from a replay of a faster run's own work (issues 23, 24): the
// recording run (the GPU fast path) writes the work it evaluated at steps spread over the run
// (GMT: generation batches of trees; GP: engine calls, populations of rules) and its work per step
// (GMT: evaluations, GP: GPops); the slow backend re-evaluates the sampled steps and the estimate
// is
//   evaluator seconds = sum over the run's steps s of work(s) x rate(s),
// rate = the replay's seconds per unit of work at the sampled steps, linear in the step between
// two neighbouring samples and constant before the first / after the last. Cost per unit of work
// that drifts over a run (rules growing, trees deepening) is followed instead of assumed
// constant; the whole-run time adds the run's own host time, which is the same code on every
// backend. One piece of code for every family that estimates this way.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpudm {

struct ReplayPoint {
  double step = 0;     // position in the recorded run (generation, engine call)
  double work = 0;     // work of the replayed sample (> 0)
  double seconds = 0;  // the replaying backend's time for it
};

struct ReplayEstimate {
  double seconds = 0;       // sum over steps of work x interpolated rate
  double work = 0;          // the run's work in all
  double replayed_work = 0; // the samples' work
  int samples = 0;          // distinct sampled steps
};

// work_per_step[s]: the run's work at step s (0, 1, ...). Points at the same step are pooled
// (their seconds and work added). Throws gpudm::Error when there is no point with work > 0 or
// a point lies outside [0, steps).
ReplayEstimate replay_estimate(const std::vector<double>& work_per_step, std::vector<ReplayPoint> points);

// 0 .. n-1 ordered so that every prefix is spread over the range (by bit-reversed index: 0, then
// the middle, then the quarters, ...): a replay cut by a time cap keeps samples from the whole run.
std::vector<std::size_t> spread_order(std::size_t n);

// One sentence for results' metrics.estimate_method (work_name: "evaluations", "GPops").
std::string replay_estimate_method(const std::string& recorded_backend, const std::string& step_name, const std::string& work_name,
                                   const ReplayEstimate& e, std::size_t steps);

// The dataset as sample file names give it: its name, then "_key-value" per option (Fig. 18 runs
// one dataset with several options), characters outside [A-Za-z0-9.-] of a value as '_'.
std::string sample_dataset_tag(const std::string& dataset, const nlohmann::json& options);
// `pattern` with "{experiment}", "{dataset}", "{seed}" and the `extra` keys replaced.
std::string expand_sample_pattern(std::string pattern, const std::string& experiment, const std::string& dataset_tag,
                                  std::uint64_t seed, const std::vector<std::pair<std::string, std::string>>& extra = {});

}  // namespace gpudm
