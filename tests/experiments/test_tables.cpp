// Table rendering on a fixed results fixture, and the text helpers behind it.
#include <gtest/gtest.h>

#include "algorithms/core/error.hpp"
#include "experiments/results.hpp"
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

// "product" multiplies two ratio columns of the row (a chained ratio, e.g. MOA / ours on one
// machine times ours / GPU on another); a missing factor leaves it empty; its note says so.
TEST_F(TablesTest, ProductChainsTwoRatios) {
  const ojson spec = ojson::parse(R"json({
    "title": "Chain", "rows": [{"run": "dataset.name", "label": "Dataset"}],
    "columns": [
      {"label": "CPU", "select": {"backend": "sequential"}, "value": "timing.median", "format": ".2f"},
      {"label": "GPU", "select": {"backend": "cuda"}, "value": "timing.median", "format": ".2f"},
      {"label": "cpu/gpu", "ratio": ["CPU", "GPU"], "format": ".1f"},
      {"label": "gpu/cpu", "ratio": ["GPU", "CPU"], "format": ".3f", "hidden": true},
      {"label": "chained", "product": ["cpu/gpu", "cpu/gpu"], "format": ".1f"},
      {"label": "one", "product": ["cpu/gpu", "gpu/cpu"], "format": ".2f"}]})json");
  const auto t = render_tables(fixture(), {spec}, dir_.path().string());
  EXPECT_NE(t.markdown.find("| ecoli | 4.00 | 0.50 | 8.0 | 64.0 | 1.00 |"), std::string::npos) << t.markdown;
  EXPECT_NE(t.markdown.find("| iris | 2.00 | skipped | — | — | — |"), std::string::npos) << t.markdown;
  EXPECT_NE(t.markdown.find("\"chained\" = \"cpu/gpu\" x \"cpu/gpu\" (a chained ratio"), std::string::npos) << t.markdown;
}

// "difference" subtracts two value columns' medians of the row (a call's fixed cost: its time less
// its kernels'); a missing operand leaves it empty; its note says so.
TEST_F(TablesTest, DifferenceSubtractsTwoColumns) {
  const ojson spec = ojson::parse(R"json({
    "title": "Less", "rows": [{"run": "dataset.name", "label": "Dataset"}],
    "columns": [
      {"label": "CPU", "select": {"backend": "sequential"}, "value": "timing.median", "format": ".2f"},
      {"label": "GPU", "select": {"backend": "cuda"}, "value": "timing.median", "format": ".2f"},
      {"label": "cpu-gpu ms", "difference": ["CPU", "GPU"], "scale": 1000.0, "format": ",d"}]})json");
  const auto t = render_tables(fixture(), {spec}, dir_.path().string());
  EXPECT_NE(t.markdown.find("| ecoli | 4.00 | 0.50 | 3,500 |"), std::string::npos) << t.markdown;
  EXPECT_NE(t.markdown.find("| iris | 2.00 | skipped | — |"), std::string::npos) << t.markdown;
  EXPECT_NE(t.markdown.find("\"cpu-gpu ms\" = \"CPU\" - \"GPU\" (the two cells of the same row)"), std::string::npos) << t.markdown;
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
  EXPECT_NE(whole.find("0123456789ab-dirty"), std::string::npos) << whole;
  EXPECT_NE(whole.find("Paper: Someone 2014"), std::string::npos);
}

// ---- where the runs were measured ----

ojson provenance(const std::string& sha, bool dirty, const std::string& host, const std::string& when,
                 const std::string& cpu = "Test CPU", int threads = 2, ojson gpus = ojson::array()) {
  return {{"git_sha", sha},
          {"git_dirty", dirty},
          {"utc_time", when},
          {"machine", {{"host", host}, {"cpu_model", cpu}, {"cpu_threads", threads}, {"gpus", std::move(gpus)}}}};
}

const std::string kShaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const std::string kShaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

// The fixture's runs measured at two commits on two machines: the sequential runs and the ecoli
// cuda run on "alpha", the other cuda runs on "beta" with a dirty tree.
ojson mixed_fixture() {
  ojson doc = fixture();
  for (auto& r : doc["runs"]) {
    const bool beta = r["backend"] == "cuda" && r["dataset"]["name"] != "ecoli";
    r["provenance"] = beta ? provenance(kShaB, true, "beta", "2026-01-03T00:00:00Z", "Big CPU", 16, {"NVIDIA H200", "NVIDIA H200"})
                           : provenance(kShaA, false, "alpha", r["dataset"]["name"] == "higgs" ? "2026-01-02T00:00:00Z"
                                                                                               : "2026-01-01T00:00:00Z");
  }
  return doc;
}

class ProvenanceTest : public TablesTest {
 protected:
  void SetUp() override {
    TablesTest::SetUp();
    write_file(dir_ / "repo/configs/fx.json", "{}");
  }
  std::string whole(const ojson& doc, const std::vector<ojson>& specs = {}) {
    return render_experiment_markdown(doc, render_tables(doc, specs, dir_.path().string()), dir_ / "repo");
  }
};

