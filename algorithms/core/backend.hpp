#pragma once
// The one lifecycle of every backend of every family:
//
//   auto b = registry.create<Interface>(family, name);   // Interface derives from BackendOf<Options, Input>
//   b->configure(options);      // the family's typed options (its ParamTable fills them)
//   b->prepare(input);          // once per dataset or stream: uploads, layouts
//   b->call(..., timer);        // the family's one batched call, phases into the PhaseTimer&
//   b->describe();              // what the run resolved to (path, launch shape, threads, staging)
//
// A family's interface adds only its batched call (and what that call's results need). Drivers
// and families ask capabilities(); nothing compares backend names. Included by CUDA code: C++17.
#include <string>

#include <nlohmann/json.hpp>

#include "algorithms/core/dataset.hpp"

namespace gpudm {

enum class Placement { host, device };

struct Capabilities {
  Placement placement = Placement::host;
  // The oracle every other backend of the family is validated against (one per family).
  bool reference = false;
  // Honours a thread count in its options (a CPU thread pool).
  bool threads = false;
  // Devices this backend can use on this machine (0 for host backends).
  int devices = 0;
  // What its results do not depend on, e.g. "thread count" or "device count, launch shape";
  // "" when results depend only on the inputs (a single-threaded oracle).
  std::string deterministic_over;

  bool host() const { return placement == Placement::host; }
  bool device() const { return placement == Placement::device; }
  nlohmann::ordered_json to_json() const {
    return {{"placement", host() ? "host" : "device"}, {"reference", reference}, {"threads", threads},
            {"devices", devices}, {"deterministic_over", deterministic_over}};
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  // The registry key: "sequential" | "openmp" | "cuda". For messages and results, never for decisions.
  virtual std::string name() const = 0;
  virtual Capabilities capabilities() const = 0;
  // What the last prepare() and call resolved to (path, launch shape, threads, staging); {} when nothing.
  virtual nlohmann::ordered_json describe() const { return nlohmann::ordered_json::object(); }
};

// Input of a backend that needs no dataset (the ceilings probes).
struct NoInput {};

template <class Options, class Input = Dataset>
class BackendOf : public Backend {
 public:
  using options_type = Options;
  using input_type = Input;
  // Before prepare(); a later configure() takes effect at the next prepare().
  virtual void configure(const Options& options) { options_ = options; }
  const Options& options() const { return options_; }
  // Once per input. The input must outlive the backend's use of it.
  virtual void prepare(const Input& input) = 0;

 protected:
  Options options_{};
};

}  // namespace gpudm
