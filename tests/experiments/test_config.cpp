// Config validation and sweep expansion (docs/config-format.md).
#include <gtest/gtest.h>

#include "experiments/config.hpp"
#include "tests/experiments/test_family.hpp"
#include "tests/experiments/test_util.hpp"

namespace gpudm::testing {
namespace {

using experiments::ConfigError;
using experiments::ExperimentPlan;
using experiments::load_plan;
using experiments::PlanOptions;
using experiments::ValidationContext;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    families_ = toy_families();
    register_toy(registry_);
    ctx_.families = &families_;
    ctx_.registry = &registry_;
    ctx_.check_dataset = [](const std::string& n) -> std::string {
      if (n == "tiny" || n == "tiny_reg" || n == "tiny_surrogate" || n == "broken") return "";
      return "unknown dataset '" + n + "'";
    };
    ctx_.paper_tables_dir = dir_ / "paper";
    write_file(dir_ / "paper/toy_table.csv", "dataset,population,time_s,speedup\nTiny,10,0.5,2.0\n");
  }
  std::string write(const std::string& name, const std::string& text) {
    write_file(dir_ / name, text);
    return dir_ / name;
  }
  ExperimentPlan load(const std::string& name, const std::string& text, PlanOptions opt = {}) {
    return load_plan(write(name, text), ctx_, opt);
  }
  // The ConfigError message of loading `text` ("" when it loads).
  std::string error_of(const std::string& text, PlanOptions opt = {}) {
    try {
      load("c.json", text, opt);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }

  TempDir dir_;
  experiments::FamilySet families_;
  Registry registry_;
  ValidationContext ctx_;
};

TEST_F(ConfigTest, UnknownTopLevelKeySuggestsNearest) {
  const std::string e = error_of(R"({"familly": "toy", "datasets": ["tiny"]})");
  EXPECT_NE(e.find("unknown key 'familly'"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'family'"), std::string::npos) << e;
  EXPECT_NE(e.find("c.json"), std::string::npos) << e;
}

TEST_F(ConfigTest, UnknownParamSuggestsNearest) {
  const std::string e = error_of(R"({"family": "toy", "datasets": ["tiny"], "params": {"populaton": 5}})");
  EXPECT_NE(e.find("params.populaton"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'population'"), std::string::npos) << e;
}

TEST_F(ConfigTest, UnknownKeysInsideNestedObjects) {
  EXPECT_NE(error_of(R"({"family": "toy", "datasets": [{"name": "tiny", "opts": {}}]})").find("did you mean 'options'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"family": "toy", "datasets": ["tiny"], "cases": [{"backend": "openmp", "param": {}}]})")
                .find("did you mean 'params'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"family": "toy", "datasets": ["tiny"], "smoke": {"repetition": 1}})").find("did you mean 'repetitions'"),
            std::string::npos);
}

TEST_F(ConfigTest, WrongTypesAreRejected) {
  std::string e = error_of(R"({"family": "toy", "datasets": ["tiny"], "repetitions": "five"})");
  EXPECT_NE(e.find("repetitions: expected int, got string"), std::string::npos) << e;
  e = error_of(R"({"family": "toy", "datasets": ["tiny"], "params": {"population": "ten"}})");
  EXPECT_NE(e.find("param 'population' expects int, got string"), std::string::npos) << e;
  e = error_of(R"({"family": "toy", "datasets": "tiny"})");
  EXPECT_NE(e.find("datasets: expected array"), std::string::npos) << e;
  e = error_of(R"({"family": "toy", "datasets": ["tiny"], "repetitions": 0})");
  EXPECT_NE(e.find("repetitions: expected an int in [1, 1000000], got 0"), std::string::npos) << e;
  e = error_of(R"({"family": "toy", "datasets": ["tiny"], "sweep": {"population": 5}})");
  EXPECT_NE(e.find("a sweep axis is an array"), std::string::npos) << e;
}

TEST_F(ConfigTest, MalformedJsonReportsLineAndColumn) {
  const std::string path = write("bad.json", "{\n  \"family\": \"toy\",\n  \"datasets\": [\"tiny\",]\n}\n");
  try {
    load_plan(path, ctx_, {});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(path + ":3:", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST_F(ConfigTest, DuplicateKeysAreRejected) {
  EXPECT_NE(error_of(R"({"family": "toy", "datasets": ["tiny"], "warmup": 1, "warmup": 2})").find("duplicate key 'warmup'"),
            std::string::npos);
}

TEST_F(ConfigTest, IncludeCycleIsDetected) {
  write("a.json", R"({"include": ["b.json"]})");
  write("b.json", R"({"include": ["sub/c.json"]})");
  write("sub/c.json", R"({"include": ["../a.json"]})");
  try {
    load_plan(dir_ / "a.json", ctx_, {});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("include cycle"), std::string::npos) << m;
    EXPECT_NE(m.find("b.json"), std::string::npos) << m;
  }
  write("self.json", R"({"include": ["self.json"]})");
  EXPECT_THROW(load_plan(dir_ / "self.json", ctx_, {}), ConfigError);
}

TEST_F(ConfigTest, MissingIncludeSaysSo) {
  const std::string e = error_of(R"({"include": ["nope.json"]})");
  EXPECT_NE(e.find("included file "), std::string::npos) << e;
  EXPECT_NE(e.find("nope.json: not found"), std::string::npos) << e;
}

TEST_F(ConfigTest, IncludesAreRelativeToTheIncludingFile) {
  write("sub/part.json", R"({"experiment": "part", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"]})");
  write("top.json", R"({"experiment": "top", "include": ["sub/part.json"]})");
  const auto plan = load_plan(dir_ / "top.json", ctx_, {});
  EXPECT_TRUE(plan.family.empty());
  ASSERT_EQ(plan.included.size(), 1u);
  EXPECT_EQ(plan.included[0].id, "part");
  EXPECT_EQ(plan.total_runs(), 1u);
}

TEST_F(ConfigTest, UnknownFamilyBackendAndDataset) {
  EXPECT_NE(error_of(R"({"family": "tyo", "datasets": ["tiny"]})").find("did you mean 'toy'"), std::string::npos);
  EXPECT_NE(error_of(R"({"family": "toy", "datasets": ["tiny"], "backends": ["opnemp"]})").find("did you mean 'openmp'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"family": "toy", "datasets": ["tinny"]})").find("unknown dataset 'tinny'"), std::string::npos);
  PlanOptions o;
  o.backends = {"cdua"};
  EXPECT_NE(error_of(R"({"family": "toy", "datasets": ["tiny"]})", o).find("did you mean 'cuda'"), std::string::npos);
}

TEST_F(ConfigTest, SweepExpansionCounts) {
  // 2 datasets x sweep 3 x (sequential + openmp x 2 threads) x 2 seeds = 36
  auto plan = load("s.json", R"({"family": "toy", "datasets": ["tiny", {"name": "tiny", "options": {"rows": 64}}],
      "sweep": {"population": [10, 20, 30]},
      "cases": [{"backend": "sequential"}, {"backend": "openmp", "params": {"threads": [1, 2]}}],
      "seeds": [1, 2], "warmup": 0, "repetitions": 2})");
  EXPECT_EQ(plan.runs.size(), 36u);
  EXPECT_EQ(plan.runs[0].params["population"], 10);
  EXPECT_EQ(plan.runs[0].params["threads"], 1);  // default filled in
  EXPECT_EQ(plan.runs[0].params["fail"], "");
  EXPECT_EQ(plan.runs[0].repetitions, 2);
  EXPECT_EQ(plan.runs[0].warmup, 0);
  // Without cases: every registered backend (3) of the family.
  plan = load("s2.json", R"({"family": "toy", "datasets": ["tiny"], "sweep": {"population": [1, 2]}, "seeds": [1, 2, 3]})");
  EXPECT_EQ(plan.runs.size(), 18u);
  // An array in params is an axis too; {"value": [...]} is a literal.
  plan = load("s3.json", R"({"family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "params": {"population": [1, 2, 3], "weights": {"value": [0.5, 0.5]}}})");
  ASSERT_EQ(plan.runs.size(), 3u);
  EXPECT_EQ(plan.runs[2].params["weights"], ojson::parse("[0.5, 0.5]"));
  // --backend filter and --repetitions override.
  PlanOptions o;
  o.backends = {"openmp"};
  o.repetitions = 7;
  plan = load("s4.json", R"({"family": "toy", "datasets": ["tiny"], "sweep": {"population": [1, 2]}})", o);
  ASSERT_EQ(plan.runs.size(), 2u);
  EXPECT_EQ(plan.runs[0].backend, "openmp");
  EXPECT_EQ(plan.runs[0].repetitions, 7);
}

TEST_F(ConfigTest, OnlyDatasetFilter) {
  const std::string text = R"({"family": "toy", "datasets": ["tiny", "tiny_reg"], "backends": ["sequential"],
      "sweep": {"population": [1, 2]}})";
  PlanOptions o;
  o.datasets = {"tiny_reg"};
  const auto plan = load("d.json", text, o);
  ASSERT_EQ(plan.runs.size(), 2u);
  EXPECT_EQ(plan.runs[0].dataset.name, "tiny_reg");
  EXPECT_EQ(plan.runs[1].dataset.name, "tiny_reg");
  o.datasets = {"tiny_rge"};
  EXPECT_NE(error_of(text, o).find("c.json uses a dataset of this name (did you mean 'tiny_reg'?)"), std::string::npos);
  // Under --smoke the smoke block's datasets are the ones that count.
  const std::string smoke = R"({"family": "toy", "datasets": ["tiny", "tiny_reg"], "backends": ["sequential"],
      "smoke": {"datasets": ["tiny"]}})";
  o.smoke = true;
  o.datasets = {"tiny_reg"};
  EXPECT_NE(error_of(smoke, o).find("c.json --smoke uses a dataset of this name (it is only in the datasets that --smoke replaces)"),
            std::string::npos)
      << error_of(smoke, o);
  o.datasets = {"tiny"};
  EXPECT_EQ(load("d.json", smoke, o).runs.size(), 1u);
}

