// The leaf rule (fewer model parameters than rows), bounded predictions (Cubist's clamp), M5's
// smoothing, their model-file form, and the cross-validation folds every learner of a study shares.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "algorithms/core/phase_timer.hpp"
#include "algorithms/gmt/cli.hpp"
#include "algorithms/gmt/csv.hpp"
#include "algorithms/gmt/leaf_stats.hpp"
#include "algorithms/gmt/train.hpp"
#include "common.hpp"
#include "datasets/csv_files.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {
std::string tmp(const std::string& name) { return ::testing::TempDir() + "gmt_bounds_" + name; }
double linear4(const std::vector<double>& x) { return 1.0 + x[0] - 2.0 * x[1] + 0.5 * x[2] + 3.0 * x[3]; }
double slope(const std::vector<double>& x) { return 10.0 * x[0]; }

// A leaf with every attribute in its model, evaluated on `d` with rows_per_param r.
Tree fitted_leaf(const Dataset& d, double r, const std::string& backend) {
  std::vector<int> all(d.cols());
  for (std::size_t c = 0; c < d.cols(); ++c) all[c] = static_cast<int>(c);
  Tree t = Tree::leaf(all);
  auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", backend);
  EvalOptions o;
  o.rows_per_param = r;
  eval->configure(o);
  eval->prepare(d);
  PhaseTimer timer;
  eval->evaluate(single(t, 7), timer);
  return t;
}
}  // namespace

TEST(GmtBounds, TheLeafRuleKeepsFewerParametersThanRows) {
  using leafstats::max_leaf_params;
  EXPECT_EQ(max_leaf_params(5, 1.0), 4);  // the papers' rule: more rows than parameters
  EXPECT_EQ(max_leaf_params(6, 3.0), 1);  // fewer than 2
  EXPECT_EQ(max_leaf_params(7, 3.0), 2);  // fewer than 2.33
  EXPECT_EQ(max_leaf_params(1, 1.0), 1);  // at least the intercept
  EXPECT_EQ(max_leaf_params(0, 2.0), 1);
  EXPECT_EQ(max_leaf_params(5, 0.0), std::numeric_limits<long long>::max());  // off
  EXPECT_EQ(EvalOptions{}.rows_per_param, 1.0);                                // the default is the papers' rule
  // A leaf of 5 rows with 4 attributes in its model: exactly fitted (5 parameters) with the rule
  // off, 4 parameters (the last attribute dropped) by default, on every CPU backend.
  const Dataset d = gmt_test::make_dataset(5, 4, 3, linear4, 1.0);
  for (const char* b : {"sequential", "openmp"}) {
    SCOPED_TRACE(b);
    const Tree off = fitted_leaf(d, 0.0, b), rule = fitted_leaf(d, 1.0, b);
    EXPECT_EQ(off.node(0).rank, 5);
    EXPECT_LT(off.node(0).stats.sse, 1e-6);  // the exact fit the rule forbids
    EXPECT_EQ(rule.node(0).rank, 4);
    EXPECT_EQ(rule.node(0).m_len, 3);
    EXPECT_GT(rule.node(0).stats.sse, 1e-3);
  }
}

