// The "vfdt" family end to end with an in-test dataset provider: metrics, curve, checksums,
// validation against the sequential backend, parameter errors.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "algorithms/core/family.hpp"
#include "algorithms/core/progress.hpp"
#include "algorithms/vfdt/forest.hpp"
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
    EXPECT_NE(std::string(e.what()).find("params.mode"), std::string::npos) << e.what();
  }
  try {
    fam->run_case(context(r, p, "sequential", {{"path", "faithful"}}));  // mixed stream is not binary
    FAIL() << "faithful path on a non-binary stream accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("binary"), std::string::npos) << e.what();
  }
  for (const auto& [key, value] : {std::pair<const char*, const char*>{"leaf_prediction", "bayes"},
                                   {"batch_order", "sideways"}, {"reset_rule", "sometimes"}, {"engine", "fast"},
                                   {"adwin_kernel", "bulk"}, {"path", "paper"}, {"bound_weight", "half"}}) {
    try {
      fam->run_case(context(r, p, "sequential", {{key, value}}));
      FAIL() << key << " " << value << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("params.") + key), std::string::npos) << e.what();
    }
  }
}

// Our accuracy over the first instances, for peers that ran on a prefix (the tables join them);
// a prefix longer than the stream counts the whole stream, keyed by the instances counted.
TEST(VfdtFamily, RecordsTheAccuracyAtRequestedPrefixes) {
  Registry r;
  register_vfdt(r);
  TestProvider p;
  auto fam = make_vfdt_family();
  const CaseResult res = fam->run_case(
      context(r, p, "sequential", {{"trees", 5}, {"batch", 100}, {"accuracy_prefixes", {1000, 50000}}}));
  const auto& at = res.metrics.at("accuracy_at_prefix");
  ASSERT_EQ(at.size(), 2u) << at.dump();
  EXPECT_DOUBLE_EQ(at.at("12000").get<double>(), res.metrics.at("accuracy").get<double>());
  EXPECT_GT(at.at("1000").get<double>(), 30.0);
  EXPECT_FALSE(res.metrics.contains("cuda_engine"));  // host backends describe no CUDA engine
  const CaseResult none = fam->run_case(context(r, p, "sequential", {{"trees", 5}, {"batch", 100}}));
  EXPECT_FALSE(none.metrics.contains("accuracy_at_prefix"));
  EXPECT_EQ(none.checksum, res.checksum);
}

// Params are declared once: the defaults come from ForestParams / EncodingOptions, and ranges are
// checked before a run.
TEST(VfdtFamily, ParamsCarryTheStructDefaultsAndRanges) {
  auto fam = make_vfdt_family();
  const ForestParams fp;
  const EncodingOptions eo;
  std::map<std::string, ParamSpec> specs;
  for (const auto& spec : fam->params()) specs[spec.name] = spec;
  EXPECT_EQ(specs.at("batch").default_value, fp.batch);
  EXPECT_EQ(specs.at("trees").default_value, fp.trees);
  EXPECT_EQ(specs.at("bins").default_value, eo.bins);
  EXPECT_EQ(specs.at("batch_order").default_value, "auto");
  EXPECT_EQ(specs.at("path").default_value, "default");
  EXPECT_TRUE(specs.at("path").backend_only);
  EXPECT_FALSE(specs.count("peer"));  // peers join in the tables, not in a run
  Registry r;
  register_vfdt(r);
  TestProvider p;
  for (const auto& [key, value] : {std::pair<const char*, int>{"trees", 0}, {"batch", 0}, {"grace", 0}, {"bins", 1},
                                   {"max_depth", 31}, {"max_values", 256}}) {
    try {
      fam->run_case(context(r, p, "sequential", {{key, value}}));
      FAIL() << key << " " << value << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("params.") + key), std::string::npos) << e.what();
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
