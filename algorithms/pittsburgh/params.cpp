#include "algorithms/pittsburgh/params.hpp"

namespace gpudm::pittsburgh {

const ParamTable<CaseParams>& params_table() {
  static const ParamTable<CaseParams> t = [] {
    using C = CaseParams;
    ParamTable<C> t(kFamilyName);
    t.add_enum("mode", &C::mode, {{"evaluate", Mode::evaluate}, {"learn", Mode::learn}},
               "evaluate (interpreter/evaluation timing) | learn (GA train/test)");
    t.add("population", &C::population, "individuals in the population").at_least(1);
    t.add<int>("rules_per_individual", [](C& c) -> int& { return c.rules.rules_per_individual; },
               "rules per individual; 0 = number of classes (the paper)")
        .at_least(0);
    t.add<int>("max_conditions_cap", [](C& c) -> int& { return c.rules.max_conditions_cap; },
               "conditions per rule uniform in [1, min(cap, 2 x attributes)]")
        .at_least(1);
    t.add<double>("p_or", [](C& c) -> double& { return c.rules.p_or; },
                  "probability a condition is joined by OR instead of AND")
        .range(0, 1);
    t.add<double>("p_not", [](C& c) -> double& { return c.rules.p_not; }, "probability a condition is negated")
        .range(0, 1);
    t.add<double>("p_interval", [](C& c) -> double& { return c.rules.p_interval; },
                  "probability a numeric condition is an IN/OUT interval")
        .range(0, 1);
    t.add_enum<KernelPath>("path", [](C& c) -> KernelPath& { return c.backend.path; }, kernel_path_names(),
                           "CUDA: faithful (the paper's 4 kernels) | fast (fused)")
        .backend_only();
    t.add<int>("threads", [](C& c) -> int& { return c.backend.threads; }, "OpenMP threads (0 = all)")
        .range(0, 4096)
        .backend_only();
    t.add<int>("devices", [](C& c) -> int& { return c.backend.devices; }, "CUDA devices the population is split over")
        .range(1, 1024)
        .backend_only();
    t.add<std::vector<int>>("device_ids", [](C& c) -> std::vector<int>& { return c.backend.device_ids; },
                            "CUDA: the device of every slice instead of devices, may repeat ({\"value\": [0, 0]}: "
                            "the two-device split on one GPU)")
        .range(0, 1023)
        .backend_only();
    t.add_enum<FeatureLayout>(
         "features", [](C& c) -> FeatureLayout& { return c.backend.features; }, feature_layout_names(),
         "CUDA fast path: auto (f16x2 when every column has <= 30720 distinct values) | f32 | f16x2 (two rows per word "
         "as ranked fp16 codes)")
        .backend_only();
    t.add("estimate_above_gpops", &C::estimate_above_gpops,
          "host backends: estimate an evaluation of more GPops than this from a sample of its individuals spread over "
          "the population (estimate_sample_fraction, estimate_pieces; algorithms/core/replay_estimate.hpp), flagged "
          "metrics.estimated (0 = measure every evaluation whole)")
        .at_least(0);
    t.add("estimate_sample_fraction", &C::estimate_sample_fraction,
          "the estimate's sample: this fraction of the population's individuals (at least one a piece)")
        .range(0, 1);
    t.add("estimate_pieces", &C::estimate_pieces,
          "the estimate's sample: this many runs of consecutive individuals, spread over the population, each timed as "
          "one evaluation")
        .range(1, 4096);
    t.add("validate_gpops_budget", &C::validate_gpops_budget,
          "check against the reference backend on the first individuals within this many GPops (0 = off)")
        .at_least(0)
        .backend_only();
    t.add("measure_power", &C::measure_power, "NVML (GPU) / RAPL (CPU) energy over the timed repetitions")
        .backend_only();
    t.add("cpu_tdp_watts", &C::cpu_tdp_watts,
          "CPU TDP (one package) for the paper's power method when RAPL is unreadable (0 = built-in table by model "
          "name)")
        .at_least(0)
        .backend_only();
    t.add("cpu_cores", &C::cpu_cores,
          "physical cores per package for the TDP share (0 = table, else hardware_concurrency / 2)")
        .range(0, 4096)
        .backend_only();
    t.add<int>("generations", [](C& c) -> int& { return c.ga.generations; }, "learn: GA generations").at_least(0);
    t.add("test_fraction", &C::test_fraction, "learn: held-out fraction, in (0, 1)").range(0, 1);
    t.add<double>("length_penalty", [](C& c) -> double& { return c.ga.length_penalty; },
                  "learn: fitness penalty per 20 primitives")
        .at_least(0);
    return t;
  }();
  return t;
}

}  // namespace gpudm::pittsburgh
