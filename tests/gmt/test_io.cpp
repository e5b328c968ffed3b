// Model export/import, CSV, the CLI and malformed data.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "datasets/loaders.hpp"
#include "datasets/csv_files.hpp"
#include "algorithms/gmt/cli.hpp"
#include "algorithms/gmt/csv.hpp"
#include "algorithms/gmt/params.hpp"
#include "algorithms/gmt/train.hpp"
#include "common.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {
std::string tmp(const std::string& name) { return ::testing::TempDir() + "gmt_" + name; }
}  // namespace

TEST(GmtIo, ModelJsonRoundTripPredictsTheSame) {
  const Dataset d = gmt_test::make_dataset(800, 3, 7, gmt_test::piecewise, 0.1);
  auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
  GmtParams p;
  p.population = 10;
  p.iterations = 30;
  TrainResult r = train(d, p, *eval, false);
  const auto j = model_json(r.best.tree, d, {{"note", "test"}});
  Dataset scored = d;
  const Tree back = model_from_json(nlohmann::json::parse(j.dump()), scored, "mem");
  EXPECT_EQ(count_leaves(back), count_leaves(r.best.tree));
  EXPECT_EQ(gmt_test::layout_error(back, 3), "");
  EXPECT_TRUE(back.same_model(r.best.tree));  // structure, thresholds, models and coefficients
  for (std::size_t row = 0; row < d.rows(); ++row) EXPECT_DOUBLE_EQ(back.predict(d, row), r.best.tree.predict(d, row));
  // The text form names every leaf model.
  const std::string text = to_text(r.best.tree, d);
  EXPECT_NE(text.find("LM1: y = "), std::string::npos);
}

TEST(GmtIo, ModelFromAnotherDatasetIsRejected) {
  const Dataset d = gmt_test::make_dataset(100, 3, 7, gmt_test::piecewise);
  const Dataset other = gmt_test::make_dataset(100, 2, 7, gmt_test::piecewise);
  Tree leaf = Tree::leaf({2});
  leaf.set_fit(0, {2}, {1.0, 2.0}, 2);
  const auto j = model_json(leaf, d, {});
  Dataset a = d, b = other, c = d;
  EXPECT_TRUE(model_from_json(nlohmann::json::parse(j.dump()), a, "m.json").same_model(leaf));
  EXPECT_THROW(model_from_json(nlohmann::json::parse(j.dump()), b, "m.json"), Error);
  EXPECT_THROW(model_from_json(nlohmann::json::parse(R"({"format":"x"})"), c, "m.json"), Error);
}

TEST(GmtIo, CsvRoundTripAndCliTrainPredict) {
  const Dataset d = gmt_test::make_dataset(600, 2, 8, gmt_test::piecewise, 0.05);
  const std::string csv = tmp("train.csv"), model = tmp("model.json"), metrics = tmp("metrics.json");
  write_csv(d, csv);
  const Dataset back = datasets::load_regression_csv(csv);
  ASSERT_EQ(back.rows(), d.rows());
  ASSERT_EQ(back.cols(), d.cols());
  EXPECT_EQ(back.attribute(1).name, "x2");
  EXPECT_FLOAT_EQ(back.at(17, 1), d.at(17, 1));
  EXPECT_FLOAT_EQ(back.target(599), d.target(599));
  datasets::RegressionCsvFiles files;
  CliEnv env{&gmt_test::registry(), &files};
  ASSERT_EQ(train_cli({"--dataset", csv, "--test", csv, "--backend", "sequential", "--param", "iterations=40", "--param",
                       "population=12", "--model-out", model, "--metrics-out", metrics, "--quiet"},
                      env),
            0);
  std::ifstream mi(metrics);
  const auto m = nlohmann::json::parse(mi);
  EXPECT_NEAR(m["train"]["rmse"].get<double>(), m["test"]["rmse"].get<double>(), 1e-9);
  ASSERT_EQ(predict_cli({model, "--dataset", csv, "--metrics-out", metrics}, env), 0);
  std::ifstream pi(metrics);
  const auto pm = nlohmann::json::parse(pi);
  EXPECT_NEAR(pm["test"]["rmse"].get<double>(), m["train"]["rmse"].get<double>(), 1e-6);
  EXPECT_EQ(pm["leaves"], m["leaves"]);
  // Errors are reported, not thrown out of the CLI.
  EXPECT_NE(train_cli({"--dataset", csv, "--param", "no_such=1"}, env), 0);
  EXPECT_NE(train_cli({"--dataset", "not_a_catalog_name"}, env), 0);
  EXPECT_NE(predict_cli({tmp("missing.json"), "--dataset", csv}, env), 0);
}