TEST_F(ProvenanceTest, RunsFromSeveralOriginsAreTaggedAndListed) {
  const ojson doc = mixed_fixture();
  const std::string md = whole(doc);
  EXPECT_NE(md.find("Measured at 2 commits on 2 machines; each row's first cell is tagged with its runs' origin; "
                    "config configs/fx.json.\n\n"
                    "- [a] gpudm aaaaaaaaaaaa on Test CPU (2 threads), host alpha; 2026-01-01T00:00:00Z to 2026-01-02T00:00:00Z\n"
                    "- [b] gpudm bbbbbbbbbbbb-dirty on 2 × NVIDIA H200 + Big CPU (16 threads), host beta; 2026-01-03T00:00:00Z\n\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| ecoli [a] | cuda |"), std::string::npos) << md;
  // iris's cuda run was skipped on "beta": it measured nothing, so it names no origin.
  EXPECT_NE(md.find("| iris | cuda |"), std::string::npos) << md;
  EXPECT_NE(md.find("| higgs † [b] | cuda |"), std::string::npos) << md;
  EXPECT_NE(md.find("| higgs † [a] | sequential |"), std::string::npos) << md;
  // A row of the paper's layout gathers the runs of its cells: every origin among them.
  const auto t = render_tables(doc, {ojson::parse(kSpec)}, dir_.path().string());
  EXPECT_NE(t.markdown.find("| Ecoli [a] | 10 |"), std::string::npos) << t.markdown;
  EXPECT_NE(t.markdown.find("| Iris [a] | 10 |"), std::string::npos) << t.markdown;
  EXPECT_NE(t.markdown.find("| higgs † [a,b] | 10 |"), std::string::npos) << t.markdown;
  // The CSV holds values only.
  EXPECT_EQ(t.csv.find("[a"), std::string::npos) << t.csv;
  EXPECT_NE(t.csv.find("Times,Ecoli,10,"), std::string::npos) << t.csv;
}

