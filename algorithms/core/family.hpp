#pragma once
// What the experiment runner sees of a family: it asks the family to run one configured
// case and receives timings, a phase breakdown, metrics, validation and a checksum.
// The runner never knows the inside of a family; a family never knows which experiment runs.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/params.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/core/timing.hpp"

namespace gpudm {

using ojson = nlohmann::ordered_json;

// Resolves a dataset name from the catalog (file found through GPUDM_DATA_DIR /
// datasets/cache, or generated) into a Dataset. Options may override generator
// parameters (rows, seed, ...). Implemented in datasets/.
class DatasetProvider {
 public:
  virtual ~DatasetProvider() = default;
  virtual std::shared_ptr<const Dataset> get(const std::string& name, const nlohmann::json& options) = 0;
};

struct CaseContext {
  std::string experiment_id;
  std::string family;
  std::string backend;
  std::string dataset;           // catalog name
  nlohmann::json dataset_options;  // e.g. {"rows": 100000}
  nlohmann::json params;         // family params, defaults filled in by the runner
  std::uint64_t seed = 1;
  int warmup = 1;
  int repetitions = 5;
  bool smoke = false;
  const Registry* registry = nullptr;
  DatasetProvider* datasets = nullptr;
};

struct CaseResult {
  std::string status = "ok";  // ok | skipped | failed
  std::string reason;
  ojson dataset = ojson::object();     // name, rows, cols, classes, sha256 or generator+seed
  TimingStats timing;
  PhaseTimer breakdown;                // accumulated over the timed repetitions
  ojson metrics = ojson::object();     // GPops, GPops_per_s, instances_per_s, accuracy, ...
  ojson validation = ojson::object();  // reference_backend, max_error, tolerance, passed
  std::string checksum;                // of the result (hex), equal across backends when exact
  // True when `checksum` must equal the sequential backend's for the same dataset, params
  // (backend-only ones aside) and seed; the runner then fills `validation` from it
  // (docs/results-schema.md). metrics["checksum_exact"] = true is accepted too.
  bool checksum_exact = false;
  // Values the family resolved for params the run left to it ("auto", or a value that depends on
  // a backend-only param): they replace the given values in the reference identity, so a run is
  // only compared with a sequential run that computed the same thing. Written as
  // "resolved_params" in the results JSON.
  ojson resolved_params = ojson::object();
  // Files the case wrote that later cases of the sweep read (a recorded sample a replay case
  // estimates from). Written as "outputs": a resumed sweep whose case throws MissingInput for
  // one runs the kept run that wrote it again (the sweep moved to another machine).
  std::vector<std::string> outputs;
  std::string missing_input;  // the runner's: the path of a MissingInput the case threw
};

// What a family's command-line mode gets from run_experiment.
struct CommandEnv {
  const Registry* registry = nullptr;
  DatasetProvider* datasets = nullptr;
};

// A command-line mode a family provides: `run_experiment TRIGGER FAMILY ARGS...` (--train,
// --evaluate), or `run_experiment --predict MODEL.json ARGS...`, routed to the family whose
// command reads the model file's "format".
struct FamilyCommand {
  std::string trigger;       // "--train" | "--evaluate" | "--predict"
  std::string usage;         // the line --help shows, e.g. "--train gmt --dataset NAME [--test NAME | --cv K] [...]"
  std::string model_format;  // --predict: the "format" value of the model files it reads
  // The task a data file given by path (--dataset f.csv) is read as unless --task says otherwise
  // ("classification" | "regression"; "" = decided by the file).
  std::string data_task;
  // Gets the arguments after "TRIGGER FAMILY" (--predict: after "--predict", the model path
  // first); returns the exit status; throws Error (exit 1) or a usage error it reports itself.
  std::function<int(const std::vector<std::string>& args, CommandEnv& env)> run;
};

// One configured case as the runner drives it (nvbench's state.exec shape): the family prepares it
// (backend, data, upload) in Family::make_case; the one loop of run_timed_case() runs the warm-ups
// and the timed repetitions of run_once() (the clock and the samples are its, not the family's);
// finish() turns them into the result (dataset, metrics, validation against the oracle, backend
// info). No family times or repeats runs itself.
class TimedCase {
 public:
  virtual ~TimedCase() = default;
  // The warm-up runs to make of the `asked` ones (e.g. none for a host backend under a time budget,
  // whose buffers prepare() already touched).
  virtual int warmups(int asked) const { return asked; }
  // Before every run, warm-ups included, off the clock (nvbench's exec_tag::timer set-up): e.g. a
  // learner's state reset.
  virtual void set_up() {}
  // One repetition; its phases into `timer` (a disabled timer during the warm-ups).
  virtual void run_once(PhaseTimer& timer) = 0;
  // After every run, warm-ups included, off the clock (progress, a recording of the last run).
  virtual void tear_down(bool timed) { (void)timed; }
  // Around the timed repetitions (e.g. an energy meter), after the warm-ups.
  virtual void before_timed() {}
  virtual void after_timed() {}
  // Whether to stop the timed repetitions after `done` of them took `spent` seconds (a time
  // budget; the result then has fewer repetitions than asked).
  virtual bool enough(int done, double spent) const {
    (void)done;
    (void)spent;
    return false;
  }
  // The result, given the timing (its warm-up count set) and the repetitions' phases.
  virtual CaseResult finish(TimingStats timing, PhaseTimer breakdown) = 0;
};

// A TimedCase through the one timing loop (timing.hpp time_repetitions), then finish().
CaseResult run_timed_case(TimedCase& c, int warmup, int repetitions);

class Family {
 public:
  virtual ~Family() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // Every param, declared once (params.hpp: a family's ParamTable yields these).
  virtual std::vector<ParamSpec> params() const = 0;
  // Runs one case; throws Unavailable to report "skipped", Error for a failed run. By default the
  // case make_case() prepares, through run_timed_case(); a family whose run is not a repeated
  // timed step (a whole EA run with recordings, replays, cross-validation) overrides this.
  virtual CaseResult run_case(const CaseContext& ctx);
  // The case to time, prepared; nullptr when the family overrides run_case instead.
  virtual std::unique_ptr<TimedCase> make_case(const CaseContext& ctx) {
    (void)ctx;
    return nullptr;
  }
  // The family's command-line modes (none by default).
  virtual std::vector<FamilyCommand> commands() const { return {}; }
  // What the family splits over the ranks of an MPI run (algorithms/core/comm.hpp), for
  // the results' provenance; "" when it splits nothing yet: the runner then refuses to run it
  // with more than one rank.
  virtual std::string split_across_ranks() const { return ""; }
};

// Describes a dataset in the results JSON (shared by every family).
ojson describe_dataset(const Dataset& d);

// FNV-1a 64-bit over bytes, printed as 16 hex digits: the results' checksum.
std::string checksum_hex(const void* data, std::size_t bytes, std::uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace gpudm