// The learner's CSV files are read by the datasets loader: quoted names keep their commas (a
// reader that ignores quotes splits inside them), "?" and empty cells are missing values.
TEST(GmtIo, CsvQuotedFieldsAndMissingCells) {
  const std::string p = tmp("quoted.csv");
  {
    std::ofstream o(p);
    o << "\"x, one\",'b',\"y\"\r\n1,?,2\n\"3\",4,5\n6,,7\n";
  }
  const Dataset d = datasets::load_regression_csv(p);
  EXPECT_EQ(d.name(), "gmt_quoted");
  ASSERT_EQ(d.cols(), 2u);
  ASSERT_EQ(d.rows(), 3u);
  EXPECT_EQ(d.task(), Task::regression);
  EXPECT_EQ(d.attribute(0).name, "x, one");
  EXPECT_EQ(d.attribute(1).name, "b");
  EXPECT_FLOAT_EQ(d.at(1, 0), 3.0f);
  EXPECT_TRUE(d.is_missing(0, 1));
  EXPECT_TRUE(d.is_missing(2, 1));
  EXPECT_FALSE(d.is_missing(1, 1));
  EXPECT_FLOAT_EQ(d.target(2), 7.0f);
}

TEST(GmtIo, CliTestFractionHoldsOutRows) {
  const Dataset d = gmt_test::make_dataset(600, 2, 9, gmt_test::piecewise, 0.05);
  const std::string csv = tmp("holdout.csv"), model = tmp("holdout_model.json"), metrics = tmp("holdout_metrics.json");
  write_csv(d, csv);
  datasets::RegressionCsvFiles files;
  CliEnv env{&gmt_test::registry(), &files};
  ASSERT_EQ(train_cli({"--dataset", csv, "--backend", "sequential", "--param", "iterations=20", "--param", "population=8",
                       "--param", "test_fraction=0.25", "--model-out", model, "--metrics-out", metrics, "--quiet"},
                      env),
            0);
  std::ifstream mi(metrics);
  const auto m = nlohmann::json::parse(mi);
  EXPECT_EQ(m["train"]["rows"].get<long long>(), 450);  // 600 - round(0.25 * 600)
  ASSERT_TRUE(m.contains("test"));
  EXPECT_EQ(m["test"]["rows"].get<long long>(), 150);
  // The same split as the runner's family (holdout_split with the run's seed).
  Dataset tr, te;
  holdout_split(datasets::load_regression_csv(csv), 0.25, 1, &tr, &te);
  std::ifstream mo(model);
  const auto mj = nlohmann::json::parse(mo);
  const Tree root = model_from_json(mj, te, model);
  const PredictionBounds b = model_bounds(mj, root, model);
  EXPECT_TRUE(b.on());
  EXPECT_NEAR(score(root, te, 0.0, &b).rmse, m["test"]["rmse"].get<double>(), 1e-9);
  EXPECT_NEAR(score(root, te).rmse, m["test_unbounded"]["rmse"].get<double>(), 1e-9);
  EXPECT_NE(train_cli({"--dataset", csv, "--test", csv, "--param", "test_fraction=0.25", "--quiet"}, env), 0);
}

