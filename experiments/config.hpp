#pragma once
// Experiment configs (docs/config-format.md): parsing with file:line:column errors, include
// resolution with cycle detection, validation of every key against the schema and the
// families' params (unknown keys rejected with the nearest valid key suggested), and sweep
// expansion into the ordered list of runs.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/error.hpp"
#include "algorithms/core/registry.hpp"
#include "experiments/families.hpp"
#include "experiments/tables.hpp"

namespace gpudm::experiments {

using ojson = nlohmann::ordered_json;

// A config the user must fix; the CLI exits with status 2 and touches no results.
class ConfigError : public UsageError {
 public:
  using UsageError::UsageError;
};

// The dataset name of runs of a config without "datasets" (families that need no data).
inline constexpr const char* kNoDataset = "none";

// Bounds of the config's own integers (docs/config-format.md); anything outside is a config error
// naming the key, so no value can wrap when it is narrowed to an int.
inline constexpr long long kMaxRepetitions = 1000000;
inline constexpr long long kMaxWarmup = 1000000;
// Runs one invocation may expand to without --allow-large-sweep (the largest paper config has
// 810); the count is computed before the sweep is expanded.
inline constexpr std::size_t kMaxRuns = 10000;

struct DatasetRef {
  std::string name;
  ojson options = ojson::object();
};

// One run of the expanded sweep.
struct RunSpec {
  std::string family;
  std::string backend;
  DatasetRef dataset;
  ojson params = ojson::object();  // every family param, defaults filled in, in the family's order
  std::uint64_t seed = 1;
  int warmup = 1;
  int repetitions = 5;
};

// A run's identity for --resume: (family, backend, dataset name + options, params, seed),
// as a canonical string (object keys sorted, so key order never matters).
std::string run_identity(const std::string& family, const std::string& backend, const std::string& dataset,
                         const ojson& dataset_options, const ojson& params, std::uint64_t seed);
std::string run_identity(const RunSpec& run);
// Same, read from a run record of a results file; "" when the record lacks identity keys.
std::string run_identity_of_record(const ojson& record);

struct ExperimentPlan {
  std::string id;
  std::string title;
  std::string paper;
  std::string config_path;    // the file as resolved (relative paths kept as given)
  std::string config_sha256;  // of the file's bytes
  std::string family;         // "" for a composite (include-only) config
  std::vector<RunSpec> runs;
  std::vector<ojson> tables;
  std::vector<PeerResults> peers;  // "peers": other tools' results the tables join, loaded
  std::vector<std::string> notes;
  std::vector<ExperimentPlan> included;  // run before this config's own runs
  bool smoke = false;

  std::size_t total_runs() const;  // this plan's runs plus every included plan's
};

// What validation needs to know about the world outside the config.
struct ValidationContext {
  const FamilySet* families = nullptr;
  const Registry* registry = nullptr;
  // "" when the dataset name is known, else the reason (with a suggestion). May be empty:
  // then names are only checked when the runner loads the data.
  std::function<std::string(const std::string&)> check_dataset;
  std::string paper_tables_dir;  // experiments/paper_tables
};

struct PlanOptions {
  bool smoke = false;                 // apply the config's "smoke" block
  std::vector<std::string> backends;  // --backend filter; empty means all
  std::vector<std::string> datasets;  // --only-dataset filter (dataset names as in the config); empty means all
  int repetitions = -1;               // --repetitions override; -1 keeps the config's
  bool allow_large_sweep = false;     // --allow-large-sweep: no kMaxRuns cap
};

// Loads, validates and expands `config_path` and everything it includes. Throws ConfigError
// with "file: json.path: message" (or "file:line:col: message" for malformed JSON).
ExperimentPlan load_plan(const std::string& config_path, const ValidationContext& ctx, const PlanOptions& opt);

// Parses JSON text with file:line:column errors and duplicate-key detection.
ojson parse_json_text(const std::string& text, const std::string& source);

}  // namespace gpudm::experiments
