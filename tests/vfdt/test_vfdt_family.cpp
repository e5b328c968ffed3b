// The "vfdt" family end to end with an in-test dataset provider: metrics, curve, checksums,
// validation against the sequential backend, parameter errors.
#include <gtest/gtest.h>

#include <memory>

#include "algorithms/core/family.hpp"
#include "algorithms/core/progress.hpp"
#include "tests/vfdt/streams.hpp"

namespace gpudm {
void register_vfdt(Registry&);
std::unique_ptr<Family> make_vfdt_family();
}  // namespace gpudm

namespace gpudm::vfdt {
namespace {

class TestProvider : public DatasetProvider {
 public:
  std::shared_ptr<const Dataset> get(const std::string& name, const nlohmann::json& options) override {
    const std::size_t rows = options.value("rows", std::size_t(20000));
    if (name == "mixed") return std::make_shared<Dataset>(testing::mixed_drift_stream(rows, 3, rows / 2));
    if (name == "known") return std::make_shared<Dataset>(testing::known_tree_stream(rows, 3, 0.1));
    throw Error("unknown test dataset '" + name + "'");
  }
};

CaseContext context(Registry& r, TestProvider& p, const std::string& backend, nlohmann::json params) {
  CaseContext c;
  c.family = "vfdt";
  c.backend = backend;
  c.dataset = "mixed";
  c.dataset_options = {{"rows", 12000}};
  params["peer"] = "";
  c.params = params;
  c.warmup = 0;
  c.repetitions = 1;
  c.registry = &r;
  c.datasets = &p;
  return c;
}

TEST(VfdtFamily, RunsACaseAndReportsStreamingMetrics) {
  Progress::set_quiet(true);
  Registry r;
  register_vfdt(r);
  TestProvider p;
  auto fam = make_vfdt_family();
  EXPECT_EQ(fam->name(), "vfdt");
  const CaseResult res = fam->run_case(context(r, p, "sequential", {{"trees", 5}, {"batch", 100}}));
  EXPECT_EQ(res.status, "ok");
  const auto& m = res.metrics;
  EXPECT_GT(m["accuracy"].get<double>(), 50.0);
  EXPECT_EQ(m["instances"].get<std::size_t>(), 12000u);
  EXPECT_GT(m["instances_per_s"].get<double>(), 0.0);
  EXPECT_EQ(m["curve"]["instances"].size(), m["curve"]["accuracy"].size());
  EXPECT_GE(m["curve"]["instances"].size(), 50u);
  EXPECT_EQ(m["features_per_leaf"].get<int>(), 3);  // floor(sqrt(9))
  EXPECT_GT(res.breakdown.seconds("traversal"), 0.0);
  EXPECT_EQ(res.checksum.size(), 16u);

  // the OpenMP backend with validation: identical predictions and trees
  if (r.info("vfdt", "openmp").available) {
    const CaseResult o = fam->run_case(context(r, p, "openmp", {{"trees", 5}, {"batch", 100}, {"validate", true}}));
    EXPECT_EQ(o.checksum, res.checksum);
    EXPECT_TRUE(o.validation["passed"].get<bool>()) << o.validation.dump();
  }
  // single tree mode
  const CaseResult t = fam->run_case(context(r, p, "sequential", {{"mode", "tree"}, {"batch", 1}}));
  EXPECT_EQ(t.metrics["trees"].get<int>(), 1);
  EXPECT_EQ(t.metrics["features_per_leaf"].get<int>(), 9);
}

TEST(VfdtFamily, RejectsBadParameters) {
  Registry r;
  register_vfdt(r);
  TestProvider p;
  auto fam = make_vfdt_family();
  try {
    fam->run_case(context(r, p, "sequential", {{"mode", "bush"}}));
    FAIL() << "mode bush accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'mode'"), std::string::npos) << e.what();
  }
  try {
    fam->run_case(context(r, p, "sequential", {{"path", "faithful"}}));  // mixed stream is not binary
    FAIL() << "faithful path on a non-binary stream accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("binary"), std::string::npos) << e.what();
  }
  for (const auto& [key, value] : {std::pair<const char*, const char*>{"leaf_prediction", "bayes"},
                                   {"batch_order", "sideways"}}) {
    try {
      fam->run_case(context(r, p, "sequential", {{key, value}}));
      FAIL() << key << " " << value << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + key + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(VfdtFamily, ReportsTheBatchOrderAndLeafVote) {
  Registry r;
  register_vfdt(r);
  TestProvider p;
  auto fam = make_vfdt_family();
  const CaseResult forest = fam->run_case(context(r, p, "sequential", {{"trees", 16}, {"batch", 256}}));
  EXPECT_EQ(forest.metrics.at("batch_order"), "stream");
  EXPECT_EQ(forest.metrics.at("leaf_prediction"), "mc");
  const CaseResult nb = fam->run_case(context(r, p, "sequential", {{"trees", 16}, {"batch", 256}, {"leaf_prediction", "nb"}}));
  EXPECT_EQ(nb.metrics.at("batch_order"), "deferred");
}

}  // namespace
}  // namespace gpudm::vfdt
