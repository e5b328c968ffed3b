// Benchmarks of the ceilings family: every probe, small (smoke-sized) and medium (the sizes of
// configs/ceilings.json). Backends that lack a probe report it as skipped.
#include "experiments/bench/bench_cases.hpp"

namespace gpudm::bench {

std::vector<BenchCase> cases_ceilings() {
  struct Probe {
    const char* name;
    bool bytes;
    RunsOn runs_on;
  };
  const RunsOn all;  // every backend
  const RunsOn gpu = on_device;
  // launch latency: of a device launch or of an OpenMP fork/join (a thread pool)
  const RunsOn parallel = [](const Capabilities& c) { return c.device() || c.threads; };
  const Probe probes[] = {{"copy_bandwidth", true, all},   {"fma_rate", false, all},
                          {"popcount_rate", false, all},   {"h2d_bandwidth", true, gpu},
                          {"d2h_bandwidth", true, gpu},    {"launch_latency", false, parallel},
                          {"graph_launch_latency", false, gpu}};
  std::vector<BenchCase> out;
  for (const char* size : {"small", "medium"}) {
    for (const auto& p : probes) {
      BenchCase c;
      c.name = p.name;
      c.size = size;
      c.dataset = "none";  // the probes make their own buffers
      c.params = {{"probe", p.name}};
      c.smoke = std::string(size) == "small";
      c.work_metric = "work_per_repetition";  // bytes, FLOPs, popcounts or launches
      c.work_is_bytes = p.bytes;
      c.runs_on = p.runs_on;
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace gpudm::bench
