// Benchmarks of the vfdt family: a forest learning a fixed prefix of a seeded stream
// (prequential: predict, learn, ADWIN, split checks).
//   small  (every backend; the CPU gate's case): 10 trees over the first 50,000 instances of the
//          MOA-style random-tree stream, mini-batches of 1,024, one OpenMP thread.
//   medium (cuda): 100 trees over 1,000,000 instances (vfdt_table4's shape).
#include "experiments/bench/bench_cases.hpp"

namespace gpudm::bench {

std::vector<BenchCase> cases_vfdt() {
  auto forest = [](const char* size, int rows, int trees, RunsOn runs_on) {
    BenchCase c = make_case("forest", size, "rt_moa", rows,
                            {{"mode", "forest"}, {"trees", trees}, {"batch", 1024}, {"curve_points", 10}},
                            std::move(runs_on));
    c.work_metric = "instances";
    c.counters = {{"instances_per_s", "instances/s", 1.0},
                  {"tree_instance_updates_per_s", "tree-instance updates/s", 1.0}};
    return c;
  };
  return {forest("small", 50000, 10, {}), forest("medium", 1000000, 100, on_device)};
}

}  // namespace gpudm::bench
