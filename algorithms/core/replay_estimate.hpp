#pragma once
// Whole-run time of a slow backend from a replay of a faster run's own work: the
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
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/phase_timer.hpp"
#include "algorithms/core/timing.hpp"

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

// What a family replays: the recorded run's sampled steps, each re-evaluated on this backend. The
// replay's loop (time_replay) is the runner's, not the family's: it times run() alone, in the
// samples' spread order, and calls set_up / check around it off the clock.
class ReplayCase {
 public:
  virtual ~ReplayCase() = default;
  virtual std::size_t samples() const = 0;
  // Sample i's position in the recorded run (a step of work_per_step) and its work (> 0).
  virtual double step(std::size_t i) const = 0;
  virtual double work(std::size_t i) const = 0;
  // Off the clock, before each run of sample i (e.g. fresh copies of trees the evaluation edits).
  virtual void set_up(std::size_t i) { (void)i; }
  // On the clock: sample i re-evaluated; its phases into `timer` (disabled during warm-ups).
  virtual void run(std::size_t i, PhaseTimer& timer) = 0;
  // Off the clock, after each run of sample i (`first`: the capped first pass): e.g. its results
  // checked against the recording.
  virtual void check(std::size_t i, bool first) {
    (void)i;
    (void)first;
  }
};

// One timed repetition of a replay: the estimate and the replay's own phases and seconds.
struct ReplayRepetition {
  ReplayEstimate estimate;
  PhaseTimer phases;          // the replayed samples' phases
  double replay_seconds = 0;  // the replayed samples' seconds, summed
};
struct ReplayTiming {
  TimingStats timing;  // per timed repetition: host_seconds + its estimate
  std::vector<ReplayRepetition> repetitions;
  std::vector<std::size_t> kept;  // the samples replayed (a prefix of the spread order: the time cap's)
};
// The replay's one timing loop. A first pass over the samples in spread order (spread_order: any
// prefix covers the run) stops once it took `max_seconds` (0 = no cap; by `slowest(seconds)`, e.g.
// the slowest MPI rank's clock, so ranks keep the same samples) and fixes the samples kept; without warm-up it is the
// first timed repetition, otherwise the first warm-up. Then warm-ups - 1 untimed passes and timed
// passes over the kept samples until `repetitions` (at least one) estimates are made: each is
// host_seconds + replay_estimate(work_per_step, the pass's points).
ReplayTiming time_replay(ReplayCase& c, const std::vector<double>& work_per_step, double host_seconds, int warmup, int repetitions,
                         double max_seconds, const std::function<double(double)>& slowest = {});

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
