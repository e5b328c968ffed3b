// Sequential streaming forest: the CPU engine with plain loops. With batch = 1 it is the exact
// instance-by-instance algorithm; the family's reference backend (tests/vfdt checks it against an
// independent small reference written from the paper).
#include "algorithms/vfdt/cpu_forest.hpp"
#include "backends/vfdt.hpp"

namespace gpudm::backend::sequential {

namespace {
class SequentialForest final : public vfdt::CpuForest {
 public:
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }
  nlohmann::ordered_json describe() const override { return {{"threads", 1}}; }
};
}  // namespace

std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest() { return std::make_unique<SequentialForest>(); }

}  // namespace gpudm::backend::sequential
