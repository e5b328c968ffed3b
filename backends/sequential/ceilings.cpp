// Ceilings on one CPU thread: copy bandwidth, FMA rate and popcount rate of a single core
// (CpuCeilings on inline tasks; the probes themselves are algorithms/ceilings/cpu_probes.*).
#include "backends/ceilings.hpp"

#include "algorithms/ceilings/cpu_ceilings.hpp"

namespace gpudm::backend::sequential {

namespace {

class SequentialCeilings final : public ceilings::CpuCeilings {
 public:
  SequentialCeilings() : CpuCeilings(std::make_unique<InlineTasks>(), false) {}
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }
};

}  // namespace

std::unique_ptr<ceilings::CeilingsBackend> make_ceilings_backend() { return std::make_unique<SequentialCeilings>(); }

}  // namespace gpudm::backend::sequential
