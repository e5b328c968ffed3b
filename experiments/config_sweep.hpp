#pragma once
// Sweep expansion (docs/config-format.md): a family config's backends, datasets, params, sweep
// axes, cases, seeds and repetition policy, validated against the family's params and the
// registry, then expanded into the ordered list of runs. Used by the loader (config.cpp).
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "experiments/config_check.hpp"

namespace gpudm::experiments::config_detail {

struct Axis {
  std::string name;
  std::vector<ojson> values;
};

struct ParamBlock {
  ojson fixed = ojson::object();
  std::vector<Axis> axes;
};

struct SweepCase {
  std::string backend;
  ParamBlock params;
};

// What one family config (or its smoke variant) asks to run, validated.
struct Sweep {
  std::vector<DatasetRef> datasets;
  ParamBlock top;           // "params" (its axes are also in `axes`)
  std::vector<Axis> axes;   // "sweep", then the axes of "params"
  std::vector<SweepCase> cases;
  std::vector<std::uint64_t> seeds{1};
  int warmup = 1, repetitions = 5;
};

// Reads and checks `cfg`'s run keys for `plan.family` (errors in the order of the keys above);
// --repetitions (`opt.repetitions`) overrides the config's.
Sweep read_sweep(const Checker& c, const ojson& cfg, const ExperimentPlan& plan, const ValidationContext& ctx,
                 const PlanOptions& opt);

// Appends the sweep's runs (datasets outermost, then sweep points, cases, their points, seeds)
// that --backend / --only-dataset keep to plan.runs; `dataset_names` gathers every dataset the
// config names. A config error when they would exceed kMaxRuns (unless --allow-large-sweep),
// checked before anything is expanded, or when two runs are identical.
void expand_sweep(const Checker& c, const Sweep& sweep, const PlanOptions& opt, ExperimentPlan& plan,
                  std::set<std::string>& dataset_names, const ValidationContext& ctx);

// Empty `filter` keeps every name (--backend, --only-dataset).
bool wanted(const std::vector<std::string>& filter, const std::string& name);

}  // namespace gpudm::experiments::config_detail
