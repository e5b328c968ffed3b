#pragma once
// A tiny test-only family ("toy") and an in-memory dataset provider that exercise the runner.
// They live in tests/ only: the product's family list never contains them.
#include <atomic>
#include <memory>
#include <string>

#include "algorithms/core/family.hpp"
#include "algorithms/core/registry.hpp"
#include "experiments/families.hpp"

namespace gpudm::testing {

// Datasets: "tiny" (40 rows x 2, 2 classes), "tiny_reg" (regression), "tiny_surrogate"
// (marked surrogate); options {"rows": N} and {"seed": S}. "broken" throws like a bad file.
class TinyProvider : public DatasetProvider {
 public:
  std::shared_ptr<const Dataset> get(const std::string& name, const nlohmann::json& options) override;
  std::atomic<int> loads{0};
};

// The toy family's behaviour is driven by its params:
//   population (int, 10)   work size in [1, 100000]; the checksum depends on it and on the data
//   threads (int, 1)        backend-only
//   fail (string, "")       "error": run_case throws Error; "unavailable": throws Unavailable;
//                           "exit": the process exits at once (a simulated crash);
//                           "no_samples": returns "ok" without timing samples; "sleep": 1.5 s, then ok
//   openmp_differs (bool)   the openmp backend returns another checksum (validation must fail)
//   exact (bool, true)      marks the checksum exact
//   estimated (bool, false) sets metrics.estimated
//   order (string, "auto")  "auto" resolves to "stream", or "deferred" with engine "batched"
//                           (a backend-only param); "deferred" changes the checksum
//   engine (string, "auto") backend-only
// Backends: sequential, openmp (available), cuda (unavailable: "no device in tests").
class ToyFamily : public Family {
 public:
  std::string name() const override { return "toy"; }
  std::string description() const override { return "test-only family that sums its data"; }
  std::vector<ParamSpec> params() const override;
  CaseResult run_case(const CaseContext& ctx) override;
  // --train toy ARGS: prints "toy-train|ARGS..."; --predict M.json (format "toy-model"): "toy-predict|M.json|...".
  std::vector<FamilyCommand> commands() const override;
  static std::atomic<int> calls;    // run_case calls in this process
  static std::atomic<int> exit_at;  // > 0: the process exits (status 3) in that call
};

void register_toy(Registry& r);
experiments::FamilySet toy_families();

}  // namespace gpudm::testing
