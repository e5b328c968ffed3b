#pragma once
// run_experiment's command line (CLI11). The default mode runs a config; other modes (--list,
// --datasets, and the families' --evaluate/--train/--predict) are entries of a dispatch table
// that main.cpp assembles: a mode adds its trigger option (plus its own options) and runs when
// the trigger is given. Exit codes: 0 ok, 1 runtime failure, 2 usage or config error.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/family.hpp"
#include "algorithms/core/registry.hpp"
#include "experiments/families.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gpudm::experiments {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitConfig = 2;

// What the CLI needs from the product binary (or a test harness). Each getter is called only
// when a mode needs it, so e.g. --help never touches the GPU or the catalog.
struct CliServices {
  std::function<FamilySet&()> families;
  std::function<Registry&()> registry;
  std::function<DatasetProvider&()> datasets;
  // "" when `name` is a catalog dataset, else why not (with a suggestion); may be empty.
  std::function<std::string(const std::string& name)> check_dataset;
  // The --datasets report (datasets::render_catalog_report(datasets::catalog_report())).
  std::function<std::string()> datasets_report;
  std::string paper_tables_dir;  // experiments/paper_tables
  std::string results_root;      // "" means default_results_root()
};

// Options shared by every mode (a mode reads the ones it needs).
struct CliArgs {
  std::string config;
  std::vector<std::string> backends;  // --backend, repeatable
  std::vector<std::string> only_datasets;  // --only-dataset, repeatable
  std::string out;                    // --out
  bool smoke = false;
  bool resume = false;
  bool render = false;  // --render
  bool quiet = false;
  bool dry_run = false;
  bool allow_large_sweep = false;
  int repetitions = -1;
  std::vector<std::string> argv;
};

struct CliMode {
  std::string name;
  // Adds the trigger option (and the mode's own options, bound to storage the mode owns) and
  // returns the trigger; the mode runs when the trigger was given on the command line.
  std::function<CLI::Option*(CLI::App&, CliArgs&)> add;
  std::function<int(const CliArgs&, CliServices&)> run;

  // A raw mode parses its own options: when `raw_trigger` (e.g. "--train") is on the command
  // line, everything after it goes to `run_raw` untouched, and CLI11 parses only what precedes
  // it. `raw_help` is the line --help shows for it. Leave `add`/`run` empty for a raw mode.
  std::string raw_trigger;
  std::string raw_help;
  std::function<int(const std::vector<std::string>& rest, CliServices&)> run_raw;
};

// --list and --datasets.
std::vector<CliMode> builtin_modes();

// One raw mode per trigger the families' commands declare (Family::commands()): `--train F ...`
// and `--evaluate F ...` go to family F's command; `--predict MODEL.json ...` to the family
// whose command reads the model file's "format".
std::vector<CliMode> family_command_modes(FamilySet& families);

// Parses argv, dispatches to the first mode whose trigger was given, else runs CONFIG.
// Prints errors on one line on stderr ("run_experiment: error: ...").
int run_cli(int argc, const char* const* argv, CliServices& services, const std::vector<CliMode>& modes);

// The --list text: families, their backends (available or the skip reason), their params.
std::string list_families(FamilySet& families, const Registry& registry);

}  // namespace gpudm::experiments
