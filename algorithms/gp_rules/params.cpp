#include "algorithms/gp_rules/params.hpp"
#include "algorithms/core/replay_params.hpp"

namespace gpudm::gp_rules {

const ParamTable<GpCase>& case_params() {
  static const ParamTable<GpCase> t = [] {
    ParamTable<GpCase> t("gp_rules");
    t.add_enum<Algorithm>("algorithm", [](GpCase& c) -> Algorithm& { return c.gp.algorithm; }, algorithm_names(),
                          "falco (one run per class, best rule) | tan (steady state, token competition) | bojarczuk "
                          "(every class at once, no mutation)");
    t.add<int>("population", [](GpCase& c) -> int& { return c.gp.population; }, "individuals (the paper: 200)")
        .range(2, 100000);
    t.add<int>("generations", [](GpCase& c) -> int& { return c.gp.generations; },
               "generations of each run (the paper: 100)")
        .range(0, 100000);
    t.add<int>("max_depth", [](GpCase& c) -> int& { return c.gp.max_depth; },
               "depth limit of a rule, terminals included (a comparison is depth 2)")
        .range(2, 20);
    t.add<int>("max_nodes", [](GpCase& c) -> int& { return c.gp.max_nodes; },
               "node limit, terminals included (0: only the depth limit; bojarczuk: 2^max_depth - 1, Sy's maxnodes)")
        .range(0, 1000000);
    t.add<int>("tournament_size", [](GpCase& c) -> int& { return c.gp.tournament_size; },
               "tournament selection size (0: falco and tan 4, bojarczuk 2)")
        .range(0, 1000);
    t.add<double>("crossover_probability", [](GpCase& c) -> double& { return c.gp.crossover_probability; },
                  "probability a pair of parents is crossed (else copied)")
        .range(0, 1);
    t.add<double>("mutation_probability", [](GpCase& c) -> double& { return c.gp.mutation_probability; },
                  "probability an offspring is mutated (falco, tan; bojarczuk has no mutation)")
        .range(0, 1);
    t.add<double>("alpha", [](GpCase& c) -> double& { return c.gp.alpha; },
                  "falco: weight of the rule size N in nI - ((tp + tn) - (fp + fn)) + alpha N")
        .range(0, 1);
    t.add<double>("w1", [](GpCase& c) -> double& { return c.gp.w1; }, "tan: Se = tp / (tp + w1 fn) (the paper: 0.2-1)")
        .range(0, 1000);
    t.add<double>("w2", [](GpCase& c) -> double& { return c.gp.w2; }, "tan: Sp = tn / (tn + w2 fp) (the paper: 1-20)")
        .range(0, 1000);
    t.add<int>("elite_size", [](GpCase& c) -> int& { return c.gp.elite_size; },
               "tan: size of the external population (elitism)")
        .range(1, 100000);
    t.add<bool>("stop_when_perfect", [](GpCase& c) -> bool& { return c.gp.stop_when_perfect; },
                "control stage: stop a run when its best rule has fp = fn = 0 on the training data");
    t.add("folds", &GpCase::folds, "0: train on every row (train accuracy); k >= 2: k-fold cross-validation (test accuracy)")
        .range(0, 100);
    add_replay_params(t, &GpCase::record_every, &GpCase::record_file, &GpCase::replay_from,
                      {.every = "record_every",
                       .file = "record_file",
                       .recorded = "the population of engine calls 0, k, 2k, ... and the last, every call's GPops and "
                                   "the run's host time",
                       .for_backend = "a host backend",
                       .file_fields = "{experiment}, {dataset} (with its options), {algorithm}, {population}, "
                                       "{generations}, {seed}",
                       .replay = "estimate instead of running the algorithm: replay the populations",
                       .check = ", their counts checked against the recorded ones",
                       .time_model = "the recorded run's host time + its GPops per engine call x this backend's seconds "
                                     "per GPop, interpolated between the sampled calls"});
    t.add("replay_max_seconds", &GpCase::replay_max_seconds,
          "replay_from: stop adding sampled calls once the first replay pass has taken this long (spread over the run; "
          "at least one; 0 = no cap)")
        .at_least(0);
    t.add("replay_above_gpops", &GpCase::replay_above_gpops,
          "replay_from: replay only when the recorded run evaluated more GPops than this; a smaller run is run in full "
          "and measured (metrics.replay_declined; 0 = always replay)")
        .at_least(0);
    t.add<int>("threads", [](GpCase& c) -> int& { return c.engine.threads; }, "OpenMP threads (0: the OpenMP default)")
        .range(0, 4096)
        .backend_only();
    t.add_enum<rules::Path>("path", [](GpCase& c) -> rules::Path& { return c.engine.path; }, rules::path_names(),
                            "CUDA: fast (fused match + count) | faithful (the GP paper's match + reduction kernels)")
        .backend_only();
    t.add_enum<rules::Features>("features", [](GpCase& c) -> rules::Features& { return c.engine.features; },
                                rules::features_names(),
                                "CUDA fast path: auto (two rows per word as ranked fp16 codes when every column has <= 30720 distinct values) | "
                                "f32 | f16x2 (error when the data do not allow it)")
        .backend_only();
    t.add<int>("rows_per_thread", [](GpCase& c) -> int& { return c.engine.rows_per_thread; },
               "CUDA fast path: rows (slots) per thread, 0 = by the tile policy")
        .one_of({0, 1, 2, 4})
        .backend_only();
    t.add<int>("copy_threads", [](GpCase& c) -> int& { return c.engine.copy_threads; },
               "CUDA: host threads of the coverage copy from the pinned download, the caller's included (0 = up to 8 of "
               "the machine's; 1 = one memcpy)")
        .range(0, 64)
        .backend_only();
    t.add<int>("devices", [](GpCase& c) -> int& { return c.engine.devices; },
               "CUDA: devices the population is split over (0 .. devices-1), one host thread each")
        .range(1, 1024)
        .backend_only();
    t.add<std::vector<int>>("device_ids", [](GpCase& c) -> std::vector<int>& { return c.engine.device_ids; },
                            "CUDA: the device of every slice instead of devices, may repeat ({\"value\": [0, 0]}: "
                            "the two-device split on one GPU)")
        .range(0, 1023)
        .backend_only();
    return t;
  }();
  return t;
}

}  // namespace gpudm::gp_rules
