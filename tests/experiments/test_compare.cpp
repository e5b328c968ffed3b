// run_experiment --compare: the U test against known values, and the verdicts and input errors
// on synthetic results files and Google Benchmark JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "experiments/compare.hpp"
#include "experiments/config.hpp"
#include "test_util.hpp"

namespace {

using gpudm::experiments::compare_results;
using gpudm::experiments::CompareOptions;
using gpudm::experiments::ConfigError;
using gpudm::experiments::mann_whitney_u;
using gpudm::experiments::ojson;
using gpudm::testing::TempDir;
using gpudm::testing::write_file;

TEST(UTest, ExactWithoutTiesOnSmallSamples) {
  // scipy.stats.mannwhitneyu's documented example: U1 = 17, p = 0.1111 (exact).
  const auto t = mann_whitney_u({19, 22, 16, 29, 24}, {20, 11, 17, 12});
  EXPECT_DOUBLE_EQ(t.u, 17.0);
  EXPECT_EQ(t.method, "exact");
  EXPECT_NEAR(t.pvalue, 0.111111111, 1e-8);
  // Symmetric in the order of the samples.
  EXPECT_NEAR(mann_whitney_u({20, 11, 17, 12}, {19, 22, 16, 29, 24}).pvalue, t.pvalue, 1e-12);
  // Completely separated 4 vs 4: the smallest p the test can give, 2 / C(8, 4).
  EXPECT_NEAR(mann_whitney_u({1, 2, 3, 4}, {5, 6, 7, 8}).pvalue, 2.0 / 70.0, 1e-12);
}

TEST(UTest, AsymptoticWithTieAndContinuityCorrection) {
  // Reference values: the normal approximation with tie and continuity corrections (the formula
  // of scipy's method "asymptotic").
  std::vector<double> a, b;
  for (int i = 1; i <= 9; ++i) a.push_back(i), b.push_back(i + 9);
  auto t = mann_whitney_u(a, b);
  EXPECT_EQ(t.method, "asymptotic");
  EXPECT_NEAR(t.pvalue, 0.0004122948020616911, 1e-12);
  t = mann_whitney_u({1, 2, 3, 4, 5, 6, 7, 8, 9}, {5, 6, 7, 8, 9, 10, 11, 12, 13});
  EXPECT_NEAR(t.pvalue, 0.014908315051868211, 1e-12);
  t = mann_whitney_u({3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, {2, 7, 1, 8, 2, 8, 1, 8, 2, 8});
  EXPECT_NEAR(t.pvalue, 0.7595466927122063, 1e-12);
  // Ties on small samples also go asymptotic; all values tied: nothing to tell apart.
  EXPECT_EQ(mann_whitney_u({1, 1, 2}, {1, 2, 2}).method, "asymptotic");
  EXPECT_DOUBLE_EQ(mann_whitney_u({5, 5, 5, 5}, {5, 5, 5, 5}).pvalue, 1.0);
}

TEST(UTest, MinimumPValueAndTestableRepetitions) {
  EXPECT_NEAR(gpudm::experiments::min_two_sided_pvalue(3, 3), 0.1, 1e-12);
  EXPECT_NEAR(gpudm::experiments::min_two_sided_pvalue(4, 4), 2.0 / 70.0, 1e-12);
  EXPECT_NEAR(gpudm::experiments::min_two_sided_pvalue(1, 10), 2.0 / 11.0, 1e-12);
  EXPECT_DOUBLE_EQ(gpudm::experiments::min_two_sided_pvalue(1, 1), 1.0);
  EXPECT_EQ(gpudm::experiments::min_testable_repetitions(0.05), 4);
  EXPECT_EQ(gpudm::experiments::min_testable_repetitions(0.01), 5);
}

// A results file (schema 1) of experiment `id` with one run per {backend, population, median}.
struct RunDef {
  std::string backend;
  int population;
  double median;  // seconds
  double noise = 0.01;
  int reps = 9;
  std::string status = "ok";
  std::vector<double> samples = {};  // given samples instead of generated ones
  bool estimated = false;            // metrics.estimated
};

std::string results_file(const TempDir& d, const std::string& name, const std::string& id, const std::vector<RunDef>& runs,
                         unsigned seed, bool extra_param = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ojson doc;
  doc["schema_version"] = 1;
  doc["experiment"] = {{"id", id}, {"family", "toy"}, {"config_path", "configs/does_not_exist.json"}};
  doc["provenance"] = {{"git_sha", "0123456789abcdef"}, {"git_dirty", false}, {"utc_time", "2026-11-24T00:00:00Z"}};
  doc["environment"] = {{"cpu_model", "test cpu"}, {"devices", ojson::array()}};
  doc["runs"] = ojson::array();
  for (const auto& r : runs) {
    ojson run;
    run["family"] = "toy";
    run["backend"] = r.backend;
    run["dataset"] = {{"name", "iris"}, {"options", ojson::object()}};
    run["params"] = {{"population", r.population}};
    if (extra_param) run["params"]["added_later"] = "default";
    run["seed"] = 1;
    run["status"] = r.status;
    ojson samples = ojson::array();
    if (!r.samples.empty())
      for (double v : r.samples) samples.push_back(v);
    else if (r.status == "ok")
      for (int i = 0; i < r.reps; ++i) samples.push_back(r.median * (1.0 + r.noise * u(rng)));
    run["timing"] = {{"samples", samples}};
    run["metrics"] = {{"instances_per_s", 1000.0 / r.median}, {"estimated", r.estimated}};
    doc["runs"].push_back(run);
  }
  const std::string path = d / name;
  write_file(path, doc.dump(2));
  return path;
}

const ojson* run_named(const ojson& rep, const std::string& label_part) {
  for (const auto& r : rep["runs"])
    if (r["label"].get<std::string>().find(label_part) != std::string::npos) return &r;
  return nullptr;
}

TEST(Compare, SameDistributionPassesAndSlowdownFails) {
  TempDir d;
  const auto a = results_file(d, "a.json", "exp", {{"sequential", 10, 0.100}, {"openmp", 10, 0.050}}, 1);
  const auto same = results_file(d, "b.json", "exp", {{"sequential", 10, 0.100}, {"openmp", 10, 0.050}}, 2);
  ojson rep = compare_results(a, same, {});
  EXPECT_EQ(rep["exit_status"], 0);
  EXPECT_EQ(rep["summary"]["compared"], 2);
  EXPECT_EQ(rep["summary"]["slower"], 0);

  const auto slow = results_file(d, "c.json", "exp", {{"sequential", 10, 0.130}, {"openmp", 10, 0.050}}, 3);
  rep = compare_results(a, slow, {});
  EXPECT_EQ(rep["exit_status"], 1);
  const ojson* r = run_named(rep, "sequential");
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["verdict"], "slower");
  EXPECT_NEAR((*r)["ratio"].get<double>(), 1.3, 0.03);
  EXPECT_LT((*r)["pvalue"].get<double>(), 0.05);
  // The headline metric (conventional instances_per_s: the config is not found) is flagged too.
  EXPECT_TRUE((*r)["metrics"]["instances_per_s"]["worse"].get<bool>());
  EXPECT_EQ((*run_named(rep, "openmp"))["verdict"], "same");
  EXPECT_NE(gpudm::experiments::render_compare_markdown(rep).find("**SLOWER**"), std::string::npos);

  // Faster, and a significant change inside the threshold counts as same.
  rep = compare_results(slow, a, {});
  EXPECT_EQ(rep["exit_status"], 0);
  EXPECT_EQ((*run_named(rep, "sequential"))["verdict"], "faster");
  const auto bit = results_file(d, "e.json", "exp", {{"sequential", 10, 0.105, 0.002}, {"openmp", 10, 0.050}}, 4);
  const auto ref = results_file(d, "f.json", "exp", {{"sequential", 10, 0.100, 0.002}, {"openmp", 10, 0.050}}, 5);
  rep = compare_results(ref, bit, {});
  EXPECT_EQ((*run_named(rep, "sequential"))["verdict"], "same");
  CompareOptions tight;
  tight.threshold = 0.02;
  EXPECT_EQ(compare_results(ref, bit, tight)["exit_status"], 1);
}

TEST(Compare, NoisyAndTooFewSamplesAreAmbiguous) {
  TempDir d;
  // The median moves by +50 % but the samples are the same but one: p >> 0.05.
  auto spread = [](double mid) { return std::vector<double>{0.1, 0.2, 0.3, 0.4, mid, 1.6, 1.7, 1.8, 1.9}; };
  const auto a = results_file(d, "a.json", "exp", {{"sequential", 10, 1.0, 0, 9, "ok", spread(1.0)}}, 1);
  const auto b = results_file(d, "b.json", "exp", {{"sequential", 10, 1.5, 0, 9, "ok", spread(1.5)}}, 2);
  ojson rep = compare_results(a, b, {});
  const ojson& r = rep["runs"][0];
  EXPECT_NEAR(r["ratio"].get<double>(), 1.5, 1e-12);
  EXPECT_GT(r["pvalue"].get<double>(), 0.5);
  EXPECT_EQ(r["verdict"], "ambiguous");
  EXPECT_NE(r["reason"].get<std::string>().find("too noisy"), std::string::npos);
  EXPECT_EQ(rep["exit_status"], 0);

  const auto f1 = results_file(d, "c.json", "exp", {{"sequential", 10, 0.100, 0.01, 3}}, 1);
  const auto f2 = results_file(d, "d.json", "exp", {{"sequential", 10, 0.200, 0.01, 3}}, 2);
  EXPECT_THROW(compare_results(f1, f2, {}), ConfigError);  // 3 < 4 repetitions: input error
  CompareOptions any;
  any.min_repetitions = 1;
  rep = compare_results(f1, f2, any);
  EXPECT_EQ(rep["runs"][0]["verdict"], "ambiguous");
  EXPECT_EQ(rep["exit_status"], 0);
  EXPECT_TRUE(rep["runs"][0]["metrics"]["instances_per_s"]["worse"].get<bool>());
}

TEST(Compare, InputErrors) {
  TempDir d;
  const auto a = results_file(d, "a.json", "exp", {{"sequential", 10, 0.1}}, 1);
  const auto other = results_file(d, "b.json", "other_exp", {{"sequential", 10, 0.1}}, 2);
  const auto disjoint = results_file(d, "c.json", "exp", {{"sequential", 20, 0.1}}, 3);
  EXPECT_THROW(compare_results(a, other, {}), ConfigError);
  EXPECT_THROW(compare_results(a, disjoint, {}), ConfigError);
  EXPECT_THROW(compare_results(a, d / "missing.json", {}), ConfigError);
  write_file(d / "junk.json", "{\"hello\": 1}");
  EXPECT_THROW(compare_results(a, d / "junk.json", {}), ConfigError);
}

TEST(Compare, SkippedRunsAreNotCompared) {
  TempDir d;
  const auto a = results_file(d, "a.json", "exp", {{"sequential", 10, 0.1}, {"cuda", 10, 0.01}}, 1);
  const auto b = results_file(d, "b.json", "exp", {{"sequential", 10, 0.1}, {"cuda", 10, 0.0, 0.0, 0, "skipped"}}, 2);
  const ojson rep = compare_results(a, b, {});
  EXPECT_EQ(rep["summary"]["not_compared"], 1);
  EXPECT_EQ(rep["exit_status"], 0);
}

// A NEW side whose matched runs all failed compares nothing: an error, not a pass; a timing sample
// that is zero, negative or not finite is refused (it would read as infinitely faster).
TEST(Compare, NewSideWithoutAnOkRunAndNonPositiveSamplesAreErrors) {
  TempDir d;
  const auto a = results_file(d, "a.json", "exp", {{"sequential", 10, 0.1}, {"cuda", 10, 0.01}}, 1);
  const auto failed = results_file(d, "b.json", "exp", {{"sequential", 10, 0.0, 0.0, 0, "failed"}, {"cuda", 10, 0.0, 0.0, 0, "failed"}}, 2);
  try {
    compare_results(a, failed, {});
    ADD_FAILURE() << "a NEW side with no ok run passed";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no ok run"), std::string::npos) << e.what();
  }
  for (const double bad : {0.0, -0.5}) {
    std::vector<double> samples(9, 0.1);
    samples[3] = bad;
    const auto b = results_file(d, "c.json", "exp", {{"sequential", 10, 0.1, 0.01, 9, "ok", samples}, {"cuda", 10, 0.01}}, 3);
    try {
      compare_results(a, b, {});
      ADD_FAILURE() << "a sample of " << bad << " s was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("positive"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("c.json"), std::string::npos) << e.what();
    }
  }
}

TEST(Compare, EstimatedRunsAreMarked) {
  // metrics.estimated (a scaled or replayed time) travels to the report: perf_history.py does not
  // gate such runs, and the Markdown says which rows are estimates.
  TempDir d;
  RunDef est{"cuda", 10, 0.1};
  est.estimated = true;
  const auto a = results_file(d, "a.json", "exp", {{"sequential", 10, 0.1}, {"cuda", 10, 0.1}}, 1);
  const auto b = results_file(d, "b.json", "exp", {{"sequential", 10, 0.1}, est}, 2);
  const ojson rep = compare_results(a, b, {});
  EXPECT_FALSE(run_named(rep, "sequential")->at("new").contains("estimated"));
  EXPECT_TRUE((*run_named(rep, "cuda"))["new"]["estimated"].get<bool>());
  EXPECT_FALSE((*run_named(rep, "cuda"))["base"].contains("estimated"));
  const std::string md = gpudm::experiments::render_compare_markdown(rep);
  EXPECT_NE(md.find("(estimated)"), std::string::npos);
}

TEST(Compare, CommonParamsMatchAcrossAnAddedParam) {
  TempDir d;
  const auto a = results_file(d, "a.json", "exp", {{"sequential", 10, 0.1}, {"sequential", 20, 0.2}}, 1);
  const auto b = results_file(d, "b.json", "exp", {{"sequential", 10, 0.1}, {"sequential", 20, 0.2}}, 2, true);
  EXPECT_THROW(compare_results(a, b, {}), ConfigError);  // every identity differs
  CompareOptions o;
  o.common_params = true;
  const ojson rep = compare_results(a, b, o);
  EXPECT_EQ(rep["summary"]["compared"], 2);
  EXPECT_EQ(rep["summary"]["same"], 2);
}

TEST(Compare, GoogleBenchmarkJson) {
  TempDir d;
  auto gb = [&](const std::string& name, double ms) {
    ojson doc;
    doc["context"] = {{"date", "2026-11-24"}};
    doc["benchmarks"] = ojson::array();
    for (int i = 0; i < 9; ++i)
      doc["benchmarks"].push_back({{"name", "fam/case/small/sequential"}, {"run_name", "fam/case/small/sequential"},
                                   {"run_type", "iteration"}, {"real_time", ms * (1.0 + 0.01 * (i % 3))},
                                   {"time_unit", "ms"}, {"items_per_second", 1e6 / ms}});
    doc["benchmarks"].push_back({{"name", "fam/case/small/sequential_median"}, {"run_name", "fam/case/small/sequential"},
                                 {"run_type", "aggregate"}, {"real_time", ms}, {"time_unit", "ms"}});
    doc["benchmarks"].push_back({{"name", "fam/case/medium/cuda"}, {"run_name", "fam/case/medium/cuda"}, {"run_type", "iteration"},
                                 {"error_occurred", true}, {"error_message", "skipped: no GPU"}});
    write_file(d / name, doc.dump());
    return d / name;
  };
  const auto a = gb("a.json", 10.0), b = gb("b.json", 14.0);
  ojson rep = compare_results(a, b, {});
  EXPECT_EQ(rep["kind"], "google_benchmark");
  EXPECT_EQ(rep["exit_status"], 1);
  const ojson* r = run_named(rep, "fam/case/small/sequential");
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["base"]["n"], 9);
  EXPECT_NEAR((*r)["base"]["median"].get<double>(), 0.0101, 1e-9);
  EXPECT_EQ((*r)["verdict"], "slower");
  EXPECT_TRUE((*r)["metrics"]["items_per_second"]["worse"].get<bool>());
  EXPECT_EQ((*run_named(rep, "medium/cuda"))["verdict"], "not_compared");
  EXPECT_EQ(compare_results(a, a, {})["exit_status"], 0);
  // A results file against Google Benchmark JSON is an input error.
  const auto res = results_file(d, "r.json", "exp", {{"sequential", 10, 0.1}}, 1);
  EXPECT_THROW(compare_results(res, a, {}), ConfigError);
}

}  // namespace