TEST(GmtIo, MalformedData) {
  // NaN target: a clear error naming the row.
  Dataset d = gmt_test::make_dataset(50, 2, 1, gmt_test::piecewise);
  d.set_target(13, std::nanf(""));
  auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
  PhaseTimer t;
  GmtParams p;
  eval->prepare(d);
  try {
    GmtEA ea(p, *eval, d, t);
    FAIL() << "NaN target accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 13"), std::string::npos) << e.what();
  }
  // CSV with a missing target.
  const std::string bad = tmp("bad.csv");
  {
    std::ofstream o(bad);
    o << "a,b,y\n1,2,3\n4,5,?\n";
  }
  EXPECT_THROW(datasets::load_regression_csv(bad), Error);
  // Fewer rows than attributes and a constant attribute: documented fallback, the rank rule
  // drops what the rows cannot determine; training still works.
  Dataset tiny = gmt_test::make_dataset(6, 10, 3, gmt_test::piecewise);
  for (std::size_t r = 0; r < tiny.rows(); ++r) tiny.at(r, 4) = 1.0f;
  GmtParams q;
  q.population = 6;
  q.iterations = 10;
  q.min_leaf_rows = 1;
  q.init_model_attrs = 10;  // every attribute in the initial models
  TrainResult r = train(tiny, q, *eval, false);
  EXPECT_LE(count_model_attributes(r.best.tree), 6 * count_leaves(r.best.tree));
  EXPECT_TRUE(std::isfinite(score(r.best.tree, tiny).rmse));
  // Classification data is refused.
  Dataset cls("c", Task::classification, 10, {Attribute{"a"}}, {"x", "y"});
  EXPECT_THROW(eval->prepare(cls), Error);
}

TEST(GmtParams, OmpModeIsParsedAndBadValuesAreRejected) {
  using Mode = EvalOptions::OmpMode;
  EXPECT_EQ(read_case(nlohmann::json::object()).eval.omp_mode, Mode::kAuto);
  EXPECT_EQ(read_case(nlohmann::json{{"omp_mode", "rows"}}).eval.omp_mode, Mode::kRows);
  EXPECT_EQ(read_case(nlohmann::json{{"omp_mode", "individuals"}}).eval.omp_mode, Mode::kIndividuals);
  EXPECT_THROW(read_case(nlohmann::json{{"omp_mode", "leaves"}}), Error);
  EXPECT_THROW(read_case(nlohmann::json{{"omp_mode", 3}}), Error);
}

