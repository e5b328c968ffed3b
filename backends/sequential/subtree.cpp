// Sequential TreeInterpreter: every (tree, row batch) task in order, one core
// (algorithms/subtree/cpu_interpreter.hpp on inline tasks). The oracle of the equivalence tests
// is reference_coverage (one instance at a time through the shared opcode header); this backend
// runs the batched encodings of algorithms/subtree/cpu_kernels.
#include "algorithms/subtree/cpu_interpreter.hpp"
#include "backends/subtree.hpp"

namespace gpudm::backend::sequential {

namespace {

class SequentialTreeInterpreter final : public subtree::CpuTreeInterpreter {
 public:
  SequentialTreeInterpreter() : CpuTreeInterpreter(std::make_unique<InlineTasks>()) {}
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }
};

}  // namespace

std::unique_ptr<subtree::TreeInterpreter> make_subtree_interpreter() {
  return std::make_unique<SequentialTreeInterpreter>();
}

}  // namespace gpudm::backend::sequential
