// Sequential streaming forest: the CPU engine with plain loops. With batch = 1 it is the exact
// instance-by-instance algorithm (the oracle of the equivalence tests).
#include "backends/sequential/vfdt.hpp"

#include "algorithms/vfdt/cpu_forest.hpp"

namespace gpudm::backend::sequential {

namespace {
class SequentialForest final : public vfdt::CpuForest {
 public:
  std::string name() const override { return "sequential"; }
};
}  // namespace

std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest() { return std::make_unique<SequentialForest>(); }

}  // namespace gpudm::backend::sequential
