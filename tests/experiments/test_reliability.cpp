// Reliability of the runner (docs/reliability.md): integers and nesting bounded at validation,
// sweep size capped, a user's own data file in a config, one writer per results file, an
// interrupted rerun never destroys a complete result, stale temp files removed, O(run) writes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "algorithms/core/json_limits.hpp"
#include "tests/experiments/runner_fixture.hpp"

namespace gpudm::testing {
namespace {

using namespace gpudm::experiments;
namespace fs = std::filesystem;

PlanOptions smoke() {
  PlanOptions o;
  o.smoke = true;
  return o;
}

class Reliability : public RunnerFixture {
 protected:
  void SetUp() override {
    RunnerFixture::SetUp();
    ctx_.check_dataset = [](const std::string& n) -> std::string {
      return n == "tiny" || n == "tiny_reg" ? "" : "unknown dataset '" + n + "'";
    };
    ToyFamily::calls = 0;
    ToyFamily::exit_at = 0;
  }
  std::string error_of(const std::string& text, PlanOptions opt = {}) {
    try {
      plan(text, opt);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }
};

// ---- bad input --------------------------------------------------------------------------------

TEST_F(Reliability, ConfigIntegersBeyondTheirRangeNameTheKey) {
  const std::string base = R"({"family": "toy", "datasets": ["tiny"], )";
  std::string e = error_of(base + R"("repetitions": 2147483648})");
  EXPECT_NE(e.find("repetitions: expected an int in [1, 1000000], got 2147483648"), std::string::npos) << e;
  e = error_of(base + R"("repetitions": 4294967297})");
  EXPECT_NE(e.find("repetitions: expected an int in [1, 1000000], got 4294967297"), std::string::npos) << e;
  e = error_of(base + R"("warmup": 2147483648})");
  EXPECT_NE(e.find("warmup: expected an int in [0, 1000000]"), std::string::npos) << e;
  e = error_of(base + R"("seeds": [1, -1]})");
  EXPECT_NE(e.find("seeds[1]: expected an int >= 0, got -1"), std::string::npos) << e;
  e = error_of(base + R"("seeds": [18446744073709551615]})");
  EXPECT_NE(e.find("seeds[0]: expected an int >= 0, got 18446744073709551615"), std::string::npos) << e;
  e = error_of(R"({"family": "toy", "datasets": [{"name": "tiny", "options": {"rows": 18446744073709551615}}]})");
  EXPECT_NE(e.find("datasets[0].options.rows"), std::string::npos) << e;
  e = error_of(base + R"("smoke": {"repetitions": 4294967297}})", smoke());
  EXPECT_NE(e.find("repetitions: expected an int in [1, 1000000]"), std::string::npos) << e;
  e = error_of(base + R"("params": {"population": 4294967298}})");
  EXPECT_NE(e.find("param 'population' expects an int in [1, 100000], got 4294967298"), std::string::npos) << e;
  PlanOptions big;
  big.repetitions = 2000000;
  EXPECT_NE(error_of(base + "\"repetitions\": 1}", big).find("--repetitions must be in [1, 1000000]"), std::string::npos);
}

TEST_F(Reliability, DeeplyNestedConfigIsAOneLineError) {
  // Deep enough to overflow the stack of a recursive copy or dump.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string e = error_of(R"({"family": "toy", "datasets": ["tiny"], "params": {"weights": )" + deep + "}}");
  EXPECT_NE(e.find("cfg.json:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("JSON nested deeper than 256 levels"), std::string::npos) << e;
  e = error_of(R"({"family": "toy", "datasets": ["tiny"], "comment": )" + deep + "}", smoke());
  EXPECT_NE(e.find("JSON nested deeper than 256 levels"), std::string::npos) << e;
  // 256 levels are fine; brackets inside strings do not count.
  EXPECT_EQ(json_depth_error(std::string(256, '[') + std::string(256, ']'), "x"), "");
  EXPECT_EQ(json_depth_error("[\"" + std::string(1000, '[') + "\\\"\"]", "x"), "");
  EXPECT_EQ(json_depth_error(std::string(257, '{'), "f"), "f:1:257: JSON nested deeper than 256 levels");
}

// Every other JSON the runner reads: the results file and journal on --resume, a peer results
// file of a table, and a config (or include) beyond its size cap.
TEST_F(Reliability, DeepOrOversizedFilesBeyondTheConfigAreOneLineErrors) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const ExperimentPlan p = plan(R"({"experiment": "dr", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"]})");
  write_file(dir_ / "out/dr.json", R"({"schema_version": 1, "runs": )" + deep + "}");
  try {
    run(p, true);
    ADD_FAILURE() << "resumed from a 100,000-deep results file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("JSON nested deeper than 256 levels; cannot resume"), std::string::npos) << e.what();
  }
  fs::remove(dir_ / "out/dr.json");
  write_file(dir_ / "out/dr.json.journal", deep + "\n{\"x\": 1}\n");
  try {
    run(p, true);
    ADD_FAILURE() << "resumed from a 100,000-deep journal line";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("JSON nested deeper than 256 levels"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ToyFamily::calls, 0);
  write_file(dir_ / "peers/deep.json", R"({"runs": )" + deep + "}");
  std::string e = error_of(R"({"family": "toy", "datasets": ["tiny"], "peers": [{"name": "d", "file": "peers/deep.json",
      "match": {"dataset": "dataset.name"}}]})");
  EXPECT_NE(e.find("peers[0].file: "), std::string::npos) << e;
  EXPECT_NE(e.find("JSON nested deeper than 256 levels"), std::string::npos) << e;
  write_file(dir_ / "big.json", R"({"family": "toy", "datasets": ["tiny"], "comment": ")" + std::string(17 << 20, 'x') + "\"}");
  e = error_of(R"({"include": ["big.json"]})");
  EXPECT_NE(e.find("larger than the limit of 16 MiB"), std::string::npos) << e.substr(0, 300);
}

