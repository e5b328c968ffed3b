// OpenMP streaming forest: the CPU engine on OpenMP tasks (backends/openmp/omp_tasks.hpp): the
// trees of a mini-batch step spread over threads (static schedule; every tree's state is private
// to its step, so results are identical to the sequential backend) and the vote over instances.
#include "algorithms/vfdt/cpu_forest.hpp"
#include "backends/openmp/omp_tasks.hpp"
#include "backends/vfdt.hpp"

namespace gpudm::backend::openmp {

namespace {
class OpenmpForest final : public vfdt::CpuForest {
 public:
  OpenmpForest() : CpuForest(std::make_unique<OmpTasks>()) {}
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count";
    return c;
  }
  nlohmann::ordered_json describe() const override { return {{"threads", tasks().threads()}}; }
  void prepare(const vfdt::EncodedStream& stream) override {
    tasks().set_threads(options().threads);
    CpuForest::prepare(stream);
  }
};
}  // namespace

std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest() { return std::make_unique<OpenmpForest>(); }

}  // namespace gpudm::backend::openmp
