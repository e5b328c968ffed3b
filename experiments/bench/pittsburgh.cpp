// Benchmarks of the pittsburgh family: evaluate one fixed (seeded) population.
//   small  (every backend; the CPU gate's case): 10 rule sets on 20,000 Poker-shaped rows,
//          one OpenMP thread so the gate measures code, not the shared machine's second core.
//   medium (cuda): population 100 on the full Poker size (1,025,010 rows), fused and faithful paths.
#include "experiments/bench/bench_cases.hpp"

namespace gpudm::bench {

std::vector<BenchCase> cases_pittsburgh() {
  auto evaluate = [](const char* name, const char* size, int rows, int population, const char* path,
                     RunsOn runs_on) {
    BenchCase c = make_case(name, size, "poker_full", rows,
                            {{"mode", "evaluate"}, {"population", population}, {"path", path}}, std::move(runs_on));
    c.work_metric = "gpops";  // items/s = GPops/s
    c.counters = {{"gpops_per_s", "GPops/s", 1e-9}, {"instances_per_s", "instances/s", 1.0}};
    return c;
  };
  return {evaluate("evaluate", "small", 20000, 10, "fast", {}),
          evaluate("evaluate", "medium", 1025010, 100, "fast", on_device),
          evaluate("evaluate_faithful", "medium", 1025010, 100, "faithful", on_device)};
}

}  // namespace gpudm::bench
