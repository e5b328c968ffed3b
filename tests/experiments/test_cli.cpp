// The built binaries end to end: exit codes, one-line errors on stderr, results untouched on
// config and data errors. run_experiment_harness has the toy family; run_experiment is the
// product binary (its data test needs a product family and the catalog; it skips otherwise).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>

#include "tests/experiments/test_util.hpp"

namespace gpudm::testing {
namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

Result run(const std::string& bin, const std::string& args, const TempDir& tmp, const std::string& env = "") {
  const std::string out = tmp / "stdout.txt", err = tmp / "stderr.txt";
  const std::string cmd = env + " '" + bin + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int st = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Snapshot of a folder: relative path -> content.
std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  std::map<std::string, std::string> m;
  if (!std::filesystem::exists(dir)) return m;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) m[std::filesystem::relative(e.path(), dir).string()] = slurp(e.path().string());
  return m;
}

const std::string kHarness = GPUDM_HARNESS_BIN;
const std::string kProduct = GPUDM_RUN_EXPERIMENT_BIN;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A results folder with an earlier experiment's files that no failed invocation may touch.
    write_file(tmp_ / "results/x.json", "{\"schema_version\": 1, \"runs\": []}\n");
    write_file(tmp_ / "results/x.md", "# old\n");
    before_ = snapshot(tmp_.path() / "results");
  }
  void expect_untouched() { EXPECT_EQ(snapshot(tmp_.path() / "results"), before_); }
  std::string out_arg() const { return "--out '" + (tmp_ / "results") + "' --quiet"; }
  TempDir tmp_;
  std::map<std::string, std::string> before_;
};

TEST_F(CliTest, HarnessRunsAConfigAndPrintsTheTable) {
  write_file(tmp_ / "x.json", R"({"experiment": "x", "family": "toy", "datasets": ["tiny"], "backends": ["sequential", "cuda"], "repetitions": 2})");
  const auto r = run(kHarness, "'" + (tmp_ / "x.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("| tiny | sequential |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| tiny | cuda |"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;  // --quiet
  EXPECT_NE(slurp(tmp_ / "results/x.json").find("\"schema_version\": 1"), std::string::npos);
}

TEST_F(CliTest, RenderWritesTheTablesOfTheFileAsItStandsAndRunsNothing) {
  write_file(tmp_ / "x.json", R"({"experiment": "x", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"], "repetitions": 2})");
  ASSERT_EQ(run(kHarness, "'" + (tmp_ / "x.json") + "' " + out_arg(), tmp_).code, 0);
  const std::string json = slurp(tmp_ / "results/x.json");
  write_file(tmp_ / "results/x.md", "# stale\n");
  // The config now names a second backend: --render must not run it, only render the file.
  write_file(tmp_ / "x.json", R"({"experiment": "x", "family": "toy", "datasets": ["tiny"], "backends": ["sequential", "cuda"], "repetitions": 2})");
  const auto r = run(kHarness, "'" + (tmp_ / "x.json") + "' --render " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(tmp_ / "results/x.json"), json);
  EXPECT_NE(slurp(tmp_ / "results/x.md").find("| tiny | sequential |"), std::string::npos);
  EXPECT_EQ(r.out.find("| tiny | cuda |"), std::string::npos) << r.out;
  const auto missing = run(kHarness, "'" + (tmp_ / "x.json") + "' --render --out '" + (tmp_ / "elsewhere") + "' --quiet", tmp_);
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("no results file to render"), std::string::npos) << missing.err;
}

