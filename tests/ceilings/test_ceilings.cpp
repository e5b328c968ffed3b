// The ceilings family on the CPU backends: every probe runs in smoke size, its self-check
// passes, the metric has the right name and a plausible magnitude; unsupported combinations
// and a missing GPU are reported as Unavailable (the runner's "skipped"), never a crash.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "algorithms/ceilings/ceilings.hpp"
#include "algorithms/ceilings/cpu_probes.hpp"
#include "algorithms/core/family.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/core/machine.hpp"

namespace gpudm {
std::unique_ptr<Family> make_ceilings_family();
void register_ceilings(Registry&);
}  // namespace gpudm

namespace {

struct Fixture {
  gpudm::Registry registry;
  std::unique_ptr<gpudm::Family> family = gpudm::make_ceilings_family();
  Fixture() { gpudm::register_ceilings(registry); }

  gpudm::CaseResult run(const std::string& backend, const std::string& probe, nlohmann::json extra = {}) {
    gpudm::CaseContext ctx;
    ctx.family = "ceilings";
    ctx.backend = backend;
    ctx.params = nlohmann::json{{"probe", probe}};
    if (extra.is_object()) ctx.params.update(extra);
    ctx.smoke = true;
    ctx.warmup = 1;
    ctx.repetitions = 3;
    ctx.registry = &registry;
    return family->run_case(ctx);
  }
};

bool has_backend(const gpudm::Registry& r, const std::string& b) {
  return r.has("ceilings", b) && r.info("ceilings", b).available;
}

}  // namespace

TEST(Ceilings, ProbeNamesRoundTripAndUnknownIsAnError) {
  for (auto p : gpudm::ceilings::all_probes()) EXPECT_EQ(gpudm::ceilings::parse_probe(gpudm::ceilings::to_string(p)), p);
  try {
    gpudm::ceilings::parse_probe("copy_bandwith");
    FAIL() << "no error";
  } catch (const gpudm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("copy_bandwidth"), std::string::npos) << e.what();
  }
  EXPECT_STREQ(gpudm::ceilings::metric_name(gpudm::ceilings::Probe::fma_rate), "flops_per_s");
  EXPECT_STREQ(gpudm::ceilings::metric_name(gpudm::ceilings::Probe::launch_latency), "seconds_per_launch");
}

TEST(Ceilings, ParamsAreDocumented) {
  Fixture f;
  EXPECT_EQ(f.family->name(), "ceilings");
  bool has_probe = false;
  for (const auto& p : f.family->params()) {
    EXPECT_FALSE(p.doc.empty()) << p.name;
    has_probe |= p.name == "probe";
  }
  EXPECT_TRUE(has_probe);
}

TEST(Ceilings, FmaReferenceFusedDiffersFromUnfusedButBothConverge) {
  const float x0 = gpudm::ceilings::fma_start(3, 5);
  const float f = gpudm::ceilings::fma_reference(x0, 200000, true);
  const float u = gpudm::ceilings::fma_reference(x0, 200000, false);
  EXPECT_NEAR(f, 1.0f, 0.01f);
  EXPECT_NEAR(u, 1.0f, 0.01f);
}

TEST(Ceilings, CpuFmaKernelMatchesScalarReferenceExactly) {
  const auto& k = gpudm::ceilings::cpu::fma_kernel();
  std::vector<float> out(static_cast<std::size_t>(k.chains * k.lanes));
  gpudm::ceilings::cpu::run_fma(12345, out.data());
  const auto c = gpudm::ceilings::cpu::check_fma(out.data(), 1, 12345);
  EXPECT_TRUE(c.max_error == 0.0) << k.isa << ": " << c.max_error;
  // A wrong iteration count must be detected (the check is not vacuous).
  EXPECT_GT(gpudm::ceilings::cpu::check_fma(out.data(), 1, 12346).max_error, 0.0);
}

TEST(Ceilings, SequentialProbes) {
  Fixture f;
  for (const char* probe : {"copy_bandwidth", "fma_rate", "popcount_rate"}) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = f.run("sequential", probe);
    const std::string metric = gpudm::ceilings::metric_name(gpudm::ceilings::parse_probe(probe));
    ASSERT_EQ(r.status, "ok") << probe << ": " << r.reason;
    EXPECT_TRUE(r.validation["passed"].get<bool>()) << probe << " " << r.validation.dump();
    ASSERT_TRUE(r.metrics.contains(metric)) << r.metrics.dump();
    EXPECT_EQ(r.metrics["threads"], 1);
    EXPECT_EQ(r.timing.samples.size(), 3u);
    const double v = r.metrics[metric].get<double>();
    // Any CPU of the last 15 years: > 100 MB/s copy, > 100 MFLOP/s, > 10 Mpopcount/s.
    EXPECT_GT(v, 1e7) << probe;
    EXPECT_GE(r.metrics[metric + "_best"].get<double>(), v) << probe;
    std::printf("%-16s %.3g %s (%.2f s)\n", probe, v, r.metrics["method"].get<std::string>().c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
}

TEST(Ceilings, SequentialRejectsGpuOnlyProbes) {
  Fixture f;
  for (const char* probe : {"h2d_bandwidth", "d2h_bandwidth", "launch_latency", "graph_launch_latency"})
    EXPECT_THROW(f.run("sequential", probe), gpudm::Unavailable) << probe;
}

TEST(Ceilings, OpenmpProbes) {
  Fixture f;
  if (!has_backend(f.registry, "openmp")) GTEST_SKIP() << f.registry.info("ceilings", "openmp").reason;
  for (const char* probe : {"copy_bandwidth", "fma_rate", "popcount_rate", "launch_latency"}) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = f.run("openmp", probe, {{"threads", 2}});
    std::printf("%-16s %.3g %s (%.2f s)\n", probe, r.metrics[gpudm::ceilings::metric_name(gpudm::ceilings::parse_probe(probe))].get<double>(),
                r.metrics["method"].get<std::string>().c_str(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    ASSERT_EQ(r.status, "ok") << probe << ": " << r.reason;
    EXPECT_TRUE(r.validation["passed"].get<bool>()) << probe << " " << r.validation.dump();
    EXPECT_EQ(r.metrics["threads"], 2) << probe;
  }
  const auto lat = f.run("openmp", "launch_latency", {{"threads", 2}, {"launches", 50}});
  const double s = lat.metrics["seconds_per_launch"].get<double>();
  EXPECT_GT(s, 1e-8);
  EXPECT_LT(s, 1.0);  // loose: a fork/join takes ~10 ms when CI oversubscribes the cores
}

TEST(Ceilings, CudaIsSkippedWithReasonWithoutDevice) {
  Fixture f;
  ASSERT_TRUE(f.registry.has("ceilings", "cuda"));
  if (gpudm::machine::gpu_count() > 0) GTEST_SKIP() << "a GPU is present: covered by test_ceilings_gpu";
  const auto& info = f.registry.info("ceilings", "cuda");
  EXPECT_FALSE(info.available);
  EXPECT_FALSE(info.reason.empty());
  EXPECT_THROW(f.run("cuda", "copy_bandwidth"), gpudm::Unavailable);
}

TEST(Ceilings, BadParamIsAnError) {
  Fixture f;
  EXPECT_THROW(f.run("sequential", "copy_bandwidth", {{"bytes", -5}}), gpudm::Error);
  EXPECT_THROW(f.run("sequential", "no_such_probe"), gpudm::Error);
}
