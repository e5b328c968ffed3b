// Benchmarks of the gmt family: a short fixed-seed induction, i.e. the evaluation of a fixed
// sequence of generations of model trees (seed 1 and a fixed iteration count make every
// generation the same on every run and every backend: the family's checksum is exact).
//   small  (every backend; the CPU gate's case): 16 trees x 20 generations on 10,000 Armchair rows,
//          one OpenMP thread.
//   medium (cuda): the paper's population of 64 on Armchair 1M (docs/perf-notes-gmt.md's shape),
//          both paths of the CUDA evaluator: fast (a generation in one launch sequence, ~0.5 ms per
//          generation predicted, so 100 generations) and faithful (the paper's six procedures per
//          individual, ~1.5 ms per evaluation predicted, so 10 generations); about a second each.
#include "experiments/bench/bench_cases.hpp"

namespace gpudm::bench {

std::vector<BenchCase> cases_gmt() {
  auto induce = [](const char* name, const char* size, int rows, int population, int iterations, const char* gpu_path,
                   RunsOn runs_on) {
    nlohmann::json params = {{"population", population}, {"iterations", iterations}, {"stall_iterations", 0}};
    if (gpu_path) params["gpu_path"] = gpu_path;  // backend-only: the CPU backends ignore it
    BenchCase c = make_case(name, size, "armchair", rows, std::move(params), std::move(runs_on));
    c.counters = {{"instances_per_s", "instances/s", 1.0}, {"data_pass_effective_gb_per_s", "data-pass GB/s (effective)", 1.0}};
    return c;
  };
  return {induce("generations", "small", 10000, 16, 20, nullptr, {}),
          induce("generations", "medium", 1000000, 64, 100, "fast", on_device),
          induce("generations_faithful", "medium", 1000000, 64, 10, "faithful", on_device)};
}

}  // namespace gpudm::bench