// Inputs the fuzz campaign found (docs/reliability.md).
TEST_F(Reliability, FuzzFindingANumberBeyondTheDoubleRangeIsAConfigError) {
  const std::string e = error_of("77777e7777755554{ \"exp{");
  EXPECT_NE(e.find("cfg.json: number overflow parsing '77777e7777755554'"), std::string::npos) << e;
}

TEST_F(Reliability, LargeSweepsNeedAnExplicitFlag) {
  std::string values;
  for (int i = 1; i <= 5001; ++i) {
    if (i > 1) values += ',';
    values += std::to_string(i);
  }
  const std::string cfg = R"({"family": "toy", "datasets": ["tiny"], "sweep": {"population": [)" + values + "]}}";
  const std::string e = error_of(cfg);  // 5001 x 3 backends
  EXPECT_NE(e.find("the sweep expands to 15,003 runs, more than the limit of 10,000"), std::string::npos) << e;
  EXPECT_NE(e.find("--allow-large-sweep"), std::string::npos) << e;
  PlanOptions allow;
  allow.allow_large_sweep = true;
  EXPECT_EQ(plan(cfg, allow).runs.size(), 15003u);
  PlanOptions one_backend;
  one_backend.backends = {"sequential"};
  EXPECT_EQ(plan(cfg, one_backend).runs.size(), 5001u);  // the cap counts what would run
}

TEST_F(Reliability, AUserDataFileInAConfig) {
  write_file(dir_ / "data/houses.csv", "rooms,area,price\n3,70,1.5\n4,90,2.0\n");
  const ExperimentPlan p = plan(R"({"family": "toy", "backends": ["sequential"], "datasets": [
      {"path": "data/houses.csv", "target": "price", "task": "regression", "options": {"rows": 1}}]})");
  ASSERT_EQ(p.runs.size(), 1u);
  EXPECT_EQ(p.runs[0].dataset.name, (fs::path(dir_.path()) / "data/houses.csv").string());
  EXPECT_EQ(p.runs[0].dataset.options, ojson({{"rows", 1}, {"target", "price"}, {"task", "regression"}}));
  std::string e = error_of(R"({"family": "toy", "datasets": [{"path": "data/none.csv"}]})");
  EXPECT_NE(e.find("datasets[0].path: data file "), std::string::npos) << e;
  EXPECT_NE(e.find("none.csv: not found"), std::string::npos) << e;
  e = error_of(R"({"family": "toy", "datasets": [{"path": "data/houses.csv", "task": "regresion"}]})");
  EXPECT_NE(e.find("task must be \"classification\" or \"regression\""), std::string::npos) << e;
  e = error_of(R"({"family": "toy", "datasets": [{"path": "data/houses.csv", "targte": "price"}]})");
  EXPECT_NE(e.find("unknown key 'targte'"), std::string::npos) << e;
  e = error_of(R"({"family": "toy", "datasets": [{"path": "data/houses.csv", "options": {"sep": ";"}}]})");
  EXPECT_NE(e.find("unknown option 'sep'"), std::string::npos) << e;
}