TEST(GmtBounds, PredictionsAreClampedToTheLeafRangeWidenedByTheMargin) {
  // Two leaves split at x1 <= 5; the right one models y = 10 x1 (its rows: targets 50 .. 100).
  const Dataset train = gmt_test::make_dataset(400, 1, 5, slope);
  Tree t = Tree::join(0, 5.0f, Tree::leaf({}), Tree::leaf({0}));
  t.set_fit(1, {}, {25.0}, 1);
  t.set_fit(2, {0}, {0.0, 10.0}, 2);
  const PredictionBounds b = prediction_bounds(t, train, 0.1);
  ASSERT_TRUE(b.on());
  double lo2 = 1e300, hi2 = -1e300, lo = 1e300, hi = -1e300;
  for (std::size_t r = 0; r < train.rows(); ++r) {
    const double y = train.target(r);
    lo = std::min(lo, y), hi = std::max(hi, y);
    if (train.at(r, 0) > 5.0f) lo2 = std::min(lo2, y), hi2 = std::max(hi2, y);
  }
  EXPECT_EQ(b.lo, lo);
  EXPECT_EQ(b.hi, hi);
  EXPECT_EQ(b.leaf_lo[2], lo2);
  EXPECT_EQ(b.leaf_hi[2], hi2);
  Dataset test = gmt_test::make_dataset(3, 1, 6, slope);
  test.column(0)[0] = 30.0f;  // far right: the model says 300
  test.column(0)[1] = 7.0f;   // inside: 70, unchanged
  test.column(0)[2] = 1.0f;   // the left leaf's constant 25, inside its range widened
  test.set_target(0, 120.0f);
  test.set_target(1, 70.0f);
  test.set_target(2, 20.0f);
  bool moved = false;
  EXPECT_DOUBLE_EQ(predict(t, nullptr, test, 0), 300.0);
  EXPECT_DOUBLE_EQ(predict(t, &b, test, 0, &moved), hi2 + 0.1 * (hi2 - lo2));
  EXPECT_TRUE(moved);
  EXPECT_DOUBLE_EQ(predict(t, &b, test, 1, &moved), 70.0);
  EXPECT_FALSE(moved);
  EXPECT_DOUBLE_EQ(predict(t, &b, test, 2, &moved), 25.0);
  EXPECT_FALSE(moved);
  // A leaf no training row reached (x1 > 20) is bounded by the training range widened alike (a
  // leaf's own widened range always lies inside that one).
  Tree empty_right = Tree::join(0, 20.0f, Tree::leaf({}), Tree::leaf({0}));
  empty_right.set_fit(1, {}, {25.0}, 1);
  empty_right.set_fit(2, {0}, {0.0, 10.0}, 2);
  const PredictionBounds eb = prediction_bounds(empty_right, train, 0.1);
  EXPECT_GT(eb.leaf_lo[2], eb.leaf_hi[2]);  // no rows
  EXPECT_DOUBLE_EQ(predict(empty_right, &eb, test, 0), hi + 0.1 * (hi - lo));
  // Off: no clamp; the score counts what moved and the largest error.
  // The ranges do not depend on the margin (--cv's margin sweep copies them).
  PredictionBounds wide = b;
  wide.margin = 0.5;
  const PredictionBounds half = prediction_bounds(t, train, 0.5);
  EXPECT_DOUBLE_EQ(predict(t, &wide, test, 0), hi2 + 0.5 * (hi2 - lo2));
  EXPECT_EQ(predict(t, &wide, test, 0), predict(t, &half, test, 0));
  const PredictionBounds off = prediction_bounds(t, train, -1.0);
  EXPECT_DOUBLE_EQ(predict(t, &off, test, 0), 300.0);
  const Scores s = score(t, test, 0.0, &b), su = score(t, test);
  EXPECT_EQ(s.clamped, 1);
  EXPECT_EQ(su.clamped, 0);
  EXPECT_DOUBLE_EQ(su.max_abs_error, 180.0);
  EXPECT_DOUBLE_EQ(s.max_abs_error, std::fabs(120.0 - (hi2 + 0.1 * (hi2 - lo2))));
  EXPECT_LT(s.rmse, su.rmse);
}