TEST_F(ConfigTest, SmokeBlockOverridesAndMerges) {
  const std::string text = R"({"family": "toy", "datasets": ["tiny", "tiny_reg"], "backends": ["sequential"],
      "sweep": {"population": [10, 20, 30], "threads": [1, 2]}, "repetitions": 5,
      "smoke": {"datasets": ["tiny"], "sweep": {"population": [10]}, "repetitions": 1}})";
  EXPECT_EQ(load("n.json", text).runs.size(), 12u);
  PlanOptions o;
  o.smoke = true;
  const auto plan = load("n.json", text, o);
  ASSERT_EQ(plan.runs.size(), 2u);  // population axis replaced, threads axis kept
  EXPECT_EQ(plan.runs[0].repetitions, 1);
  EXPECT_TRUE(plan.smoke);
}

TEST_F(ConfigTest, ConflictsAndDuplicatesAreErrors) {
  EXPECT_NE(error_of(R"({"family": "toy", "datasets": ["tiny"], "sweep": {"threads": [1, 2]},
      "cases": [{"backend": "openmp", "params": {"threads": 4}}]})").find("already a sweep axis"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"family": "toy", "datasets": ["tiny", "tiny"]})").find("two runs are identical"), std::string::npos);
  EXPECT_NE(error_of(R"({"datasets": ["tiny"]})").find("needs 'family'"), std::string::npos);
  EXPECT_NE(error_of(R"({"title": "nothing"})").find("needs 'family'"), std::string::npos);
}

