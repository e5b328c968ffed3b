#pragma once
// The runner: executes an expanded ExperimentPlan run by run, asks each family to run one case,
// records timings/breakdown/metrics/checksum (appended to the results file's journal after every
// run; the JSON is replaced atomically when the sweep completes), validates checksums against the
// sequential run of the same identity, and renders the tables. One writer per results file (a
// lock naming the holder). Problems found before the first run (a locked file, datasets that do
// not load, an unreadable results file on --resume) throw gpudm::Error before any results file
// is touched. docs/reliability.md states the guarantees.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/family.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/core/registry.hpp"
#include "experiments/config.hpp"
#include "experiments/families.hpp"

namespace gpudm::experiments {

struct RunnerOptions {
  std::string out_dir;           // --out; "" means <results_root>/<machine tag>
  std::string results_root;      // default <source dir>/results (or $GPUDM_RESULTS_DIR)
  std::string paper_tables_dir;  // experiments/paper_tables
  bool resume = false;
  bool render_only = false;      // --render: tables of the existing results file, nothing run
  bool quiet = false;            // no progress bar, no informational stderr lines
  std::vector<std::string> argv;
};

struct ExperimentOutcome {
  std::string id;
  std::string json_path, md_path, csv_path;  // "" when not written
  std::string markdown;                      // the experiment's rendered Markdown document
  int ok = 0, skipped = 0, failed = 0;       // runs executed in this invocation
  int reused = 0;                            // runs kept from the previous file (--resume)
  int validation_failures = 0;               // checksum mismatches against the reference backend
};

class Runner {
 public:
  Runner(const FamilySet& families, const Registry& registry, DatasetProvider& datasets, RunnerOptions opt);

  // Runs the plan's included plans, then its own runs. Returns one outcome per experiment that
  // produced output, in run order.
  std::vector<ExperimentOutcome> run(const ExperimentPlan& plan);

  // The folder results go to (creates nothing).
  std::string output_dir() const { return out_dir_; }
  const nlohmann::ordered_json& environment() const { return environment_; }

 private:
  void run_plan(const ExperimentPlan& plan, std::vector<ExperimentOutcome>& out, Progress& progress);
  ExperimentOutcome run_experiment(const ExperimentPlan& plan, Progress& progress);

  const FamilySet& families_;
  const Registry& registry_;
  DatasetProvider& datasets_;
  RunnerOptions opt_;
  nlohmann::ordered_json environment_;
  nlohmann::ordered_json provenance_;
  nlohmann::ordered_json run_origin_;  // what each run's provenance shares (run_origin)
  std::string out_dir_;
};

// Fills each run's `validation` from the run of the family's reference backend with the same
// reference identity (family, dataset + options, params without backend-only params, seed) when
// the family left it to the runner. Returns the number of runs whose checksum differs from the
// reference. `backend_only(family)` lists a family's backend-only params, `reference_of(family)`
// names its reference backend (Registry::reference).
int apply_validation(nlohmann::ordered_json& runs,
                     const std::function<std::vector<std::string>(const std::string&)>& backend_only,
                     const std::function<std::string(const std::string&)>& reference_of);

// Backend-only params of a family: ParamSpec::backend_only, plus "threads", "devices" and "path"
// (they choose how a backend runs, never what it computes).
std::vector<std::string> backend_only_params(const Family& family);

// Default results root: $GPUDM_RESULTS_DIR, else <source dir>/results.
std::string default_results_root();

}  // namespace gpudm::experiments