// One table: the defaults it declares are the structs' initialisers, and configs are checked
// against its ranges and names before a run (ParamSpec::check, what the runner calls).
TEST(GmtParams, TableDefaultsAreTheStructsAndRangesAreCheckedAtConfigTime) {
  const GmtCase d = read_case(nlohmann::json::object());
  const GmtParams ea;
  const EvalOptions ev;
  EXPECT_EQ(d.ea.population, ea.population);
  EXPECT_EQ(d.ea.fitness.bic_k, ea.fitness.bic_k);
  EXPECT_EQ(d.eval.chunk_rows, ev.chunk_rows);
  EXPECT_EQ(d.eval.gpu_path, ev.gpu_path);
  auto spec = [](const std::string& name) {
    for (const auto& s : params_table().specs())
      if (s.name == name) return s;
    ADD_FAILURE() << "no param " << name;
    return ParamSpec{};
  };
  EXPECT_EQ(spec("fitness").default_value, "auto");
  EXPECT_EQ(spec("bic_k").default_value, "2(Q+W)");
  EXPECT_EQ(spec("gpu_path").default_value, "fast");
  EXPECT_EQ(spec("population").default_value, 64);
  EXPECT_TRUE(spec("gpu_path").backend_only);
  EXPECT_FALSE(spec("chunk_rows").backend_only);  // it fixes the summation order, so what is computed
  EXPECT_EQ(spec("population").check(1), "expects an int in [2, 16777216], got 1");
  EXPECT_NE(spec("crossover").check(1.5), "");
  EXPECT_NE(spec("gpu_threads").check(2048), "");
  EXPECT_NE(spec("precision").check("half"), "");
  EXPECT_NE(spec("chunk_rows").check(0), "");
  EXPECT_NE(spec("mut_prune").check(-1), "");
  const GmtCase c = read_case(nlohmann::json{{"gpu_path", "faithful"}, {"precision", "float"}, {"gpu_blocks", 128},
                                             {"gpu_threads", 256}, {"cuda_graphs", false}});
  EXPECT_EQ(c.eval.gpu_path, EvalOptions::GpuPath::kFaithful);
  EXPECT_EQ(c.eval.gpu_precision, EvalOptions::GpuPrecision::kFloat);
  EXPECT_EQ(c.eval.gpu_blocks, 128);
  EXPECT_EQ(c.eval.gpu_threads, 256);
  EXPECT_FALSE(c.eval.cuda_graphs);
  // What one param's range cannot say is checked when the case is read.
  EXPECT_THROW(read_case(nlohmann::json{{"fast_pivot_guard", 1.0}}), Error);
  EXPECT_THROW(read_case(nlohmann::json{{"cx_subtrees", 0}, {"cx_tests", 0}, {"cx_branches", 0}, {"cx_asymmetric", 0}}), Error);
  EXPECT_THROW(read_case(nlohmann::json{{"no_such", 1}}), Error);
  EXPECT_THROW(read_case(nlohmann::json{{"gram_engine", "dmma"}}), Error);  // the fast path has no Gram engine param
}

// --test is matched to the training data by name before training: the same rows with two columns
// swapped score the same, and a file that cannot be matched fails before the run.
TEST(GmtIo, CliTestFileIsMatchedByNameBeforeTraining) {
  const Dataset d = gmt_test::make_dataset(300, 2, 11, gmt_test::piecewise, 0.05);
  const std::string csv = tmp("byname.csv"), swapped = tmp("byname_swapped.csv"), renamed = tmp("byname_renamed.csv");
  const std::string m1 = tmp("byname_m1.json"), m2 = tmp("byname_m2.json");
  write_csv(d, csv);
  {
    std::ifstream in(csv);
    std::ofstream s(swapped), r(renamed);
    std::string line;
    bool header = true;
    while (std::getline(in, line)) {
      const std::size_t a = line.find(','), b = line.find(',', a + 1);
      s << line.substr(a + 1, b - a - 1) << ',' << line.substr(0, a) << line.substr(b) << '\n';
      r << (header ? "other" + line.substr(a) : line) << '\n';
      header = false;
    }
  }
  datasets::RegressionCsvFiles files;
  CliEnv env{&gmt_test::registry(), &files};
  const std::vector<std::string> train = {"--dataset", csv, "--backend", "sequential", "--param", "iterations=15",
                                          "--param", "population=8", "--quiet", "--model-out", tmp("byname_model.json")};
  auto with = [&](std::vector<std::string> a, std::vector<std::string> more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  ASSERT_EQ(train_cli(with(train, {"--test", csv, "--metrics-out", m1}), env), 0);
  ASSERT_EQ(train_cli(with(train, {"--test", swapped, "--metrics-out", m2}), env), 0);
  auto rmse = [](const std::string& f) {
    std::ifstream in(f);
    return nlohmann::json::parse(in)["test"]["rmse"].get<double>();
  };
  EXPECT_DOUBLE_EQ(rmse(m1), rmse(m2));
  testing::internal::CaptureStderr();
  EXPECT_EQ(train_cli(with(train, {"--test", renamed, "--param", "iterations=1000000"}), env), 1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("no attribute 'x1'"), std::string::npos) << err;
  // --predict matches by name too.
  ASSERT_EQ(predict_cli({tmp("byname_model.json"), "--dataset", swapped, "--metrics-out", m2}, env), 0);
  EXPECT_DOUBLE_EQ(rmse(m1), rmse(m2));
}
