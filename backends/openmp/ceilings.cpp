// Ceilings on every CPU thread (OpenMP): aggregate copy bandwidth, FMA and popcount rates, and
// the cost of an empty parallel region (the CPU's "launch latency"). CpuCeilings on OmpTasks:
// one task per thread on the fixed schedule.
#include "backends/ceilings.hpp"

#include "algorithms/ceilings/cpu_ceilings.hpp"
#include "backends/openmp/omp_tasks.hpp"

namespace gpudm::backend::openmp {

namespace {

class OpenmpCeilings final : public ceilings::CpuCeilings {
 public:
  OpenmpCeilings() : CpuCeilings(std::make_unique<OmpTasks>(), true) {}
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count";
    return c;
  }
};

}  // namespace

std::unique_ptr<ceilings::CeilingsBackend> make_ceilings_backend() { return std::make_unique<OpenmpCeilings>(); }

}  // namespace gpudm::backend::openmp
