#pragma once
// Samples of a gp_rules run's engine calls, for estimating the whole-run time of host backends
// too slow to run it (the GMT family's batch samples are the same idea): the recording
// run (the GPU) keeps the populations it hands the engine at calls 0, every k-th and the last,
// their counts' hash, the GPops of every call and its own host time; a host backend re-evaluates
// the sampled populations (its counts must equal the recorded ones: integer results are identical
// on every backend) and algorithms/core/replay_estimate.hpp turns the times into a whole-run
// estimate (GPops per call x the replay's seconds per GPop, interpolated between sampled calls).
//
// File (binary, host byte order): "GPRULPOP" v3; dataset, algorithm, rows, classes, seed,
// population, generations; the
// sampled calls (call index, want, the population's words and offsets, counts hash); the summary
// (recording backend, GPops per call, run seconds, engine-call seconds, the run's checksum).
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/rules/evaluator.hpp"

namespace gpudm::gp_rules {

struct SampledCall {
  std::uint64_t call = 0;
  rules::Want want = rules::Want::counts;
  rules::RulePopulation pop;
  std::uint64_t counts_hash = 0;
};

struct PopulationSample {
  std::string dataset, algorithm;
  std::uint64_t rows = 0, classes = 0, seed = 0;
  std::int64_t population = 0, generations = 0;  // of the recorded run
  std::vector<SampledCall> calls;
  // summary
  std::string backend;
  std::vector<double> gpops;     // every engine call of the run, in order
  double run_seconds = 0;        // the recorded run's wall time
  double engine_seconds = 0;     // of it, inside the engine's evaluate calls
  std::string checksum;          // the recorded run's checksum (classifier + fitness trace)
  double host_seconds() const { return run_seconds > engine_seconds ? run_seconds - engine_seconds : 0.0; }
};

// Hash of an evaluation's integer counts (rules x classes covered, class sizes, GPops); not the
// coverage bits (their cost on every recorded call: pop_sample.cpp).
std::uint64_t counts_hash(const rules::RuleCounts& c);

// Kept by a run (RunStats::recorder): every call's GPops; the populations of call 0, every
// `every`-th and the last.
class PopulationRecorder {
 public:
  explicit PopulationRecorder(int every) : every_(every < 1 ? 1 : every) {}
  void on_call(const rules::RulePopulation& pop, rules::Want want, const rules::RuleCounts& counts);
  // The sample of the finished run (the last call included).
  PopulationSample finish() const;
  std::uint64_t calls() const { return static_cast<std::uint64_t>(gpops_.size()); }

 private:
  int every_;
  std::vector<double> gpops_;
  std::vector<SampledCall> sampled_;
  SampledCall last_;  // the latest call when it is not sampled
  bool last_held_ = false;
};

// Writes atomically (path + ".tmp", then renamed); creates missing directories.
void write_population_sample(const std::string& path, const PopulationSample& s);
// Throws gpudm::Error naming the file for a missing, truncated, foreign or corrupt file.
PopulationSample read_population_sample(const std::string& path);

}  // namespace gpudm::gp_rules