TEST_F(ConfigTest, TablesAreValidated) {
  const std::string head = R"({"family": "toy", "datasets": ["tiny"], "tables": [)";
  EXPECT_EQ(error_of(head + R"({"title": "T", "paper_csv": "toy_table.csv",
      "rows": [{"run": "dataset.name", "paper": "dataset", "map": {"tiny": "Tiny"}}],
      "columns": [{"label": "seq", "select": {"backend": "sequential"}, "value": "timing.median", "paper": "time_s"},
                  {"label": "omp", "select": {"backend": "openmp"}, "value": "timing.median", "hidden": true},
                  {"label": "speedup", "ratio": ["seq", "omp"], "format": ".2f", "paper": "speedup"}]}]})"),
            "");
  // A row's "paper" is ignored without a paper_csv; a column's "paper" is not.
  EXPECT_EQ(error_of(head + R"({"rows": [{"run": "dataset.name", "paper": "dataset"}], "columns": [{"label": "a", "value": "x"}]}]})"), "");
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x", "paper": "p"}]}]})")
                .find("'paper' needs the table's 'paper_csv'"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "valeu": "x"}]}]})")
                .find("did you mean 'value'"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x"},
      {"label": "r", "ratio": ["a", "b"]}]}]})").find("no column labelled 'b'"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"paper_csv": "toy_table.csv", "rows": [{"run": "dataset.name", "paper": "datset"}],
      "columns": [{"label": "a", "value": "x"}]}]})").find("did you mean 'dataset'"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"paper_csv": "nope.csv", "rows": [{"run": "dataset.name"}],
      "columns": [{"label": "a", "value": "x"}]}]})").find("paper table 'nope.csv' not found"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x", "format": "%5"}]}]})")
                .find("unknown number format"),
            std::string::npos);
  // a product multiplies two ratio columns, and nothing else
  EXPECT_EQ(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x"}, {"label": "b", "value": "y"},
      {"label": "r", "ratio": ["a", "b"]}, {"label": "p", "product": ["r", "r"]}]}]})"),
            "");
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x"}, {"label": "b", "value": "y"},
      {"label": "r", "ratio": ["a", "b"]}, {"label": "p", "product": ["r", "a"]}]}]})").find("column 'a' is not a ratio"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x"}, {"label": "b", "value": "y"},
      {"label": "r", "ratio": ["a", "b"]}, {"label": "p", "product": ["r", "q"]}]}]})").find("no column labelled 'q'"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x"}, {"label": "b", "value": "y"},
      {"label": "r", "ratio": ["a", "b"], "product": ["r", "r"]}]}]})").find("a column needs exactly one of"),
            std::string::npos);
  // a difference subtracts two value columns, and one column computes one thing
  EXPECT_EQ(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x"}, {"label": "b", "value": "y"},
      {"label": "d", "difference": ["a", "b"]}]}]})"),
            "");
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x"}, {"label": "b", "value": "y"},
      {"label": "r", "ratio": ["a", "b"]}, {"label": "d", "difference": ["r", "a"]}]}]})").find("column 'r' is itself computed"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x"}, {"label": "b", "value": "y"},
      {"label": "d", "ratio": ["a", "b"], "difference": ["a", "b"]}]}]})").find("a column needs exactly one of"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "dataset.name"}], "columns": [{"label": "a", "value": "x"}, {"label": "b", "value": "y"},
      {"label": "d", "difference": ["a", "b"]}, {"label": "p", "product": ["d", "d"]}]}]})").find("column 'd' is not a ratio"),
            std::string::npos);
  // per-run division and the mean: value columns only, "median" or "mean"
  EXPECT_EQ(error_of(head + R"({"rows": [{"run": "family"}], "columns": [{"label": "a", "value": "x", "divide_by": "timing.median",
      "aggregate": "mean"}]}]})"),
            "");
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "family"}], "columns": [{"label": "a", "value": "x", "aggregate": "mode"}]}]})")
                .find("expected \"median\" or \"mean\", got \"mode\""),
            std::string::npos);
  EXPECT_NE(error_of(head + R"({"rows": [{"run": "family"}], "columns": [{"label": "a", "value": "x"},
      {"label": "r", "ratio": ["a", "a2"], "divide_by": "timing.median"}]}]})").find("'divide_by' divides a value column"),
            std::string::npos);
}

