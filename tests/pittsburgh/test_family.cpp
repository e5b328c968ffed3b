// The family as the runner calls it: metrics, validation against the oracle, CPU extrapolation,
// learn mode, and errors for bad params.
#include <gtest/gtest.h>

#include <map>

#include "algorithms/core/family.hpp"
#include "test_util.hpp"

namespace gpudm {
std::unique_ptr<Family> make_pittsburgh_family();
}

using namespace gpudm;

namespace {
class FakeProvider : public DatasetProvider {
 public:
  std::shared_ptr<const Dataset> get(const std::string& name, const nlohmann::json& options) override {
    if (name != "rnd") throw Error("dataset '" + name + "' unknown");
    const std::size_t rows = options.value("rows", 3000);
    auto d = std::make_shared<Dataset>(pitt_test::random_dataset(rows, 6, 4, 17));
    d->source = "generator";
    d->path = "test";
    return d;
  }
};

CaseContext context(const std::string& backend, nlohmann::json params, const Registry& r, DatasetProvider& p) {
  CaseContext c;
  c.family = "pittsburgh";
  c.backend = backend;
  c.dataset = "rnd";
  c.dataset_options = nlohmann::json::object();
  c.params = std::move(params);
  c.seed = 5;
  c.warmup = 1;
  c.repetitions = 2;
  c.registry = &r;
  c.datasets = &p;
  return c;
}
}  // namespace

TEST(PittsburghFamily, EvaluateReportsMetricsAndValidates) {
  Registry r;
  register_pittsburgh(r);
  FakeProvider p;
  auto fam = make_pittsburgh_family();
  std::map<std::string, std::string> checksums;
  for (const std::string b : {"sequential", "openmp"}) {
    if (!r.info(pittsburgh::kFamilyName, b).available) continue;
    const CaseResult res = fam->run_case(context(b, {{"population", 12}, {"threads", 2}}, r, p));
    EXPECT_EQ(res.status, "ok");
    EXPECT_EQ(res.timing.samples.size(), 2u);
    EXPECT_GT(res.metrics["gpops"].get<double>(), 0);
    EXPECT_GT(res.metrics["gpops_per_s"].get<double>(), 0);
    EXPECT_EQ(res.metrics["rules"], 12 * 4);  // rules per individual = classes
    EXPECT_FALSE(res.metrics["estimated"].get<bool>());
    EXPECT_TRUE(res.validation["passed"].get<bool>()) << res.validation.dump();
    EXPECT_GT(res.breakdown.seconds("coverage"), 0.0);
    EXPECT_TRUE(res.checksum_exact);
    checksums[b] = res.checksum;
  }
  if (checksums.size() == 2) {
    EXPECT_EQ(checksums["sequential"], checksums["openmp"]);
  }
}

// A host run above estimate_above_gpops is estimated from pieces of the population spread over it
// (the shared replay estimator): flagged, its method stated, the whole population's GPops reported,
// a sample of the stated size, the pieces validated against the reference.
TEST(PittsburghFamily, CpuRunsAboveTheThresholdAreEstimatedFromASpreadSample) {
  Registry r;
  register_pittsburgh(r);
  FakeProvider p;
  auto fam = make_pittsburgh_family();
  const CaseResult full = fam->run_case(context("sequential", {{"population", 40}, {"estimate_above_gpops", 0}}, r, p));
  EXPECT_FALSE(full.metrics["estimated"].get<bool>());
  const double gpops = full.metrics["gpops"].get<double>();
  const CaseResult est = fam->run_case(context(
      "sequential", {{"population", 40}, {"estimate_above_gpops", gpops / 4}, {"estimate_sample_fraction", 0.2}, {"estimate_pieces", 4}},
      r, p));
  EXPECT_TRUE(est.metrics["estimated"].get<bool>());
  EXPECT_EQ(est.metrics["gpops"].get<double>(), gpops);  // reported for the whole population
  EXPECT_EQ(est.metrics["sampled_individuals"].get<int>(), 8);
  EXPECT_EQ(est.metrics["sampled_pieces"].get<int>(), 4);
  EXPECT_NE(est.metrics["estimate_method"].get<std::string>().find("replay_estimate.hpp"), std::string::npos);
  EXPECT_GT(est.timing.median(), 0.0);
  EXPECT_TRUE(est.validation["passed"].get<bool>()) << est.validation.dump();
  EXPECT_FALSE(est.checksum_exact);
}

TEST(PittsburghFamily, LearnModeReportsTrainAndTestAccuracy) {
  Registry r;
  register_pittsburgh(r);
  FakeProvider p;
  auto fam = make_pittsburgh_family();
  CaseContext c = context("sequential", {{"mode", "learn"}, {"population", 10}, {"generations", 3}}, r, p);
  c.warmup = 0;
  c.repetitions = 1;
  const CaseResult res = fam->run_case(c);
  EXPECT_GE(res.metrics["train_accuracy"].get<double>(), 0.0);
  EXPECT_GE(res.metrics["test_accuracy"].get<double>(), 0.0);
  EXPECT_EQ(res.metrics["train_rows"].get<int>() + res.metrics["test_rows"].get<int>(), 3000);
  EXPECT_EQ(res.metrics["generations"], 3);
}

TEST(PittsburghFamily, BadParamsAreErrors) {
  Registry r;
  register_pittsburgh(r);
  FakeProvider p;
  auto fam = make_pittsburgh_family();
  EXPECT_THROW(fam->run_case(context("sequential", {{"mode", "train"}}, r, p)), Error);
  EXPECT_THROW(fam->run_case(context("sequential", {{"population", 0}}, r, p)), Error);
  EXPECT_THROW(fam->run_case(context("sequential", {{"population", "many"}}, r, p)), Error);
}
