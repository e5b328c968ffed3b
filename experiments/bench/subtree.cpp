// Benchmarks of the subtree family: interpret one fixed grid point (seeded trees).
//   small  (every backend; the CPU gate's case): 64 trees of 63 nodes on 20,000 Poker-shaped
//          rows, all rows interpreted (estimate_sample_rows 0: nothing estimated), one OpenMP thread.
//   medium (cuda): the subtree_grid point population 128, 127 nodes, full Poker size, with the
//          interpreter the device picks ("auto" = best) and the subtree-parallel one.
#include "experiments/bench/bench_cases.hpp"

namespace gpudm::bench {

std::vector<BenchCase> cases_subtree() {
  auto interpret = [](const char* name, const char* size, int rows, int population, int tree_size, const char* interpreter,
                      RunsOn runs_on) {
    BenchCase c = make_case(
        name, size, "poker_full", rows,
        {{"interpreter", interpreter}, {"population", population}, {"tree_size", tree_size}, {"estimate_sample_rows", 0}},
        std::move(runs_on));
    c.work_metric = "gpops";
    c.counters = {{"gpops_per_s", "GPops/s", 1e-9}, {"instances_per_s", "instances/s", 1.0}};
    return c;
  };
  return {interpret("interpret", "small", 20000, 64, 63, "auto", {}),
          interpret("interpret", "medium", 1025010, 128, 127, "auto", on_device),
          interpret("interpret_subtree", "medium", 1025010, 128, 127, "subtree", on_device)};
}

}  // namespace gpudm::bench
