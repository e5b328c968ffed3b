// OpenMP TreeInterpreter: the (tree x row batch) tasks of the sequential backend spread over
// OpenMP threads, dynamic chunks of 8 (algorithms/subtree/cpu_interpreter.hpp on OmpTasks).
// Tasks write disjoint coverage words, so results are identical to the sequential backend.
#include "algorithms/subtree/cpu_interpreter.hpp"
#include "backends/openmp/omp_tasks.hpp"
#include "backends/subtree.hpp"

namespace gpudm::backend::openmp {

namespace {

class OpenmpTreeInterpreter final : public subtree::CpuTreeInterpreter {
 public:
  OpenmpTreeInterpreter() : CpuTreeInterpreter(std::make_unique<OmpTasks>()) {}
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count (tasks write disjoint coverage words)";
    return c;
  }
  void configure(const subtree::InterpreterOptions& o) override {
    GPUDM_REQUIRE(o.threads >= 0, "subtree/openmp: params.threads must be >= 0 (0 = OpenMP default)");
    options_ = o;
    tasks().set_threads(o.threads);
  }
};

}  // namespace

std::unique_ptr<subtree::TreeInterpreter> make_subtree_interpreter() {
  return std::make_unique<OpenmpTreeInterpreter>();
}

}  // namespace gpudm::backend::openmp
