#pragma once
// How a family contributes benchmarks to gpudm_bench: a file experiments/bench/<family>.cpp
// defining
//
//   std::vector<gpudm::bench::BenchCase> gpudm::bench::cases_<family>();
//
// (CMake finds the file and generates the call). Every case runs on every backend the registry
// has for the family (unavailable ones are reported as errors with the reason, so they show
// in the output but never in a comparison), through Family::run_case: the same code path as
// run_experiment, one timed repetition per benchmark iteration after one warm-up.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/backend.hpp"

namespace gpudm::bench {

// Which backends a case applies to, by what they can do (empty: every one).
using RunsOn = std::function<bool(const Capabilities&)>;
inline bool on_device(const Capabilities& c) { return c.device(); }

struct BenchCase {
  std::string name;                   // e.g. "copy_bandwidth"
  std::string size;                   // "small" | "medium" (part of the benchmark name)
  std::string dataset;                // catalog name
  nlohmann::json dataset_options = nlohmann::json::object();
  nlohmann::json params = nlohmann::json::object();  // family params (missing ones: defaults)
  bool smoke = false;                 // CaseContext::smoke (families size their work down)
  // The backends this case applies to by what they can do, e.g. device() for host<->device
  // transfers (empty: every one). Unavailable backends cannot be asked: they are listed as skipped.
  RunsOn runs_on;
  // Work per repetition, read from the run's metrics, reported as Google Benchmark's rate
  // (bytes_per_second or items_per_second over the manual time). Empty: no rate.
  std::string work_metric;
  bool work_is_bytes = false;
  // Extra rate counters copied from the run's metrics, e.g. {"gpops_per_s", "GPops/s", 1e-9}.
  struct Counter {
    std::string metric;
    std::string label;
    double scale = 1.0;
  };
  std::vector<Counter> counters;
};

// A case of `rows` rows of `dataset`. Small cases are the CPU gate's (.ci/run): they run one
// OpenMP thread, so the gate measures our code, not the second core of a shared machine.
inline BenchCase make_case(std::string name, std::string size, std::string dataset, int rows, nlohmann::json params,
                           RunsOn runs_on) {
  BenchCase c;
  c.name = std::move(name);
  c.size = std::move(size);
  c.dataset = std::move(dataset);
  c.dataset_options = {{"rows", rows}};
  c.params = std::move(params);
  if (c.size == "small") c.params["threads"] = 1;
  c.runs_on = std::move(runs_on);
  return c;
}

}  // namespace gpudm::bench