TEST_F(Reliability, ARunWithoutSamplesIsNeverOk) {
  const auto out = run(plan(R"({"experiment": "ns", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "params": {"fail": "no_samples"}})"));
  EXPECT_EQ(out[0].ok, 0);
  EXPECT_EQ(out[0].failed, 1);
  const ojson r = results("ns")["runs"][0];
  EXPECT_EQ(r["status"], "failed");
  EXPECT_NE(r["reason"].get<std::string>().find("no timing samples"), std::string::npos) << r["reason"];
}

// ---- concurrency --------------------------------------------------------------------------------

TEST_F(Reliability, ASecondWriterOfTheSameResultsFileGetsAnErrorNamingTheHolder) {
  const ExperimentPlan p = plan(R"({"experiment": "lk", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"]})");
  {
    ResultsLock held(dir_ / "out/lk.json", "run_experiment other.json");
    try {
      run(p);
      FAIL() << "the second writer ran";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("lk.json is being written by another run_experiment (pid " + std::to_string(getpid()) + " on host "),
                std::string::npos) << m;
      EXPECT_NE(m.find("run_experiment other.json"), std::string::npos) << m;
    }
    EXPECT_EQ(ToyFamily::calls, 0);
    EXPECT_FALSE(fs::exists(dir_ / "out/lk.json"));
  }
  run(p);  // released: the next writer runs, and leaves no lock file behind
  EXPECT_EQ(results("lk")["runs"].size(), 1u);
  EXPECT_FALSE(fs::exists(dir_ / "out/lk.json.lock"));
}

// ---- interruption -------------------------------------------------------------------------------

const char* kSweep = R"({"experiment": "sw", "family": "toy", "datasets": ["tiny"], "backends": ["sequential", "openmp"],
    "sweep": {"population": [1, 2, 3]}, "warmup": 0, "repetitions": 1})";

TEST_F(Reliability, AnInterruptedRerunNeverDestroysACompleteResult) {
  const ExperimentPlan p = plan(kSweep);
  run(p);
  const std::string json = slurp(dir_ / "out/sw.json"), md = slurp(dir_ / "out/sw.md"), csv = slurp(dir_ / "out/sw.csv");
  ASSERT_EQ(results("sw")["runs"].size(), 6u);
  // Rerun without --resume, killed inside the 3rd run: the complete files are untouched.
  run_and_crash(p, 3);
  EXPECT_TRUE(slurp(dir_ / "out/sw.json") == json);  // (EXPECT_TRUE: no file dumps on failure)
  EXPECT_TRUE(slurp(dir_ / "out/sw.md") == md);
  EXPECT_TRUE(slurp(dir_ / "out/sw.csv") == csv);
  EXPECT_EQ(read_journal(dir_ / "out/sw.json.journal").records.size(), 2u);
  // --resume continues the interrupted rerun (its 2 runs, not the old file's 6), then replaces
  // the file with the complete new result.
  ToyFamily::calls = 0;
  const auto out = run(p, true);
  EXPECT_EQ(ToyFamily::calls, 4);
  EXPECT_EQ(out[0].reused, 2);
  const ojson doc = results("sw");
  ASSERT_EQ(doc["runs"].size(), 6u);
  EXPECT_EQ(doc["provenance"]["previous"].size(), 1u);  // the interrupted rerun
  EXPECT_FALSE(fs::exists(dir_ / "out/sw.json.journal"));
  // An interrupted --resume keeps the file's runs: they count again on the next --resume.
  run_and_crash(plan(R"({"experiment": "sw", "family": "toy", "datasets": ["tiny"], "backends": ["sequential", "openmp"],
      "sweep": {"population": [1, 2, 3, 4]}, "warmup": 0, "repetitions": 1})"),
                2, true);
  EXPECT_TRUE(slurp(dir_ / "out/sw.json") == dump_results(doc));
  EXPECT_EQ(read_journal(dir_ / "out/sw.json.journal").header["base"], "file");
  ToyFamily::calls = 0;
  run(plan(R"({"experiment": "sw", "family": "toy", "datasets": ["tiny"], "backends": ["sequential", "openmp"],
      "sweep": {"population": [1, 2, 3, 4]}, "warmup": 0, "repetitions": 1})"),
      true);
  EXPECT_EQ(ToyFamily::calls, 1);
  EXPECT_EQ(results("sw")["runs"].size(), 8u);
  // A fresh rerun that completes replaces everything.
  run(p);
  EXPECT_EQ(results("sw")["runs"].size(), 6u);
}