TEST_F(CliTest, MalformedConfigIsOneLineExit2AndTouchesNothing) {
  write_file(tmp_ / "x.json", "{\n  \"experiment\": \"x\",\n  \"family\": \"toy\"\n  \"datasets\": [\"tiny\"]\n}\n");
  const auto r = run(kHarness, "'" + (tmp_ / "x.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("x\\.json:4:[0-9]+: "))) << r.err;
  expect_untouched();
  // An unknown key: exit 2, suggestion, nothing touched.
  write_file(tmp_ / "x.json", R"({"experiment": "x", "family": "toy", "datasets": ["tiny"], "repetitons": 1})");
  const auto r2 = run(kHarness, "'" + (tmp_ / "x.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r2.code, 2);
  EXPECT_EQ(lines(r2.err), 1) << r2.err;
  EXPECT_NE(r2.err.find("did you mean 'repetitions'"), std::string::npos) << r2.err;
  expect_untouched();
}

TEST_F(CliTest, MalformedDatasetIsOneLineExit1AndTouchesNothing) {
  write_file(tmp_ / "x.json", R"({"experiment": "x", "family": "toy", "datasets": ["tiny", "broken"], "backends": ["sequential"]})");
  const auto r = run(kHarness, "'" + (tmp_ / "x.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("broken.csv:3"), std::string::npos) << r.err;
  expect_untouched();
  // Without --quiet too: the error is the only line.
  const auto r2 = run(kHarness, "'" + (tmp_ / "x.json") + "' --out '" + (tmp_ / "results") + "'", tmp_);
  EXPECT_EQ(r2.code, 1);
  EXPECT_EQ(lines(r2.err), 1) << r2.err;
  expect_untouched();
}

TEST_F(CliTest, FailedRunExitsNonZeroAfterWritingResults) {
  write_file(tmp_ / "y.json", R"({"experiment": "y", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "sweep": {"fail": ["", "error"]}, "repetitions": 1})");
  const auto r = run(kHarness, "'" + (tmp_ / "y.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(slurp(tmp_ / "results/y.json").find("toy: asked to fail"), std::string::npos);
}

TEST_F(CliTest, UsageErrorsAndModes) {
  auto r = run(kHarness, "", tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no CONFIG given"), std::string::npos);
  r = run(kHarness, "--no-such-flag", tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  r = run(kHarness, "--list", tmp_);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("toy"), std::string::npos);
  EXPECT_NE(r.out.find("skipped: no device in tests"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("population"), std::string::npos);
  r = run(kHarness, "--list --datasets", tmp_);
  EXPECT_EQ(r.code, 2);
  write_file(tmp_ / "z.json", R"({"experiment": "z", "family": "toy", "datasets": ["tiny"]})");
  // An empty -o (an unset $OUT in a script) is a usage error, not the default results folder.
  for (const char* empty : {"-o ''", "--out ''", "--out="}) {  // (the last: CLI11's own "missing" message)
    r = run(kHarness, "'" + (tmp_ / "z.json") + "' " + empty, tmp_);
    EXPECT_EQ(r.code, 2) << empty << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.err.find("empty folder name") != std::string::npos || r.err.find("--out") != std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "results/z.json"));
  r = run(kHarness, "'" + (tmp_ / "z.json") + "' -b openmp -b sequential " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("| cuda |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| tiny | openmp |"), std::string::npos) << r.out;
}

TEST_F(CliTest, DryRunValidatesAndWritesNothing) {
  write_file(tmp_ / "d.json", R"({"experiment": "d", "family": "toy", "datasets": ["tiny", "broken"], "sweep": {"population": [1, 2]}})");
  auto r = run(kHarness, "'" + (tmp_ / "d.json") + "' --dry-run " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("family toy, 12 run(s) on 2 dataset(s); cuda 4 (skipped: unavailable) openmp 4 sequential 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("config ok: 12 run(s)"), std::string::npos) << r.out;
  expect_untouched();
  write_file(tmp_ / "d.json", R"({"experiment": "d", "family": "toy", "datasets": ["tiny"], "swep": {}})");
  r = run(kHarness, "'" + (tmp_ / "d.json") + "' --dry-run " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("did you mean 'sweep'"), std::string::npos) << r.err;
}

TEST_F(CliTest, RawModesGetTheRestOfTheCommandLine) {
  auto r = run(kHarness, "--quiet --echo-rest gmt --dataset iris --cv 10", tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "gmt|--dataset|iris|--cv|10\n");
  r = run(kHarness, "--help", tmp_);
  EXPECT_NE(r.out.find("--echo-rest ARGS"), std::string::npos) << r.out;
}

TEST_F(CliTest, FamilyCommandsRouteByFamilyAndModelFormat) {
  auto r = run(kHarness, "--train toy --dataset tiny --cv 3", tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "toy-train|--dataset|tiny|--cv|3\n");
  r = run(kHarness, "--train nosuch --dataset tiny", tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no family has this mode (toy)"), std::string::npos) << r.err;
  write_file(tmp_ / "m.json", R"({"format": "toy-model", "tree": {}})");
  r = run(kHarness, "--predict '" + (tmp_ / "m.json") + "' --dataset tiny", tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "toy-predict|" + (tmp_ / "m.json") + "|--dataset|tiny\n");
  write_file(tmp_ / "other.json", R"({"format": "someone-else"})");
  r = run(kHarness, "--predict '" + (tmp_ / "other.json") + "'", tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("model format 'someone-else' is read by no family (known formats: toy-model)"), std::string::npos) << r.err;
  r = run(kHarness, "--help", tmp_);
  EXPECT_NE(r.out.find("--train toy ARGS"), std::string::npos) << r.out;
}

TEST_F(CliTest, ParamRangesAreCheckedBeforeAnythingIsWritten) {
  write_file(tmp_ / "p.json", R"({"experiment": "p", "family": "toy", "datasets": ["tiny"], "params": {"population": [10, 0]}})");
  auto r = run(kHarness, "'" + (tmp_ / "p.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("params.population[1]: param 'population' expects an int in [1, 100000], got 0"), std::string::npos) << r.err;
  write_file(tmp_ / "q.json", R"({"experiment": "q", "family": "toy", "datasets": ["tiny"], "params": {"population": 2147483648}})");
  r = run(kHarness, "'" + (tmp_ / "q.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("expects an int in [1, 100000], got 2147483648"), std::string::npos) << r.err;
  expect_untouched();
}

TEST_F(CliTest, ProductBinaryHelpListAndMalformedConfig) {
  auto r = run(kProduct, "--help", tmp_);
  EXPECT_EQ(r.code, 0);
  for (const char* opt : {"--backend", "--smoke", "--out", "--resume", "--repetitions", "--list", "--datasets", "--quiet",
                          "--evaluate", "--train", "--predict"})
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
  r = run(kProduct, "--list", tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Families ("), std::string::npos);
  EXPECT_EQ(r.out.find("toy"), std::string::npos) << "the test family leaked into the product";
  write_file(tmp_ / "bad.json", "{\"experiment\": \"x\",, }");
  r = run(kProduct, "'" + (tmp_ / "bad.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("bad.json:1:"), std::string::npos) << r.err;
  expect_untouched();
}

TEST_F(CliTest, ProductBinaryMalformedDataset) {
  // A data folder laid out like ../shared/datasets whose iris file is ragged.
  const auto list = run(kProduct, "--list", tmp_);
  std::smatch m;
  if (!std::regex_search(list.out, m, std::regex("\n([a-z_0-9]+) — ")))
    GTEST_SKIP() << "the product has no runnable family yet";
  const std::string family = m[1].str();
  write_file(tmp_ / "data/iris/iris.tsv", "a\tb\tc\td\ttarget\n1\t2\t3\t4\t0\n1\t2\t3\n");
  write_file(tmp_ / "data/iris/iris.tsv.gz", "this is not gzip data\n");
  write_file(tmp_ / "x.json", "{\"experiment\": \"x\", \"family\": \"" + family +
                                  "\", \"datasets\": [\"iris\"], \"backends\": [\"sequential\"], \"repetitions\": 1}");
  const auto r = run(kProduct, "'" + (tmp_ / "x.json") + "' " + out_arg(), tmp_,
                     "GPUDM_DATA_DIR='" + (tmp_ / "data") + "'");
  if (r.code == 2 && r.err.find("unknown dataset") != std::string::npos) GTEST_SKIP() << "no catalog yet: " << r.err;
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("iris"), std::string::npos) << r.err;
  expect_untouched();
}

TEST_F(CliTest, CompareModeExitCodesAndJson) {
  // A run of the toy family, then its file against itself: no run differs, exit 0.
  write_file(tmp_ / "c.json", R"({"experiment": "c", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"], "repetitions": 5})");
  ASSERT_EQ(run(kHarness, "'" + (tmp_ / "c.json") + "' " + out_arg(), tmp_).code, 0);
  const std::string file = tmp_ / "results/c.json";
  auto r = run(kHarness, "--compare '" + file + "' '" + file + "'", tmp_);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("# Compare: c"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  r = run(kHarness, "--compare '" + file + "' '" + file + "' --json", tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"exit_status\": 0"), std::string::npos) << r.out;
  // Bad input: exit 2, one line on stderr.
  r = run(kHarness, "--compare '" + file + "' '" + (tmp_ / "missing.json") + "'", tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  r = run(kHarness, "--compare '" + file + "'", tmp_);
  EXPECT_EQ(r.code, 2) << r.err;
  r = run(kHarness, "--compare '" + file + "' '" + file + "' --min-repetitions 9", tmp_);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("repetitions"), std::string::npos) << r.err;
  // --help documents the mode.
  EXPECT_NE(run(kHarness, "--help", tmp_).out.find("--compare"), std::string::npos);
}

// ---- reliability (docs/reliability.md) ----

// Every committed config passes validation (integer bounds, param ranges, sweep cap), full and
// --smoke, so a config added by a later change cannot bypass the guards of docs/reliability.md.
TEST_F(CliTest, EveryCommittedConfigValidates) {
  int checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GPUDM_SOURCE_DIR) + "/configs")) {
    if (e.path().extension() != ".json") continue;
    for (const char* mode : {"", " --smoke"}) {
      const auto r = run(kProduct, "'" + e.path().string() + "' --dry-run" + mode, tmp_);
      EXPECT_EQ(r.code, 0) << e.path().filename() << mode << ": " << r.err;
    }
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

TEST_F(CliTest, TwoWritersOfOneResultsFile) {
  // The first writer holds the results file for ~3 s (two runs of 1.5 s).
  write_file(tmp_ / "w.json", R"({"experiment": "w", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "sweep": {"population": [1, 2]}, "params": {"fail": "sleep"}, "warmup": 0, "repetitions": 1})");
  const std::string out_dir = tmp_ / "results";
  const std::string cfg = tmp_ / "w.json";
  const pid_t first = fork();
  ASSERT_GE(first, 0);
  if (first == 0) {
    std::freopen("/dev/null", "w", stdout);
    execl(kHarness.c_str(), kHarness.c_str(), cfg.c_str(), "--out", out_dir.c_str(), "--quiet", static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 200 && !std::filesystem::exists(tmp_ / "results/w.json.lock"); ++i) usleep(25000);
  const auto second = run(kHarness, "'" + cfg + "' " + out_arg(), tmp_);
  EXPECT_EQ(second.code, 1);
  EXPECT_EQ(lines(second.err), 1) << second.err;
  EXPECT_NE(second.err.find("w.json is being written by another run_experiment (pid " + std::to_string(first) + " on host "),
            std::string::npos)
      << second.err;
  int status = 0;
  ASSERT_EQ(waitpid(first, &status, 0), first);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_NE(slurp(tmp_ / "results/w.json").find("\"population\":2"), std::string::npos);  // nothing lost
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "results/w.json.lock"));
}

TEST_F(CliTest, LargeSweepsAndOversizedIntegersAreUsageErrors) {
  std::string values;
  for (int i = 1; i <= 10001; ++i) {
    if (i > 1) values += ',';
    values += std::to_string(i);
  }
  write_file(tmp_ / "big.json", R"({"experiment": "big", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "sweep": {"population": [)" + values + "]}}");
  auto r = run(kHarness, "'" + (tmp_ / "big.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("pass --allow-large-sweep"), std::string::npos) << r.err;
  r = run(kHarness, "--help", tmp_);
  for (const char* doc : {"--allow-large-sweep", "--target COLUMN", "--task classification|regression", "\"path\""})
    EXPECT_NE(r.out.find(doc), std::string::npos) << doc;
  r = run(kHarness, "'" + (tmp_ / "big.json") + "' --allow-large-sweep -n", tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("config ok: 10001 run(s)"), std::string::npos) << r.out;
  write_file(tmp_ / "r.json", R"({"experiment": "r", "family": "toy", "datasets": ["tiny"], "repetitions": 2147483648})");
  r = run(kHarness, "'" + (tmp_ / "r.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("repetitions: expected an int in [1, 1000000], got 2147483648"), std::string::npos) << r.err;
  r = run(kHarness, "'" + (tmp_ / "x.json") + "' -r 4294967297 " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 2) << r.err;
  expect_untouched();
}

// The product binary with a user's own files: --dataset PATH with --target/--task in the family
// modes, {"path": ...} in a config, and hostile population and model files (docs/reliability.md).
class ProductUserData : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    const auto list = run(kProduct, "--list", tmp_);
    if (list.out.find("\npittsburgh — ") == std::string::npos || list.out.find("\ngmt — ") == std::string::npos)
      GTEST_SKIP() << "the product lacks the pittsburgh or gmt family";
    std::string csv = "sepal_l,sepal_w,petal_l,petal_w,species\n";
    for (int i = 0; i < 60; ++i)
      csv += std::to_string(4 + i % 4) + "." + std::to_string(i % 10) + ",3." + std::to_string(i % 7) + "," +
             std::to_string(1 + i % 6) + ".2,0." + std::to_string(i % 9) + "," + (i % 3 == 0 ? "setosa" : i % 3 == 1 ? "versicolor" : "virginica") + "\n";
    write_file(tmp_ / "my/flowers.csv", csv);
    std::string reg = "x1,x2,y\n";
    for (int i = 0; i < 80; ++i) reg += std::to_string(i % 9) + "," + std::to_string(i % 5) + "," + std::to_string(i % 9 * 2 + i % 5) + ".5\n";
    write_file(tmp_ / "my/reg.csv", reg);
  }
  std::string population(const std::string& header, const std::string& rule = R"({"antecedent": [">", 2, 2.5], "consequent": 1})") {
    write_file(tmp_ / "pop.json", R"({"format": "gpudm-pittsburgh-population", "version": 1, )" + header +
                                      R"("individuals": [{"default_class": 0, "rules": [)" + rule + "]}]}");
    return "--evaluate pittsburgh --population '" + (tmp_ / "pop.json") + "' --dataset '" + (tmp_ / "my/flowers.csv") + "'";
  }
};

TEST_F(ProductUserData, EvaluateAPopulationOnTheUsersCsv) {
  auto r = run(kProduct, population(R"("attributes": 4, "classes": 3, )") + " --target species", tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"accuracy\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("flowers.csv"), std::string::npos) << r.out;
  // The header is checked against the data, with the numbers of both.
  r = run(kProduct, population(R"("attributes": 5, "classes": 4, )"), tmp_);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("the header declares 5 attributes, dataset '" + (tmp_ / "my/flowers.csv") + "' has 4"), std::string::npos) << r.err;
  r = run(kProduct, population(R"("attributes": 4, "classes": 2, )"), tmp_);
  EXPECT_NE(r.err.find("the header declares 2 classes"), std::string::npos) << r.err;
  r = run(kProduct, population("", R"({"antecedent": [">", 2, 1e39], "consequent": 1})"), tmp_);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("float range"), std::string::npos) << r.err;
  r = run(kProduct, population("", R"({"antecedent": [], "consequent": 1, "wieght": 1})"), tmp_);
  EXPECT_NE(r.err.find("unknown key \"wieght\""), std::string::npos) << r.err;
  r = run(kProduct, population(R"("attributes": 4, )") + " --target nope", tmp_);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no column named 'nope'"), std::string::npos) << r.err;
  r = run(kProduct, "--evaluate pittsburgh --population '" + (tmp_ / "pop.json") + "' --dataset iris --target species", tmp_);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--target, --task and --header apply to a data file given by path"), std::string::npos) << r.err;
}

TEST_F(ProductUserData, TrainAndPredictGmtOnTheUsersCsv) {
  const std::string model = tmp_ / "model.json";
  auto r = run(kProduct, "--train gmt --dataset '" + (tmp_ / "my/reg.csv") + "' --target y --param population=6 --param iterations=5 "
                         "--backend sequential --model-out '" + model + "' --quiet", tmp_);
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  r = run(kProduct, "--predict '" + model + "' --dataset '" + (tmp_ / "my/reg.csv") + "'", tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("RMSE"), std::string::npos) << r.out;
  // A model nested 20,000 deep is a one-line error, not a stack overflow.
  std::string deep = R"({"format": "gpudm-gmt-model", "version": 1, "attributes": ["x1", "x2"], "tree": )";
  for (int i = 0; i < 20000; ++i) deep += R"({"attribute": 0, "threshold": 1, "right": {"leaf": true, "intercept": 0}, "left": )";
  deep += R"({"leaf": true, "intercept": 0})" + std::string(20001, '}');
  write_file(tmp_ / "deep.json", deep);
  r = run(kProduct, "--predict '" + (tmp_ / "deep.json") + "' --dataset '" + (tmp_ / "my/reg.csv") + "'", tmp_);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("JSON nested deeper than 256 levels"), std::string::npos) << r.err;
  r = run(kProduct, "--train gmt --dataset '" + (tmp_ / "my/reg.csv") + "' --cv abc", tmp_);
  EXPECT_NE(r.err.find("--cv expects an integer in [2, 1048576], got 'abc'"), std::string::npos) << r.err;
}

// Through the binary: a missing-value spelling keeps a column numeric; outputs to a device node
// write through it (the node stays); a folder as an output, a FIFO as data and a header with no
// rows are one-line errors with exit 1, before any run.
TEST_F(ProductUserData, UsersFilesAndOutputsThroughTheBinary) {
  std::string reg = slurp(tmp_ / "my/reg.csv");
  reg.replace(reg.find("\n0,0,") + 1, 1, "NA");  // the first row's x1
  write_file(tmp_ / "my/na.csv", reg);
  const std::string train = "--train gmt --target y --param population=6 --param iterations=5 --backend sequential --quiet ";
  const std::string null_node = tmp_ / "null";
  const bool node = ::mknod(null_node.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
  auto r = run(kProduct, train + "--dataset '" + (tmp_ / "my/na.csv") + "' --model-out '" + (tmp_ / "m.json") +
                             "' --metrics-out '" + (node ? null_node : std::string(tmp_ / "metrics.json")) + "'", tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("read as categories"), std::string::npos) << r.err;
  struct stat st {};
  if (node && ::stat(null_node.c_str(), &st) == 0) {
    EXPECT_TRUE(S_ISCHR(st.st_mode));  // not replaced by a file
  }
  r = run(kProduct, "--predict '" + (tmp_ / "m.json") + "' --dataset '" + (tmp_ / "my/reg.csv") + "' --predictions-out '" +
                        (tmp_ / "my") + "'", tmp_);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is a folder, not a file"), std::string::npos) << r.err;
  ASSERT_EQ(::mkfifo((tmp_ / "pipe.csv").c_str(), 0600), 0);
  r = run(kProduct, train + "--dataset '" + (tmp_ / "pipe.csv") + "'", tmp_);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("a FIFO (a pipe), not a file"), std::string::npos) << r.err;
  write_file(tmp_ / "my/header_only.csv", "x1,x2,y\n");
  r = run(kProduct, train + "--dataset '" + (tmp_ / "my/header_only.csv") + "'", tmp_);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no data rows (only a header line, line 1)"), std::string::npos) << r.err;
}

// One error per cause, worded the same in every mode and with the same exit status: a data file
// named without a folder that is absent, a FIFO, a folder or only a header (these used to be
// "not in the catalog", or a nominal-target message), a model or population file that is not
// JSON (exit 1), an unknown option (exit 2). Each is one line starting "run_experiment: error: ".
TEST_F(ProductUserData, OneErrorPerCauseWordedTheSameInEveryMode) {
  const std::string model = tmp_ / "m.json";
  ASSERT_EQ(run(kProduct, "--train gmt --dataset '" + (tmp_ / "my/reg.csv") + "' --param population=6 --param iterations=2 "
                          "--backend sequential --quiet --model-out '" + model + "'", tmp_).code, 0);
  population(R"("attributes": 2, "classes": 2, )");
  ASSERT_EQ(::mkfifo((tmp_ / "pipe.csv").c_str(), 0600), 0);
  std::filesystem::create_directories(tmp_ / "dir.csv");
  write_file(tmp_ / "header_only.csv", "x1,x2,y\n");
  write_file(tmp_ / "bad.json", "{ not json");
  const std::string in_tmp = "cd '" + tmp_.path().string() + "' &&";
  const std::vector<std::string> modes = {"--train gmt --dataset ", "--train gp_rules --algorithm falco --dataset ",
                                          "--evaluate pittsburgh --population pop.json --dataset ", "--predict m.json --dataset "};
  const std::vector<std::pair<std::string, std::string>> data = {
      {"absent.csv", "dataset 'absent.csv': data file absent.csv: cannot open: No such file or directory"},
      {"pipe.csv", "dataset 'pipe.csv': data file pipe.csv: a FIFO (a pipe), not a file"},
      {"dir.csv", "dataset 'dir.csv': data file dir.csv: a folder, not a file"},
      {"header_only.csv", "dataset 'header_only.csv': no data rows (only a header line, line 1)"}};
  const auto expect_one = [&](const std::string& args, int code, const std::string& fragment) {
    const auto r = run(kProduct, args, tmp_, in_tmp);
    EXPECT_EQ(r.code, code) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("run_experiment: error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\n" << r.err;
  };
  for (const auto& mode : modes) {
    for (const auto& [name, message] : data) expect_one(mode + name, 1, message);
    expect_one(mode + "'" + (tmp_ / "my/reg.csv") + "' --bogus 1", 2, "unknown option '--bogus'");
  }
  expect_one("--predict bad.json --dataset my/reg.csv", 1, "model file bad.json:1:4: syntax error");
  expect_one("--evaluate pittsburgh --population bad.json --dataset my/flowers.csv", 1,
             "population file bad.json:1:4: syntax error");
}

TEST_F(ProductUserData, AConfigNamesTheUsersFileByPath) {
  write_file(tmp_ / "u.json", R"({"experiment": "u", "family": "pittsburgh", "backends": ["sequential"],
      "datasets": [{"path": "my/flowers.csv", "target": "species"}], "params": {"population": 4}, "repetitions": 1})");
  auto r = run(kProduct, "'" + (tmp_ / "u.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string json = slurp(tmp_ / "results/u.json");
  EXPECT_NE(json.find("\"name\":\"" + (tmp_ / "my/flowers.csv") + "\""), std::string::npos);
  EXPECT_NE(json.find("\"sha256\""), std::string::npos);
  // Population 0 is a config error before anything is written.
  write_file(tmp_ / "z.json", R"({"experiment": "z", "family": "pittsburgh", "backends": ["sequential"],
      "datasets": [{"path": "my/flowers.csv"}], "params": {"population": 0}})");
  r = run(kProduct, "'" + (tmp_ / "z.json") + "' " + out_arg(), tmp_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("param 'population' expects an int in [1, 2147483647], got 0"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "results/z.json"));
}

}  // namespace
}  // namespace gpudm::testing