TEST_F(ProvenanceTest, RunsOfOneOriginGetOneLine) {
  ojson doc = mixed_fixture();
  for (auto& r : doc["runs"]) r["provenance"] = provenance(kShaA, false, "alpha", "2026-01-01T00:00:00Z");
  doc["runs"][5]["provenance"]["utc_time"] = "2026-01-01T02:00:00Z";
  const std::string md = whole(doc);
  EXPECT_NE(md.find("\nMeasured on Test CPU (2 threads); gpudm aaaaaaaaaaaa; 2026-01-01T00:00:00Z to "
                    "2026-01-01T02:00:00Z; config configs/fx.json.\n\n## Fixture"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("[a]"), std::string::npos) << md;
}

// A later invocation that only tried the skipped runs again (no device for them) measured nothing:
// the header names the one origin of the measurements.
TEST_F(ProvenanceTest, RunsThatMeasuredNothingAreNoOrigin) {
  ojson doc = mixed_fixture();
  for (auto& r : doc["runs"])
    if (r["provenance"]["machine"]["host"] == "beta") r["status"] = "skipped";
  const std::string md = whole(doc);
  EXPECT_NE(md.find("\nMeasured on Test CPU (2 threads); gpudm aaaaaaaaaaaa; 2026-01-01T00:00:00Z to "
                    "2026-01-02T00:00:00Z; config configs/fx.json.\n\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("beta"), std::string::npos) << md;
  EXPECT_EQ(md.find("[a"), std::string::npos) << md;
  // Nothing measured at all: the runs that were tried are still named.
  for (auto& r : doc["runs"]) r["status"] = "skipped";
  EXPECT_NE(whole(doc).find("Measured at 2 commits on 2 machines"), std::string::npos) << whole(doc);
}

// Only the runs the tables show count: a table of the sequential runs (all on "alpha") names
// one origin though the file also holds runs from "beta".
TEST_F(ProvenanceTest, OnlyTheRunsShownCount) {
  const ojson spec = ojson::parse(R"json({"title": "CPU", "rows": [{"run": "dataset.name", "label": "Dataset"}],
    "columns": [{"label": "CPU (s)", "select": {"backend": "sequential"}, "value": "timing.median", "format": ".2f"}]})json");
  const std::string md = whole(mixed_fixture(), {spec});
  EXPECT_NE(md.find("Measured on Test CPU (2 threads); gpudm aaaaaaaaaaaa;"), std::string::npos) << md;
  EXPECT_EQ(md.find("beta"), std::string::npos) << md;
  EXPECT_NE(md.find("| ecoli | 4.00 |"), std::string::npos) << md;
}

// Runs without their own provenance: the file's block, as before runs carried one.
TEST_F(ProvenanceTest, OlderFilesUseTheTopLevelBlock) {
  ojson doc = fixture();
  doc["environment"]["devices"] = ojson::array({{{"index", 0}, {"name", "NVIDIA H100 80GB HBM3"}}});
  const std::string single = whole(doc);
  EXPECT_NE(single.find("\nMeasured on NVIDIA H100 80GB HBM3 + Test CPU (2 threads); gpudm 0123456789ab-dirty; "
                        "2026-01-01T00:00:00Z; config configs/fx.json.\n\n## Fixture"),
            std::string::npos)
      << single;
  EXPECT_EQ(single.find("[a]"), std::string::npos) << single;
  // Resumed across invocations, no run with its own: any invocation may have measured a run, so
  // the header names them all rather than the last one's machine and commit alone.
  doc["provenance"]["previous"] = ojson::array({{{"git_sha", kShaB}, {"hostname", "old"}}});
  const std::string md = whole(doc);
  EXPECT_NE(md.find("\nMeasured by several invocations; the runs did not record which; config configs/fx.json.\n\n"
                    "- recorded before runs carried their own provenance; measured by one of the file's invocations "
                    "(the last on NVIDIA H100 80GB HBM3 + Test CPU (2 threads)): gpudm bbbbbbbbbbbb on host old; "
                    "gpudm 0123456789ab-dirty on host "),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("Measured on"), std::string::npos) << md;
  EXPECT_EQ(md.find("[a]"), std::string::npos) << md;
  // ... unless every invocation was the last one's commit on its host: that is the origin
  ojson same = doc["provenance"];
  same.erase("previous");
  doc["provenance"]["previous"] = ojson::array({same});
  EXPECT_NE(whole(doc).find("\nMeasured on NVIDIA H100 80GB HBM3 + Test CPU (2 threads); gpudm 0123456789ab-dirty; "), std::string::npos)
      << whole(doc);
  doc["provenance"]["previous"] = ojson::array({{{"git_sha", kShaB}, {"hostname", "old"}}});
  // An older file resumed: the runs without one came from an earlier invocation, which one
  // is not known; they are not put down to the last invocation.
  doc["runs"][1]["provenance"] = provenance(kShaA, false, "alpha", "2026-01-05T00:00:00Z");
  const std::string mixed = whole(doc);
  EXPECT_NE(mixed.find("Measured at 1 commit on 1 machine, and by runs that did not record theirs;"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("- [a] recorded before runs carried their own provenance; measured by one of the file's earlier "
                       "invocations: gpudm bbbbbbbbbbbb on host old\n- [b] gpudm aaaaaaaaaaaa on Test CPU (2 threads), "
                       "host alpha; 2026-01-05T00:00:00Z\n"),
            std::string::npos)
      << mixed;
  EXPECT_NE(mixed.find("| ecoli [b] | cuda |"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("| ecoli [a] | sequential |"), std::string::npos) << mixed;
}

TEST_F(ProvenanceTest, TheConfigIsNamedByItsPathInTheRepository) {
  ojson doc = fixture();
  EXPECT_NE(whole(doc).find("; config configs/fx.json.\n"), std::string::npos);
  // Absolute, inside the repository: named relative to it.
  doc["experiment"]["config_path"] = dir_ / "repo/configs/../configs/fx.json";
  EXPECT_NE(whole(doc).find("; config configs/fx.json.\n"), std::string::npos) << whole(doc);
  // Outside the repository, or not there (any more).
  doc["experiment"]["config_path"] = dir_ / "fx.csv";
  EXPECT_NE(whole(doc).find("; config: " + (dir_ / "fx.csv") + " (not in the repository).\n"), std::string::npos) << whole(doc);
  doc["experiment"]["config_path"] = "configs/gone.json";
  EXPECT_NE(whole(doc).find("; config: configs/gone.json (not in the repository).\n"), std::string::npos) << whole(doc);
  doc["experiment"]["config_path"] = "../fx.csv";
  EXPECT_NE(whole(doc).find("; config: ../fx.csv (not in the repository).\n"), std::string::npos) << whole(doc);
  // The runner's record of the path in the repository wins over the path as given.
  doc["experiment"]["config_path"] = "../../configs/fx.json";
  doc["experiment"]["config_repo_path"] = "configs/fx.json";
  EXPECT_NE(whole(doc).find("; config configs/fx.json.\n"), std::string::npos) << whole(doc);
  doc["experiment"]["config_repo_path"] = nullptr;
  EXPECT_NE(whole(doc).find("; config: ../../configs/fx.json (not in the repository).\n"), std::string::npos) << whole(doc);
}

TEST(PathInRepository, InsideOnly) {
  TempDir d;
  write_file(d / "repo/configs/a.json", "{}");
  EXPECT_EQ(path_in_repository(d / "repo/configs/a.json", d / "repo"), "configs/a.json");
  EXPECT_EQ(path_in_repository(d / "repo/configs/../configs/a.json", d / "repo/"), "configs/a.json");
  EXPECT_EQ(path_in_repository(d / "repo/configs/new.json", d / "repo"), "configs/new.json");  // lexical: need not exist
  EXPECT_EQ(path_in_repository(d / "elsewhere.json", d / "repo"), "");
  EXPECT_EQ(path_in_repository(d / "repo", d / "repo"), "");
  EXPECT_EQ(path_in_repository(d / "repository/a.json", d / "repo"), "");
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