// "peers": other tools' results files (relative to the config), loaded and checked before any
// run; columns name them and may read "peer.X" only then.
TEST_F(ConfigTest, PeersAreLoadedAndValidated) {
  write("peers/river.json", R"({"runs": [{"dataset": "tiny", "accuracy": 50.0}, {"dataset": "other"}], "note": 1})");
  const std::string peers = R"("peers": [{"name": "river", "file": "peers/river.json", "match": {"dataset": "dataset.name"}}])";
  const std::string table = R"("tables": [{"rows": [{"run": "dataset.name"}], "columns": [)";
  const auto plan = load("p.json", R"({"family": "toy", "datasets": ["tiny"], )" + peers + ", " + table +
                                       R"({"label": "River", "peer": "river", "value": "peer.accuracy"},
      {"label": "ours at theirs", "peer": {"name": "river", "where": {"accuracy": 50}}, "value": "metrics.x.{peer.accuracy}"}]}]})");
  ASSERT_EQ(plan.peers.size(), 1u);
  EXPECT_EQ(plan.peers[0].name, "river");
  EXPECT_EQ(plan.peers[0].rows.size(), 2u);
  const std::string head = R"({"family": "toy", "datasets": ["tiny"], )";
  EXPECT_NE(error_of(head + R"("peers": [{"name": "river", "file": "peers/nope.json", "match": {"dataset": "dataset.name"}}]})")
                .find("peer results file not found"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("peers": [{"name": "river", "file": "peers/river.json", "match": {}}]})").find("at least one"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("peers": [{"name": "river", "file": "peers/river.json", "rows": "note",
      "match": {"dataset": "dataset.name"}}]})").find("has no array at 'note'"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("peers": [{"name": "river", "fiel": "x", "match": {"a": "b"}}]})").find("did you mean 'file'"),
            std::string::npos);
  EXPECT_NE(error_of(head + peers + ", " + table + R"({"label": "a", "peer": "weka", "value": "peer.accuracy"}]}]})")
                .find("no peer named 'weka'"),
            std::string::npos);
  EXPECT_NE(error_of(head + peers + ", " + table + R"({"label": "a", "value": "peer.accuracy"}]}]})").find("reads a peer row"),
            std::string::npos);
  EXPECT_NE(error_of(head + table + R"({"label": "a", "peer": "river", "value": "peer.accuracy"}]}]})").find("no peer named"),
            std::string::npos);
}

TEST(RunIdentity, IgnoresKeyOrderButNotValues) {
  using experiments::run_identity;
  const auto a = run_identity("f", "b", "d", ojson::parse(R"({"rows": 1, "seed": 2})"), ojson::parse(R"({"x": 1, "y": 2})"), 1);
  const auto b = run_identity("f", "b", "d", ojson::parse(R"({"seed": 2, "rows": 1})"), ojson::parse(R"({"y": 2, "x": 1})"), 1);
  const auto c = run_identity("f", "b", "d", ojson::parse(R"({"seed": 2, "rows": 1})"), ojson::parse(R"({"y": 3, "x": 1})"), 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace gpudm::testing
