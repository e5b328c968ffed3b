// Table rendering on a fixed results fixture, and the text helpers behind it.
#include <gtest/gtest.h>

#include "algorithms/core/error.hpp"
#include "experiments/tables.hpp"
#include "experiments/text.hpp"
#include "tests/experiments/test_util.hpp"

namespace gpudm::testing {
namespace {

using namespace gpudm::experiments;

ojson run(const std::string& ds, const std::string& backend, int pop, double median, const std::string& status = "ok",
          bool surrogate = false, bool estimated = false) {
  ojson r;
  r["family"] = "toy";
  r["backend"] = backend;
  r["dataset"] = {{"name", ds}, {"options", ojson::object()}, {"surrogate", surrogate}};
  r["params"] = {{"population", pop}, {"threads", 1}};
  r["seed"] = 1;
  r["status"] = status;
  r["reason"] = status == "ok" ? "" : "no device here";
  r["timing"] = {{"median", median}, {"min", median}, {"max", median}};
  r["metrics"] = {{"gpops_per_s", 1e6 / median}};
  if (estimated) r["metrics"]["estimated"] = true;
  r["validation"] = ojson::object();
  r["checksum"] = "00";
  return r;
}

ojson fixture() {
  ojson doc;
  doc["schema_version"] = 1;
  doc["experiment"] = {{"id", "fx"}, {"title", "Fixture"}, {"paper", "Someone 2014"}, {"config_path", "configs/fx.json"}};
  doc["provenance"] = {{"git_sha", "0123456789abcdef0123"}, {"git_dirty", true}, {"utc_time", "2026-01-01T00:00:00Z"}};
  doc["environment"] = {{"cpu_model", "Test CPU"}, {"cpu_cores", 2}, {"devices", ojson::array()}};
  doc["runs"] = ojson::array({
      run("ecoli", "sequential", 10, 4.0), run("ecoli", "cuda", 10, 0.5),
      run("iris", "sequential", 10, 2.0), run("iris", "cuda", 10, 0.0, "skipped"),
      run("higgs", "sequential", 10, 9.0, "ok", true, true), run("higgs", "cuda", 10, 3.0, "ok", true),
  });
  return doc;
}

const char* kSpec = R"json({
  "title": "Times", "paper_csv": "fx.csv",
  "rows": [{"run": "dataset.name", "paper": "dataset", "label": "Dataset", "map": {"iris": "Iris", "ecoli": "Ecoli"}},
           {"run": "params.population", "paper": "population", "label": "Pop."}],
  "columns": [
    {"label": "CPU (s)", "select": {"backend": "sequential"}, "value": "timing.median", "format": ".2f", "paper": "cpu_s"},
    {"label": "GPU (s)", "select": {"backend": "cuda"}, "value": "timing.median", "format": ".2f"},
    {"label": "GPU ms", "select": {"backend": "cuda"}, "value": "timing.median", "scale": 1000, "format": "d", "hidden": true},
    {"label": "Speedup", "ratio": ["CPU (s)", "GPU (s)"], "format": ".1f", "paper": "speedup"}],
  "notes": ["A note from the config."]
})json";

class TablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The paper lists Iris before Ecoli and has a row we did not run (Poker).
    write_file(dir_ / "fx.csv", "dataset,population,cpu_s,speedup\nIris,10,1.5,3.0\nPoker,10,100,50\nEcoli,10,3.9,\"7,5\"\n");
  }
  TempDir dir_;
};

TEST_F(TablesTest, PaperLayoutWithOursBesideThePapers) {
  const auto t = render_tables(fixture(), {ojson::parse(kSpec)}, dir_.path().string());
  const std::string& md = t.markdown;
  EXPECT_NE(md.find("## Times"), std::string::npos);
  EXPECT_NE(md.find("| Dataset | Pop. | CPU (s) | CPU (s) (paper) | GPU (s) | Speedup | Speedup (paper) |"), std::string::npos) << md;
  EXPECT_EQ(md.find("GPU ms"), std::string::npos) << "hidden column shown";
  // Paper order first (Iris, Ecoli), then ours the paper lacks (higgs), Poker (not run) omitted.
  const auto iris = md.find("| Iris | 10 | 2.00 | 1.5 | skipped | — | 3.0 |");
  const auto ecoli = md.find("| Ecoli | 10 | 4.00 | 3.9 | 0.50 | 8.0 | 7,5 |");
  const auto higgs = md.find("| higgs † | 10 | 9.00* | — | 3.00 | 3.0* | — |");
  ASSERT_NE(iris, std::string::npos) << md;
  ASSERT_NE(ecoli, std::string::npos) << md;
  ASSERT_NE(higgs, std::string::npos) << md;
  EXPECT_LT(iris, ecoli);
  EXPECT_LT(ecoli, higgs);
  EXPECT_EQ(md.find("Poker"), std::string::npos);
  EXPECT_NE(md.find("1 paper row(s) not run"), std::string::npos);
  EXPECT_NE(md.find("† surrogate dataset"), std::string::npos);
  EXPECT_NE(md.find("* estimated"), std::string::npos);
  EXPECT_NE(md.find("skipped: cuda on iris: no device here"), std::string::npos) << md;
  EXPECT_NE(md.find("A note from the config."), std::string::npos);
  // CSV: same cells, no markers, a table column, quoted fields where needed.
  EXPECT_NE(t.csv.find("table,Dataset,Pop.,CPU (s),CPU (s) (paper),GPU (s),Speedup,Speedup (paper)\n"), std::string::npos) << t.csv;
  EXPECT_NE(t.csv.find("Times,Ecoli,10,4.00,3.9,0.50,8.0,\"7,5\"\n"), std::string::npos) << t.csv;
  EXPECT_NE(t.csv.find("Times,higgs,10,9.00,,3.00,3.0,\n"), std::string::npos) << t.csv;
}