TEST(GmtBounds, TheModelFileKeepsTheBoundsAndOlderVersionsLoadUnbounded) {
  const Dataset train = gmt_test::make_dataset(400, 1, 5, slope);
  Tree t = Tree::join(0, 5.0f, Tree::leaf({}), Tree::leaf({0}));
  t.set_fit(1, {}, {25.0}, 1);
  t.set_fit(2, {0}, {0.0, 10.0}, 2);
  const PredictionBounds b = prediction_bounds(t, train, 0.05);
  const auto j = nlohmann::json::parse(model_json(t, train, {}, {}, &b).dump());
  EXPECT_EQ(j["version"], 4);
  EXPECT_FALSE(j.contains("smoothing"));
  Dataset test = gmt_test::make_dataset(50, 1, 6, slope);
  for (std::size_t r = 0; r < test.rows(); r += 2) test.column(0)[r] *= 4.0f;  // some far out
  const Tree back = model_from_json(j, test, "m.json");
  const PredictionBounds bb = model_bounds(j, back, "m.json");
  EXPECT_EQ(bb.margin, 0.05);
  for (std::size_t r = 0; r < test.rows(); ++r) EXPECT_EQ(predict(back, &bb, test, r), predict(t, &b, test, r)) << r;
  // Version 2 (no bounds): loads, predicts unclamped.
  auto v2 = j;
  v2["version"] = 2;
  v2.erase("bounds");
  const Tree t2 = model_from_json(v2, test, "v2.json");
  EXPECT_FALSE(model_bounds(v2, t2, "v2.json").on());
  // Bounds that do not fit the tree are refused, naming the file.
  auto bad = j;
  bad["bounds"]["leaves"].erase(0);
  try {
    model_bounds(bad, back, "bad.json");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
  bad = j;
  bad["bounds"]["range"] = {3.0, 1.0};
  EXPECT_THROW(model_bounds(bad, back, "bad.json"), Error);
  bad = j;
  bad["version"] = 5;
  EXPECT_THROW(model_from_json(bad, test, "bad.json"), Error);
}

TEST(GmtBounds, CrossValidationFoldsPartitionTheRowsAndAreReproducible) {
  const auto f = cv_folds(103, 10, 3);
  ASSERT_EQ(f.size(), 10u);
  std::set<std::size_t> all;
  for (const auto& fold : f) {
    EXPECT_TRUE(fold.size() == 10 || fold.size() == 11);
    EXPECT_TRUE(std::is_sorted(fold.begin(), fold.end()));
    all.insert(fold.begin(), fold.end());
    const auto rest = rows_not_in(fold, 103);
    EXPECT_EQ(rest.size() + fold.size(), 103u);
    for (std::size_t r : rest) EXPECT_FALSE(std::binary_search(fold.begin(), fold.end(), r));
  }
  EXPECT_EQ(all.size(), 103u);
  EXPECT_EQ(cv_folds(103, 10, 3), f);
  EXPECT_NE(cv_folds(103, 10, 4), f);
  EXPECT_NE(rows_fingerprint(f[0]), rows_fingerprint(f[1]));
  EXPECT_EQ(rows_fingerprint(f[0]).size(), 16u);
  EXPECT_THROW(cv_folds(5, 10, 1), Error);
}

// --cv reports bounded and unbounded scores per fold, each fold's fingerprint that of cv_folds
// (the folds tools/gmt/gmt_study_split --folds exports), and --cv-only skips the final model.
TEST(GmtBounds, CliCrossValidationRecordsTheFoldsAndBothScores) {
  const Dataset d = gmt_test::make_dataset(300, 2, 8, gmt_test::piecewise, 0.05);
  const std::string csv = tmp("cv.csv"), metrics = tmp("cv_metrics.json"), model = tmp("cv_model.json");
  write_csv(d, csv);
  std::remove(model.c_str());
  datasets::RegressionCsvFiles files;
  CliEnv env{&gmt_test::registry(), &files};
  ASSERT_EQ(train_cli({"--dataset", csv, "--cv", "3", "--cv-only", "--seed", "5", "--backend", "sequential", "--param",
                       "iterations=15", "--param", "population=8", "--model-out", model, "--metrics-out", metrics, "--quiet"},
                      env),
            0);
  std::ifstream mi(metrics);
  const auto m = nlohmann::json::parse(mi);
  const auto folds = cv_folds(d.rows(), 3, 5);
  ASSERT_EQ(m["cv"]["per_fold"].size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const auto& f = m["cv"]["per_fold"][k];
    EXPECT_EQ(f["test_rows_fingerprint"], rows_fingerprint(folds[static_cast<std::size_t>(k)]));
    EXPECT_EQ(f["test"]["rows"].get<std::size_t>(), folds[static_cast<std::size_t>(k)].size());
    EXPECT_LE(f["test"]["max_abs_error"].get<double>(), f["test_unbounded"]["max_abs_error"].get<double>() + 1e-12);
  }
  EXPECT_EQ(m["cv"]["clamp_margin"], 0.1);
  // The grid of smoothing constants x clamp margins: its (run's smoothing, run's margin) point is
  // the run's score, its (run's smoothing, no clamp) point the unbounded one.
  const auto& grid = m["cv"]["by_smoothing_and_clamp"];
  ASSERT_EQ(grid.size(), 36u);
  int matched = 0;
  for (const auto& g : grid) {
    if (g["smoothing"] != m["cv"]["smoothing"]) continue;
    if (g["clamp_margin"] == 0.1) {
      EXPECT_DOUBLE_EQ(g["rmse"].get<double>(), m["cv"]["rmse"].get<double>());
      ++matched;
    }
    if (g["clamp_margin"] == -1.0) {
      EXPECT_DOUBLE_EQ(g["rmse"].get<double>(), m["cv"]["unbounded"]["rmse"].get<double>());
      ++matched;
    }
  }
  EXPECT_EQ(matched, 2);
  EXPECT_TRUE(m["cv"].contains("unbounded"));
  EXPECT_FALSE(m.contains("leaves"));                 // no final model
  EXPECT_FALSE(std::ifstream(model).good());
  EXPECT_EQ(train_cli({"--dataset", csv, "--cv-only", "--quiet"}, env), 2);  // a usage error

  // --cv-folds: a part of the same cross-validation; its folds' records equal the whole run's.
  const std::string part = tmp("cv_part.json");
  ASSERT_EQ(train_cli({"--dataset", csv, "--cv", "3", "--cv-only", "--cv-folds", "2,0", "--seed", "5", "--backend", "sequential",
                       "--param", "iterations=15", "--param", "population=8", "--metrics-out", part, "--quiet"},
                      env),
            0);
  std::ifstream pi(part);
  const auto pm = nlohmann::json::parse(pi);
  ASSERT_EQ(pm["cv"]["per_fold"].size(), 2u);
  EXPECT_EQ(pm["cv"]["folds_run"], nlohmann::json::array({2, 0}));
  for (int i = 0; i < 2; ++i) {
    const auto& f = pm["cv"]["per_fold"][i];
    const auto& whole = m["cv"]["per_fold"][f["fold"].get<std::size_t>()];
    EXPECT_EQ(f["test_rows_fingerprint"], whole["test_rows_fingerprint"]);
    EXPECT_EQ(f["test"], whole["test"]);
    EXPECT_EQ(f["leaves"], whole["leaves"]);
    EXPECT_EQ(f["by_clamp_margin"], whole["by_clamp_margin"]);
    EXPECT_EQ(f["by_smoothing_and_clamp"], whole["by_smoothing_and_clamp"]);
  }
  EXPECT_EQ(pm["cv"]["per_fold"][0]["fold"], 2);
  for (const char* bad : {"3", "1-0", "0,0", "x", "0-1,1"})
    EXPECT_EQ(train_cli({"--dataset", csv, "--cv", "3", "--cv-only", "--cv-folds", bad, "--quiet"}, env), 2) << bad;
  EXPECT_EQ(train_cli({"--dataset", csv, "--cv", "3", "--cv-folds", "0", "--quiet"}, env), 2);  // needs --cv-only
}

// --cv on a file with missing cells: each fold's training means fill them, and no fold turns a
// filled cell back into NaN (every score of the set would then be NaN).
TEST(GmtBounds, CliCrossValidationFillsMissingValuesPerFold) {
  Dataset d = gmt_test::make_dataset(240, 3, 11, gmt_test::piecewise, 0.05);
  for (std::size_t r = 0; r < d.rows(); r += 7) d.set_missing(r, r % 3);
  const std::string csv = tmp("cv_missing.csv"), metrics = tmp("cv_missing_metrics.json");
  write_csv(d, csv);
  datasets::RegressionCsvFiles files;
  CliEnv env{&gmt_test::registry(), &files};
  ASSERT_EQ(train_cli({"--dataset", csv, "--cv", "3", "--cv-only", "--seed", "2", "--backend", "sequential", "--param",
                       "iterations=15", "--param", "population=8", "--metrics-out", metrics, "--quiet"},
                      env),
            0);
  std::ifstream mi(metrics);
  const auto m = nlohmann::json::parse(mi);
  ASSERT_TRUE(m["cv"]["rmse"].is_number());  // NaN is written as null
  EXPECT_TRUE(std::isfinite(m["cv"]["rmse"].get<double>()));
  EXPECT_TRUE(m["cv"]["unbounded"]["rmse"].is_number());
  for (const auto& f : m["cv"]["per_fold"]) {
    ASSERT_TRUE(f["test"]["rmse"].is_number());
    EXPECT_LT(f["test"]["rmse"].get<double>(), 10.0);
  }
}

namespace {
double plane(const std::vector<double>& x) { return 1.0 + 2.0 * x[0] - 3.0 * x[1]; }
// A two-level tree over two attributes with hand-set leaf models that differ from the data's plane.
Tree three_leaves() {
  Tree t = Tree::join(0, 0.5f, Tree::leaf({0}), Tree::join(1, 0.3f, Tree::leaf({}), Tree::leaf({0, 1})));
  for (int i = 0; i < t.size(); ++i) {
    if (!t.node(i).is_leaf()) continue;
    const auto a = t.attrs(i);
    std::vector<int> attrs(a.begin(), a.end());
    std::vector<double> c{0.5 + i};
    for (std::size_t k = 0; k < attrs.size(); ++k) c.push_back(1.0 + static_cast<double>(k) + 0.25 * i);
    t.set_fit(i, attrs, c, static_cast<int>(c.size()));
  }
  return t;
}
double model_at(const NodeModels& m, int node, const Dataset& d, std::size_t r) {
  const auto k = static_cast<std::size_t>(node);
  double y = m.coef[k][0];
  for (std::size_t j = 0; j < m.attrs[k].size(); ++j) y += m.coef[k][j + 1] * d.at(r, static_cast<std::size_t>(m.attrs[k][j]));
  return y;
}
}  // namespace

TEST(GmtSmoothing, InternalModelsAreLeastSquaresOnTheNodesRowsAndLeavesBlendUpToTheRoot) {
  const Dataset train = gmt_test::make_dataset(600, 2, 11, plane);  // y exactly on a plane
  const Tree t = three_leaves();
  const NodeModels m = node_models(t, train, 1e-9, 1.0);
  ASSERT_EQ(m.count.size(), static_cast<std::size_t>(t.size()));
  EXPECT_EQ(m.count[0], 600);
  EXPECT_EQ(m.count[static_cast<std::size_t>(t.node(0).left)] + m.count[static_cast<std::size_t>(t.node(0).right())], 600);
  // The root's model is the least-squares plane of all rows (the attributes its subtree uses: both).
  ASSERT_EQ(m.attrs[0], (std::vector<int>{0, 1}));
  EXPECT_NEAR(m.coef[0][0], 1.0, 1e-6);  // (targets are floats)
  EXPECT_NEAR(m.coef[0][1], 2.0, 1e-6);
  EXPECT_NEAR(m.coef[0][2], -3.0, 1e-6);
  // k = 0: the tree itself.
  EXPECT_TRUE(smoothed(t, m, 0.0).same_model(t));
  // The smoothed tree predicts M5's recursion, computed here value by value.
  const Dataset test = gmt_test::make_dataset(200, 2, 12, plane);
  for (const double k : {5.0, 15.0}) {
    const Tree s = smoothed(t, m, k);
    for (std::size_t r = 0; r < test.rows(); ++r) {
      const int leaf = t.route(test, r);
      EXPECT_EQ(s.route(test, r), leaf);
      double p = t.predict(test, r);
      for (int c = leaf, q = t.node(leaf).parent; q >= 0; c = q, q = t.node(q).parent) {
        const double n = static_cast<double>(m.count[static_cast<std::size_t>(c)]);
        p = (n * p + k * model_at(m, q, test, r)) / (n + k);
      }
      EXPECT_NEAR(s.predict(test, r), p, 1e-9 * (1.0 + std::fabs(p))) << "k " << k << " row " << r;
    }
  }
  // A very large k: every leaf predicts the root's plane, here the data's.
  const Tree flat = smoothed(t, m, 1e12);
  for (std::size_t r = 0; r < test.rows(); ++r) EXPECT_NEAR(flat.predict(test, r), test.target(r), 1e-6) << r;
  // The model file keeps the smoothed leaves and says so; read back, it predicts the same.
  const Tree s = prediction_tree(t, train, 15.0, EvalOptions{});
  const auto j = nlohmann::json::parse(model_json(s, train, {}, {}, nullptr, 15.0).dump());
  EXPECT_EQ(j["version"], 4);
  EXPECT_EQ(j["smoothing"], 15.0);
  Dataset back_data = test;
  const Tree back = model_from_json(j, back_data, "s.json");
  for (std::size_t r = 0; r < test.rows(); ++r) EXPECT_NEAR(back.predict(test, r), s.predict(test, r), 1e-12 * (1 + std::fabs(s.predict(test, r))));
}
