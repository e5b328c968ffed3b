// Benchmarks of the gmt family: a short fixed-seed induction, i.e. the evaluation of a fixed
// sequence of generations of model trees (seed 1 and a fixed iteration count make every
// generation the same on every run and every backend: the family's checksum is exact).
//   small  (every backend; the CPU gate's case): 16 trees x 20 generations on 10,000 Armchair rows,
//          one OpenMP thread.
//   medium (cuda; the CUDA GMT backend reports itself unavailable until it exists): 64 trees x
//          10 generations on 200,000 rows.
#include "experiments/bench/bench_cases.hpp"

namespace gpudm::bench {

std::vector<BenchCase> cases_gmt() {
  auto induce = [](const char* size, int rows, int population, int iterations, std::vector<std::string> backends) {
    BenchCase c = make_case("generations", size, "armchair", rows, {{"population", population}, {"iterations", iterations}},
                            std::move(backends));
    c.counters = {{"instances_per_s", "instances/s", 1.0}};
    return c;
  };
  return {induce("small", 10000, 16, 20, {}), induce("medium", 200000, 64, 10, {"cuda"})};
}

}  // namespace gpudm::bench