TEST_F(TablesTest, AllPaperRowsShowsRowsNotRun) {
  ojson spec = ojson::parse(kSpec);
  spec["all_paper_rows"] = true;
  const auto t = render_tables(fixture(), {spec}, dir_.path().string());
  EXPECT_NE(t.markdown.find("| Poker | 10 | — | 100 | — | — | 50 |"), std::string::npos) << t.markdown;
}

// Peer results join runs by equal values (objects regardless of key order); a column reads the
// joined row ("peer.X") or our value at a path filled from it ("{peer.X}"); no joined row: n/a.
TEST_F(TablesTest, PeerColumnsJoinRowsOfAnotherToolsResults) {
  ojson doc = fixture();
  for (auto& r : doc["runs"]) r["metrics"]["at"] = {{"100", 11.5}, {"250", 22.5}};
  doc["runs"][0]["dataset"]["options"] = {{"b", 2}, {"a", 1}};
  PeerResults peer;
  peer.name = "river";
  peer.file = "river.json";
  peer.match = {{"dataset", "dataset.name"}, {"options", "dataset.options"}};
  peer.rows = {ojson{{"dataset", "ecoli"}, {"options", {{"a", 1}, {"b", 2}}}, {"vote", "soft"}, {"n", 100}, {"acc", 70.25}},
               ojson{{"dataset", "ecoli"}, {"options", {{"a", 1}, {"b", 2}}}, {"vote", "hard"}, {"n", 250}, {"acc", 60.5}},
               ojson{{"dataset", "iris"}, {"options", {{"a", 1}}}, {"n", 100}, {"acc", 1.0}}};
  const ojson spec = ojson::parse(R"json({
    "title": "Peers", "rows": [{"run": "dataset.name", "label": "Dataset"}],
    "columns": [
      {"label": "theirs", "select": {"backend": "sequential"}, "peer": "river", "value": "peer.acc", "format": ".2f"},
      {"label": "hard", "select": {"backend": "sequential"}, "peer": {"name": "river", "where": {"vote": "hard"}},
       "value": "peer.acc", "format": ".1f"},
      {"label": "ours at theirs", "select": {"backend": "sequential"}, "peer": {"name": "river", "where": {"vote": "hard"}},
       "value": "metrics.at.{peer.n}", "format": ".1f"}]})json");
  const auto t = render_tables(doc, {spec}, dir_.path().string(), {peer});
  EXPECT_NE(t.markdown.find("| ecoli | 70.25 | 60.5 | 22.5 |"), std::string::npos) << t.markdown;
  EXPECT_NE(t.markdown.find("| iris | n/a | n/a | n/a |"), std::string::npos) << t.markdown;  // options differ
}

// "divide_by" divides each run's value by another of its fields; "aggregate": "mean" averages
// over the row's runs: shares averaged as a paper's "all runs" row, not a ratio of medians.
TEST_F(TablesTest, PerRunSharesAveragedOverTheRowsRuns) {
  ojson doc = fixture();
  // sequential: ecoli 1 of 4 s (25 %), iris 1 of 2 s (50 %), higgs 0.9 of 9 s (10 %, estimated)
  doc["runs"][0]["metrics"]["part"] = 1.0;
  doc["runs"][2]["metrics"]["part"] = 1.0;
  doc["runs"][4]["metrics"]["part"] = 0.9;
  const ojson spec = ojson::parse(R"json({
    "title": "Shares", "rows": [{"run": "family", "label": "Runs"}],
    "columns": [
      {"label": "mean share", "select": {"backend": "sequential"}, "value": "metrics.part", "divide_by": "timing.median",
       "aggregate": "mean", "format": ".1%"},
      {"label": "median share", "select": {"backend": "sequential"}, "value": "metrics.part", "divide_by": "timing.median",
       "format": ".1%"},
      {"label": "mean s", "select": {"backend": "sequential"}, "value": "timing.median", "aggregate": "mean", "format": ".2f"}]})json");
  const auto t = render_tables(doc, {spec}, dir_.path().string());
  // mean (25 + 50 + 10) / 3 = 28.3 %, median 25 %, mean seconds (4 + 2 + 9) / 3 = 5.00; higgs: surrogate (†), estimated (*)
  EXPECT_NE(t.markdown.find("| toy † | 28.3%* | 25.0%* | 5.00* |"), std::string::npos) << t.markdown;
  // a run whose divisor is missing or zero has no value there
  doc["runs"][2]["timing"]["median"] = 0.0;
  const auto t2 = render_tables(doc, {spec}, dir_.path().string());
  EXPECT_NE(t2.markdown.find("| toy † | 17.5%* |"), std::string::npos) << t2.markdown;
}

