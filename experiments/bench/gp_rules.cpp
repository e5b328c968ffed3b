// Benchmarks of the gp_rules family: a short fixed-seed evolution of Falco's rules (seed 1, a
// fixed population and generation count, the control stage off: every run evaluates the same
// populations on every backend), i.e. the batched population evaluation of the shared rule engine
// plus the GP on the host.
//   small  (every backend; the CPU gate's case): 32 rules x 4 generations per class on 5,000
//          Poker-shaped rows, one OpenMP thread.
//   medium (cuda): the paper's population of 200 x 10 generations on the full Poker size.
#include "experiments/bench/bench_cases.hpp"

namespace gpudm::bench {

std::vector<BenchCase> cases_gp_rules() {
  auto evolve = [](const char* size, int rows, int population, int generations, RunsOn runs_on) {
    BenchCase c = make_case("falco", size, "poker_full", rows,
                            {{"algorithm", "falco"},
                             {"population", population},
                             {"generations", generations},
                             {"stop_when_perfect", false}},
                            std::move(runs_on));
    c.work_metric = "gpops";
    c.counters = {{"gpops_per_s_evaluation", "GPops/s", 1e-9}};
    return c;
  };
  return {evolve("small", 5000, 32, 4, {}), evolve("medium", 1025010, 200, 10, on_device)};
}

}  // namespace gpudm::bench
