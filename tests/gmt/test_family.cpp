// The "gmt" family as the runner calls it: one case per backend, breakdown with the six
// procedures, metrics, validation and equal checksums on the CPU backends.
#include <gtest/gtest.h>

#include "algorithms/core/family.hpp"
#include "common.hpp"

namespace gpudm {
std::unique_ptr<Family> make_gmt_family();
}

using namespace gpudm;

namespace {
class FakeProvider : public DatasetProvider {
 public:
  std::shared_ptr<const Dataset> get(const std::string& name, const nlohmann::json&) override {
    if (name == "classes") return std::make_shared<Dataset>("classes", Task::classification, 10, std::vector<Attribute>{Attribute{"a", AttributeKind::numeric, {}}}, std::vector<std::string>{"x", "y"});
    auto d = std::make_shared<Dataset>(gmt_test::make_dataset(3000, 3, 9, gmt_test::piecewise, 0.1));
    d->set_name(name);
    return d;
  }
};
}  // namespace

TEST(GmtFamily, RunsACaseOnEveryCpuBackendWithTheSameTree) {
  auto fam = make_gmt_family();
  EXPECT_EQ(fam->name(), "gmt");
  nlohmann::json params = nlohmann::json::object();
  for (const auto& p : fam->params()) params[p.name] = p.default_value;
  params["iterations"] = 8;
  params["population"] = 10;
  params["test_fraction"] = 0.25;
  params["extrapolate_iterations"] = 80;
  FakeProvider provider;
  std::vector<std::string> sums;
  for (const auto& backend : gmt_test::cpu_backends()) {
    CaseContext ctx;
    ctx.family = "gmt";
    ctx.backend = backend;
    ctx.dataset = "piecewise";
    ctx.params = params;
    ctx.seed = 4;
    ctx.warmup = 1;
    ctx.repetitions = 2;
    ctx.registry = &gmt_test::registry();
    ctx.datasets = &provider;
    CaseResult r = fam->run_case(ctx);
    EXPECT_EQ(r.status, "ok");
    EXPECT_EQ(r.timing.samples.size(), 2u);
    EXPECT_TRUE(r.metrics["estimated"].get<bool>());
    // The estimate scales the 8 measured iterations by 10 and counts the set-up once: each timed
    // run (not the warm-up) splits into its measured set-up and loop.
    const auto measured = r.metrics["estimate_measured_seconds"].get<std::vector<double>>();
    const auto setup = r.metrics["estimate_setup_seconds"].get<std::vector<double>>();
    const auto loop = r.metrics["estimate_loop_seconds"].get<std::vector<double>>();
    ASSERT_EQ(measured.size(), 2u);
    ASSERT_EQ(setup.size(), 2u);
    ASSERT_EQ(loop.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_GT(setup[i], 0.0) << backend;
      EXPECT_GT(loop[i], 0.0) << backend;
      EXPECT_LT(loop[i], measured[i]) << backend;
      EXPECT_NEAR(setup[i] + loop[i], measured[i], 1e-12 * measured[i]) << backend;
      EXPECT_NEAR(r.timing.samples[i], setup[i] + 10.0 * loop[i], 1e-9 * r.timing.samples[i]) << backend;
    }
    EXPECT_GT(r.metrics["test_rmse"].get<double>(), 0.0);
    EXPECT_GE(r.metrics["leaves"].get<int>(), 1);
    EXPECT_TRUE(r.validation["passed"].get<bool>());
    for (const char* ph : {"redistribute", "separate", "repair", "reorganize", "calc_models", "estimate_errors", "reduction",
                           "transfers", "cpu_ea"})
      EXPECT_GT(r.breakdown.seconds(ph), 0.0) << backend << " " << ph;
    EXPECT_EQ(r.breakdown.seconds("flattening"), 0.0) << "CPU backends read the compact trees";
    // Repairs are folded into the evaluator: one call per generation (the initial population's included).
    const auto calls = r.metrics["evaluate_calls"].get<long long>();
    EXPECT_GE(calls, 1);
    EXPECT_LE(calls, r.metrics["iterations"].get<long long>() + 1);
    EXPECT_GE(r.metrics["evaluations"].get<long long>(), calls);
    EXPECT_GE(r.metrics["repairs"].get<long long>(), 0);
    sums.push_back(r.checksum);
  }
  for (const auto& s : sums) EXPECT_EQ(s, sums[0]);
  // Classification data and a missing backend are clear errors.
  CaseContext bad;
  bad.backend = "sequential";
  bad.dataset = "classes";
  bad.params = params;
  bad.registry = &gmt_test::registry();
  bad.datasets = &provider;
  EXPECT_THROW(fam->run_case(bad), Error);
  bad.dataset = "piecewise";
  bad.backend = "cuda";
  if (!gmt_test::registry().info("gmt", "cuda").available) {
    EXPECT_THROW(fam->run_case(bad), Unavailable);
  }
}

// The paper's design (the tree as found: no smoothing, no bounds) is scored beside the defaults;
// with smoothing and the clamp off the two scores are the same numbers.
TEST(GmtFamily, ScoresTheTreeAsFoundBesideTheDefaults) {
  auto fam = make_gmt_family();
  nlohmann::json params = nlohmann::json::object();
  for (const auto& p : fam->params()) params[p.name] = p.default_value;
  params["iterations"] = 20;
  params["population"] = 10;
  params["test_fraction"] = 0.25;
  FakeProvider provider;
  auto run = [&](double smoothing, double clamp) {
    params["smoothing"] = smoothing;
    params["clamp_margin"] = clamp;
    CaseContext ctx;
    ctx.family = "gmt";
    ctx.backend = "sequential";
    ctx.dataset = "piecewise";
    ctx.params = params;
    ctx.seed = 4;
    ctx.repetitions = 1;
    ctx.registry = &gmt_test::registry();
    ctx.datasets = &provider;
    return fam->run_case(ctx);
  };
  const CaseResult off = run(0.0, -1.0);
  ASSERT_EQ(off.status, "ok");
  EXPECT_EQ(off.metrics.at("test_rmse").get<double>(), off.metrics.at("test_rmse_as_found").get<double>());
  EXPECT_EQ(off.metrics.at("test_gross_errors").get<long long>(), off.metrics.at("test_gross_errors_as_found").get<long long>());
  EXPECT_EQ(off.metrics.at("test_rmse_without_gross").get<double>(),
            off.metrics.at("test_rmse_as_found_without_gross").get<double>());
  // Smoothing changes the default score, not the tree's own (the trees do not depend on it).
  const CaseResult on = run(15.0, 0.1);
  ASSERT_EQ(on.status, "ok");
  EXPECT_EQ(on.metrics.at("test_rmse_as_found").get<double>(), off.metrics.at("test_rmse_as_found").get<double>());
  EXPECT_NE(on.metrics.at("test_rmse").get<double>(), off.metrics.at("test_rmse").get<double>());
}