TEST_F(TablesTest, DefaultTableHasOneRowPerRun) {
  const ojson doc = fixture();
  const auto t = render_tables(doc, {}, dir_.path().string());
  const std::string& md = t.markdown;
  EXPECT_NE(md.find("| Dataset | Backend | Median (s) | Min (s) | Max (s) | gpops_per_s | Validation | Status |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| ecoli | cuda | 0.5 | 0.5 | 0.5 | 2e+06 | — | ok |"), std::string::npos) << md;
  EXPECT_NE(md.find("| iris | cuda | — | — | — | — | — | skipped |"), std::string::npos) << md;
  EXPECT_NE(md.find("| higgs † | sequential | 9* |"), std::string::npos) << md;
  const std::string whole = render_experiment_markdown(doc, t);
  EXPECT_EQ(whole.rfind("# Fixture\n", 0), 0u);
  EXPECT_NE(whole.find("0123456789ab (dirty)"), std::string::npos) << whole;
  EXPECT_NE(whole.find("Paper: Someone 2014"), std::string::npos);
}

TEST(Text, LevenshteinAndSuggestions) {
  EXPECT_EQ(levenshtein("kitten", "sitting"), 3u);
  EXPECT_EQ(levenshtein("", "abc"), 3u);
  EXPECT_EQ(suggest("familly", {"family", "datasets"}), " (did you mean 'family'?)");
  EXPECT_EQ(suggest("zzzzzzzz", {"family", "datasets"}), " (valid: family, datasets)");
  EXPECT_EQ(suggest("x", {}), "");
}

TEST(Text, NumberFormats) {
  EXPECT_EQ(format_number(3.14159, ".2f"), "3.14");
  EXPECT_EQ(format_number(1234567.0, ",d"), "1,234,567");
  EXPECT_EQ(format_number(1234.5, ",.1f"), "1,234.5");
  EXPECT_EQ(format_number(0.1234, ".1%"), "12.3%");
  EXPECT_EQ(format_number(0.000123456, ""), "0.000123");
  EXPECT_EQ(format_number(12345.0, ".1e"), "1.2e+04");
  EXPECT_EQ(format_number(-0.0001, ".2f"), "0.00");
  EXPECT_FALSE(valid_format("%d"));
  EXPECT_FALSE(valid_format(".2x"));
  EXPECT_TRUE(valid_format(".3g"));
}

TEST(Text, CsvRoundTrip) {
  const auto rows = parse_csv("a,b,c\r\n1,\"x, y\",\"say \"\"hi\"\"\"\n\n2,,\n", "t.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][1], "x, y");
  EXPECT_EQ(rows[1][2], "say \"hi\"");
  EXPECT_EQ(rows[2], (std::vector<std::string>{"2", "", ""}));
  EXPECT_EQ(csv_field("x, y"), "\"x, y\"");
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_THROW(parse_csv("a,\"b\n", "t.csv"), Error);
  // A quoted field may hold line breaks; a quote inside an unquoted field is an error.
  const auto multi = parse_csv("k,note\n1,\"two\nlines, \"\"q\"\"\"\n2,x\n", "t.csv");
  ASSERT_EQ(multi.size(), 3u);
  EXPECT_EQ(multi[1][1], "two\nlines, \"q\"");
  EXPECT_EQ(multi[2][1], "x");
  EXPECT_THROW(parse_csv("a,b\"c\n", "t.csv"), Error);
  EXPECT_THROW(parse_csv("a,\"b\"c\n", "t.csv"), Error);
}

TEST(Text, DottedPathsAndLooseEquality) {
  const ojson j = ojson::parse(R"({"params": {"threads": 4}, "dataset": {"name": "iris"}})");
  ASSERT_NE(find_path(j, "params.threads"), nullptr);
  EXPECT_EQ(*find_path(j, "params.threads"), 4);
  EXPECT_EQ(find_path(j, "params.nope"), nullptr);
  EXPECT_EQ(find_path(j, "dataset.name.x"), nullptr);
  EXPECT_TRUE(loose_equal(ojson(4), ojson(4.0)));
  EXPECT_TRUE(loose_equal(ojson("10"), ojson(10)));
  EXPECT_FALSE(loose_equal(ojson("Iris"), ojson("iris")));
}

}  // namespace
}  // namespace gpudm::testing