TEST_F(Reliability, WritesPerRunAppendToTheJournalWhateverTheFileSize) {
  // A results file with 3000 earlier runs; each new run must not rewrite it.
  ojson doc;
  doc["schema_version"] = kSchemaVersion;
  doc["runs"] = ojson::array();
  for (int i = 0; i < 3000; ++i)
    doc["runs"].push_back({{"family", "toy"}, {"backend", "sequential"}, {"dataset", {{"name", "other"}, {"options", ojson::object()}}},
                           {"params", {{"i", i}}}, {"seed", 1}, {"status", "ok"}, {"reason", ""},
                           {"timing", {{"samples", {0.5}}}}, {"padding", std::string(200, 'x')}});
  write_file(dir_ / "out/big.json", dump_results(doc));
  const std::string before = slurp(dir_ / "out/big.json");
  const ExperimentPlan p = plan(R"({"experiment": "big", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "sweep": {"population": [1, 2, 3, 4]}, "warmup": 0, "repetitions": 1})");
  run_and_crash(p, 4, true);
  EXPECT_TRUE(slurp(dir_ / "out/big.json") == before);  // not rewritten after each run
  const std::string journal = slurp(dir_ / "out/big.json.journal");
  EXPECT_EQ(read_journal(dir_ / "out/big.json.journal").records.size(), 3u);
  EXPECT_LT(journal.size(), before.size() / 20) << "the journal holds the new runs only";
  ToyFamily::calls = 0;
  run(p, true);
  EXPECT_EQ(ToyFamily::calls, 1);
  EXPECT_EQ(results("big")["runs"].size(), 3004u);
}

TEST_F(Reliability, StaleTempFilesOfDeadProcessesAreRemoved) {
  // The pid of a process that has exited.
  const pid_t dead = fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  waitpid(dead, nullptr, 0);
  const std::string d = std::to_string(dead), alive = std::to_string(getppid());
  for (const std::string& f : {"st.json.tmp." + d, "st.md.tmp." + d, "st.json.journal.tmp." + d, "st.json.tmp." + alive,
                              "other.json.tmp." + d})
    write_file(dir_ / ("out/" + f), std::string(1000, 'x'));
  run(plan(R"({"experiment": "st", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"]})"));
  EXPECT_FALSE(fs::exists(dir_ / ("out/st.json.tmp." + d)));
  EXPECT_FALSE(fs::exists(dir_ / ("out/st.md.tmp." + d)));
  EXPECT_FALSE(fs::exists(dir_ / ("out/st.json.journal.tmp." + d)));
  EXPECT_TRUE(fs::exists(dir_ / ("out/st.json.tmp." + alive)));  // its writer may still be at work
  EXPECT_TRUE(fs::exists(dir_ / ("out/other.json.tmp." + d)));    // another experiment's, not ours
}

TEST_F(Reliability, ADamagedJournalTailIsSkippedOnResume) {
  const ExperimentPlan p = plan(kSweep);
  run_and_crash(p, 4);
  // A kill during the append cuts the last line short.
  { std::ofstream(dir_ / "out/sw.json.journal", std::ios::app) << "{\"family\": \"toy\", \"back"; }
  const JournalContents j = read_journal(dir_ / "out/sw.json.journal");
  EXPECT_TRUE(j.torn_tail);
  EXPECT_EQ(j.records.size(), 3u);
  ToyFamily::calls = 0;
  run(p, true);
  EXPECT_EQ(ToyFamily::calls, 3);
  EXPECT_EQ(results("sw")["runs"].size(), 6u);
}

}  // namespace
}  // namespace gpudm::testing
