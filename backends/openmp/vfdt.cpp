// OpenMP streaming forest: the CPU engine with the trees of a mini-batch step spread over
// threads (static schedule; every tree's state is private to its step, so results are
// identical to the sequential backend) and the vote spread over instances.
#include <omp.h>

#include "algorithms/vfdt/cpu_forest.hpp"
#include "backends/vfdt.hpp"

namespace gpudm::backend::openmp {

namespace {
class OpenmpForest final : public vfdt::CpuForest {
 public:
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count";
    return c;
  }
  nlohmann::ordered_json describe() const override { return {{"threads", threads_}}; }
  void prepare(const vfdt::EncodedStream& stream) override {
    threads_ = options().threads > 0 ? options().threads : omp_get_max_threads();
    CpuForest::prepare(stream);
  }

 protected:
  void parallel_trees(int trees, const std::function<void(int)>& fn) override {
    if (trees == 1) return fn(0);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int t = 0; t < trees; ++t) fn(t);
  }
  void parallel_instances(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn) override {
    if (n < 256) return fn(0, n);
    const long long chunks = static_cast<long long>(threads_) * 4;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (long long c = 0; c < chunks; ++c) {
      const std::size_t j0 = n * c / chunks, j1 = n * (c + 1) / chunks;
      if (j0 < j1) fn(j0, j1);
    }
  }

 private:
  int threads_ = omp_get_max_threads();
};
}  // namespace

std::unique_ptr<vfdt::ForestBackend> make_vfdt_forest() { return std::make_unique<OpenmpForest>(); }

}  // namespace gpudm::backend::openmp
