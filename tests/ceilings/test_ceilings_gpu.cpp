// The ceilings family on the GPU (label gpu): every probe in smoke size, self-checks pass, and
// the numbers are in the range any datacentre GPU of the last years reaches (loose bounds: this
// guards against broken units and eliminated work, not against a slow machine).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "algorithms/ceilings/ceilings.hpp"
#include "algorithms/core/family.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/core/machine.hpp"

namespace gpudm {
std::unique_ptr<Family> make_ceilings_family();
void register_ceilings(Registry&);
}  // namespace gpudm

TEST(CeilingsGpu, EveryProbe) {
  if (gpudm::machine::gpu_count() == 0)
    GTEST_SKIP() << "no CUDA device: " << gpudm::machine::gpu_unavailable_reason();
  gpudm::Registry registry;
  gpudm::register_ceilings(registry);
  auto family = gpudm::make_ceilings_family();
  struct Expect {
    const char* probe;
    double lo, hi;
  };
  const Expect cases[] = {
      {"copy_bandwidth", 1e11, 2e13},       {"fma_rate", 1e12, 2e14},
      {"popcount_rate", 1e11, 1e14},        {"h2d_bandwidth", 1e9, 2e11},
      {"d2h_bandwidth", 1e9, 2e11},         {"launch_latency", 1e-7, 1e-4},
      {"launch_sync_latency", 5e-7, 1e-3},  {"graph_launch_latency", 1e-8, 1e-4},
  };
  for (const auto& c : cases) {
    gpudm::CaseContext ctx;
    ctx.family = "ceilings";
    ctx.backend = "cuda";
    ctx.params = {{"probe", c.probe}};
    ctx.smoke = true;
    ctx.warmup = 1;
    ctx.repetitions = 3;
    ctx.registry = &registry;
    const auto r = family->run_case(ctx);
    ASSERT_EQ(r.status, "ok") << c.probe << ": " << r.reason;
    EXPECT_TRUE(r.validation["passed"].get<bool>()) << c.probe << " " << r.validation.dump();
    const std::string metric = gpudm::ceilings::metric_name(gpudm::ceilings::parse_probe(c.probe));
    const double v = r.metrics[metric].get<double>();
    EXPECT_GT(v, c.lo) << c.probe;
    EXPECT_LT(v, c.hi) << c.probe;
    EXPECT_GT(r.breakdown.seconds("probe"), 0.0) << c.probe;
    EXPECT_TRUE(r.metrics.contains("device_" + metric)) << c.probe;
    ASSERT_TRUE(r.metrics.contains("energy")) << c.probe;
    std::printf("%-22s %-20s %.4g (best %.4g)  energy %s\n", c.probe, metric.c_str(), v,
                r.metrics[metric + "_best"].get<double>(), r.metrics["energy"].dump().c_str());
  }
}
