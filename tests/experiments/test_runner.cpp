// The runner: results schema, skip/fail handling, validation, resume after a crash, atomic writes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/experiments/runner_fixture.hpp"

namespace gpudm::testing {
namespace {

using namespace gpudm::experiments;

class RunnerTest : public RunnerFixture {};

const char* kBasic = R"({"experiment": "basic", "title": "Basic", "paper": "A paper", "family": "toy",
    "datasets": ["tiny", "tiny_surrogate"], "sweep": {"population": [1, 2]}, "warmup": 0, "repetitions": 3})";

TEST_F(RunnerTest, ResultsCarrySchemaVersionOneKeys) {
  const auto out = run(plan(kBasic));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ok, 8);       // 2 datasets x 2 populations x (sequential, openmp)
  EXPECT_EQ(out[0].skipped, 4);  // cuda: unavailable
  EXPECT_EQ(out[0].failed, 0);
  const ojson doc = results("basic");
  EXPECT_EQ(doc["schema_version"], 1);
  std::vector<std::string> top;
  for (auto it = doc.begin(); it != doc.end(); ++it) top.push_back(it.key());
  EXPECT_EQ(top, (std::vector<std::string>{"schema_version", "experiment", "provenance", "environment", "runs"}));
  for (const char* k : {"id", "title", "config_path", "config_sha256", "paper"}) EXPECT_TRUE(doc["experiment"].contains(k)) << k;
  EXPECT_EQ(doc["experiment"]["config_sha256"].get<std::string>().size(), 64u);
  for (const char* k : {"git_sha", "git_dirty", "build_type", "compiler", "cuda_version", "cuda_architectures", "argv",
                        "utc_time", "hostname"})
    EXPECT_TRUE(doc["provenance"].contains(k)) << k;
  for (const char* k : {"cpu_model", "cpu_cores", "openmp_threads", "devices"}) EXPECT_TRUE(doc["environment"].contains(k)) << k;
  ASSERT_EQ(doc["runs"].size(), 12u);
  for (const auto& r : doc["runs"]) {
    for (const char* k : {"family", "backend", "dataset", "params", "seed", "status", "reason", "timing", "breakdown",
                          "metrics", "validation", "checksum"})
      EXPECT_TRUE(r.contains(k)) << k;
    if (r["status"] == "ok") {
      EXPECT_EQ(r["timing"]["samples"].size(), 3u);
      for (const char* k : {"median", "min", "max", "warmup", "repetitions"}) EXPECT_TRUE(r["timing"].contains(k)) << k;
      EXPECT_TRUE(r["breakdown"].contains("sum"));
      EXPECT_EQ(r["breakdown"]["sum"]["clock"], "host");
      EXPECT_EQ(r["dataset"]["rows"], 40);
      EXPECT_TRUE(r["dataset"].contains("options"));
    } else {
      EXPECT_EQ(r["backend"], "cuda");
      EXPECT_EQ(r["status"], "skipped");
      EXPECT_EQ(r["reason"], "no device in tests");
    }
  }
  EXPECT_EQ(doc["runs"][0]["dataset"]["surrogate"], false);
  EXPECT_EQ(doc["runs"][6]["dataset"]["surrogate"], true);
  // The Markdown and CSV tables are written beside the JSON.
  EXPECT_NE(slurp(dir_ / "out/basic.md").find("| Dataset | Backend | population |"), std::string::npos);
  EXPECT_NE(slurp(dir_ / "out/basic.csv").find("table,Dataset,Backend"), std::string::npos);
}

// Each run names the commit and machine it was measured on, and when it finished; the file's
// block keeps the build information.
TEST_F(RunnerTest, EveryRunCarriesItsOwnProvenance) {
  run(plan(R"({"experiment": "prov", "family": "toy", "datasets": ["tiny"], "backends": ["sequential", "cuda"],
      "warmup": 0, "repetitions": 1})"));
  const ojson doc = results("prov");
  ASSERT_EQ(doc["runs"].size(), 2u);
  for (const auto& r : doc["runs"]) {  // the skipped cuda run too
    ASSERT_TRUE(r.contains("provenance")) << r.dump();
    const ojson& p = r["provenance"];
    std::vector<std::string> keys;
    for (auto it = p.begin(); it != p.end(); ++it) keys.push_back(it.key());
    EXPECT_EQ(keys, (std::vector<std::string>{"git_sha", "git_dirty", "utc_time", "machine"}));
    EXPECT_EQ(p["git_sha"], doc["provenance"]["git_sha"]);
    EXPECT_EQ(p["git_dirty"], doc["provenance"]["git_dirty"]);
    EXPECT_GE(p["utc_time"].get<std::string>(), doc["provenance"]["utc_time"].get<std::string>());
    EXPECT_EQ(p["machine"]["host"], doc["provenance"]["hostname"]);
    EXPECT_EQ(p["machine"]["cpu_model"], doc["environment"]["cpu_model"]);
    EXPECT_EQ(p["machine"]["cpu_threads"], doc["environment"]["cpu_cores"]);
    EXPECT_EQ(p["machine"]["gpus"].size(), doc["environment"]["devices"].size());
  }
  // The config lies outside the source tree: recorded as such, and said so in the tables.
  EXPECT_TRUE(doc["experiment"]["config_repo_path"].is_null());
  const std::string md = slurp(dir_ / "out/prov.md");
  EXPECT_NE(md.find("; config: " + (dir_ / "cfg.json") + " (not in the repository)."), std::string::npos) << md;
  EXPECT_NE(md.find("\nMeasured on "), std::string::npos) << md;
  EXPECT_EQ(md.find("[a]"), std::string::npos) << md;
}

TEST_F(RunnerTest, ChecksumsAreValidatedAgainstSequential) {
  auto out = run(plan(R"({"experiment": "val", "family": "toy", "datasets": ["tiny"], "backends": ["sequential", "openmp"],
      "cases": [{"backend": "sequential"}, {"backend": "openmp", "params": {"threads": [1, 2]}}], "warmup": 0, "repetitions": 1})"));
  EXPECT_EQ(out[0].validation_failures, 0);
  ojson doc = results("val");
  ASSERT_EQ(doc["runs"].size(), 3u);
  EXPECT_EQ(doc["runs"][0]["validation"]["is_reference"], true);
  for (int i : {1, 2}) {  // threads is backend-only: both openmp runs compare with the one sequential run
    EXPECT_EQ(doc["runs"][i]["validation"]["reference_backend"], "sequential");
    EXPECT_EQ(doc["runs"][i]["validation"]["passed"], true);
  }
  // A backend that computes something else is caught.
  out = run(plan(R"({"experiment": "bad", "family": "toy", "datasets": ["tiny"], "backends": ["sequential", "openmp"],
      "params": {"openmp_differs": true}, "warmup": 0, "repetitions": 1})"));
  EXPECT_EQ(out[0].validation_failures, 1);
  doc = results("bad");
  EXPECT_EQ(doc["runs"][1]["validation"]["passed"], false);
  // Inexact checksums are not compared.
  out = run(plan(R"({"experiment": "inexact", "family": "toy", "datasets": ["tiny"], "backends": ["sequential", "openmp"],
      "params": {"exact": false, "openmp_differs": true}, "warmup": 0, "repetitions": 1})"));
  EXPECT_EQ(out[0].validation_failures, 0);
  EXPECT_TRUE(results("inexact")["runs"][1]["validation"]["passed"].is_null());
  // A param the family resolves ("auto") from a backend-only one: runs are compared on the
  // resolved value, so "auto" under engine "batched" (deferred) is not held against the
  // sequential "auto" (stream), and an explicit "stream" is.
  out = run(plan(R"({"experiment": "resolved", "family": "toy", "datasets": ["tiny"], "backends": ["sequential", "openmp"],
      "cases": [{"backend": "sequential"}, {"backend": "openmp", "params": {"engine": "batched"}},
                {"backend": "openmp", "params": {"order": "stream"}}], "warmup": 0, "repetitions": 1})"));
  EXPECT_EQ(out[0].validation_failures, 0);
  doc = results("resolved");
  ASSERT_EQ(doc["runs"].size(), 3u);
  EXPECT_EQ(doc["runs"][1]["resolved_params"]["order"], "deferred");
  EXPECT_TRUE(doc["runs"][1]["validation"]["passed"].is_null());
  EXPECT_EQ(doc["runs"][2]["validation"]["passed"], true);
}

TEST_F(RunnerTest, FailedAndSkippedRunsAreRecorded) {
  const auto out = run(plan(R"({"experiment": "mixed", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "sweep": {"fail": ["error", "unavailable", ""]}, "params": {"population": 1}, "warmup": 0, "repetitions": 1})"));
  EXPECT_EQ(out[0].failed, 1);
  EXPECT_EQ(out[0].skipped, 1);
  EXPECT_EQ(out[0].ok, 1);
  const ojson doc = results("mixed");
  EXPECT_EQ(doc["runs"][0]["status"], "failed");
  EXPECT_EQ(doc["runs"][0]["reason"], "toy: asked to fail");
  EXPECT_EQ(doc["runs"][1]["status"], "skipped");
  EXPECT_EQ(doc["runs"][2]["status"], "ok");
  EXPECT_NE(out[0].markdown.find("failed: sequential on tiny (fail=error): toy: asked to fail"), std::string::npos)
      << out[0].markdown;
}

TEST_F(RunnerTest, BadDatasetFailsBeforeAnyResultIsTouched) {
  run(plan(R"({"experiment": "keep", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"], "warmup": 0, "repetitions": 1})"));
  const std::string before = slurp(dir_ / "out/keep.json");
  ToyFamily::calls = 0;
  EXPECT_THROW(run(plan(R"({"experiment": "keep", "family": "toy", "datasets": ["tiny", "broken"], "backends": ["sequential"],
      "warmup": 0, "repetitions": 1})")),
               Error);
  EXPECT_EQ(ToyFamily::calls, 0);
  EXPECT_EQ(slurp(dir_ / "out/keep.json"), before);
}

TEST_F(RunnerTest, ResumeAfterACrashRunsOnlyTheRest) {
  const ExperimentPlan p = plan(R"({"experiment": "crash", "family": "toy", "datasets": ["tiny"],
      "backends": ["sequential", "openmp"], "sweep": {"population": [1, 2, 3]}, "warmup": 0, "repetitions": 1})");
  ASSERT_EQ(p.runs.size(), 6u);
  // The child process crashes (exits without unwinding) inside the 4th run.
  run_and_crash(p, 4);
  // Everything finished before the crash survived, in the journal (the results file is written
  // when the sweep completes).
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out/crash.json"));
  const JournalContents j = read_journal(dir_ / "out/crash.json.journal");
  ASSERT_EQ(j.records.size(), 3u);
  for (const auto& r : j.records) {
    EXPECT_EQ(r["status"], "ok");
    EXPECT_TRUE(r["provenance"].is_object()) << r.dump();
  }

  ToyFamily::calls = 0;
  ToyFamily::exit_at = 0;
  const auto out = run(p, /*resume=*/true);
  EXPECT_EQ(ToyFamily::calls, 3);
  EXPECT_EQ(out[0].reused, 3);
  EXPECT_EQ(out[0].ok, 3);
  ojson doc = results("crash");
  ASSERT_EQ(doc["runs"].size(), 6u);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out/crash.json.journal"));
  EXPECT_EQ(doc["provenance"]["previous"].size(), 1u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(doc["runs"][i]["provenance"], j.records[i]["provenance"]) << i;
  // Resuming a complete file runs nothing.
  ToyFamily::calls = 0;
  run(p, true);
  EXPECT_EQ(ToyFamily::calls, 0);
}

TEST_F(RunnerTest, ResumeRerunsFailedRunsAndKeepsUnrelatedOnes) {
  run(plan(R"({"experiment": "r", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "sweep": {"population": [1, 2]}, "warmup": 0, "repetitions": 1})"));
  // Mark run 0 failed by hand, as a crash-free failure would.
  ojson doc = results("r");
  doc["runs"][0]["status"] = "failed";
  write_file(dir_ / "out/r.json", doc.dump(2));
  ToyFamily::calls = 0;
  run(plan(R"({"experiment": "r", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "sweep": {"population": [1]}, "warmup": 0, "repetitions": 1})"),
      true);
  EXPECT_EQ(ToyFamily::calls, 1);
  doc = results("r");
  ASSERT_EQ(doc["runs"].size(), 2u);  // population 2 is not in the new sweep but stays
  EXPECT_EQ(doc["runs"][0]["status"], "ok");
  EXPECT_EQ(doc["runs"][1]["params"]["population"], 2);
}

// A sweep resumed where a kept run's output (a recorded sample a replay case reads) is gone: the
// reading case's MissingInput makes that kept run run again, then the reader; other kept runs stay.
TEST_F(RunnerTest, ResumeRunsAKeptRunAgainWhenItsOutputIsGone) {
  const std::string sample = std::filesystem::path(dir_ / "sample.bin").string();
  const std::string cfg = R"({"experiment": "rec", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "params": {"sample": ")" + sample + R"("}, "sweep": {"population": [1, 2, 3]}, "warmup": 0, "repetitions": 1})";
  run(plan(cfg));
  ojson doc = results("rec");
  ASSERT_EQ(doc["runs"].size(), 3u);
  for (const auto& r : doc["runs"]) ASSERT_EQ(r["status"], "ok") << r.dump();
  EXPECT_EQ(doc["runs"][0]["outputs"], ojson::array({sample}));
  // Another machine: the sample is gone; population 3 is left to run.
  std::filesystem::remove(sample);
  doc["runs"][2]["status"] = "failed";
  write_file(dir_ / "out/rec.json", doc.dump(2));
  ToyFamily::calls = 0;
  const auto out = run(plan(cfg), true);
  EXPECT_EQ(ToyFamily::calls, 3);  // population 3 (no sample), population 1 again, population 3 again
  EXPECT_EQ(out[0].reused, 1);     // population 2 is kept
  EXPECT_EQ(out[0].ok, 2);
  EXPECT_EQ(out[0].skipped, 0);
  doc = results("rec");
  ASSERT_EQ(doc["runs"].size(), 3u);
  for (const auto& r : doc["runs"]) EXPECT_EQ(r["status"], "ok") << r.dump();
  EXPECT_TRUE(std::filesystem::exists(sample));
  // Without a kept run that wrote it, a missing input is a skipped run, as before.
  std::filesystem::remove(sample);
  doc["runs"][2]["status"] = "failed";
  doc["runs"][0].erase("outputs");
  write_file(dir_ / "out/rec.json", doc.dump(2));
  ToyFamily::calls = 0;
  const auto out2 = run(plan(cfg), true);
  EXPECT_EQ(ToyFamily::calls, 1);
  EXPECT_EQ(out2[0].skipped, 1);
}

// Runs kept by --resume keep the provenance they were measured with; the tables then name both
// origins and tag each row with its own.
TEST_F(RunnerTest, ResumeKeepsTheEarlierRunsProvenance) {
  const char* cfg = R"({"experiment": "two", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"],
      "sweep": {"population": [1, 2]}, "warmup": 0, "repetitions": 1})";
  run(plan(cfg));
  // As if run 0 had been measured elsewhere, at another commit, and run 1 had failed.
  ojson doc = results("two");
  const ojson elsewhere = {{"git_sha", "feedfacefeedfacefeedfacefeedfacefeedface"},
                           {"git_dirty", false},
                           {"utc_time", "2026-01-01T00:00:00Z"},
                           {"machine", {{"host", "elsewhere"}, {"cpu_model", "Other CPU"}, {"cpu_threads", 64},
                                        {"gpus", {"NVIDIA H200"}}}}};
  doc["runs"][0]["provenance"] = elsewhere;
  doc["runs"][1]["status"] = "failed";
  write_file(dir_ / "out/two.json", doc.dump(2));
  ToyFamily::calls = 0;
  run(plan(cfg), /*resume=*/true);
  EXPECT_EQ(ToyFamily::calls, 1);
  doc = results("two");
  ASSERT_EQ(doc["runs"].size(), 2u);
  EXPECT_EQ(doc["runs"][0]["provenance"], elsewhere);
  EXPECT_EQ(doc["runs"][1]["provenance"]["machine"]["host"], doc["provenance"]["hostname"]);
  const std::string md = slurp(dir_ / "out/two.md");
  EXPECT_NE(md.find("- [a] gpudm feedfacefeed on NVIDIA H200 + Other CPU (64 threads), host elsewhere; 2026-01-01T00:00:00Z\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- [b] gpudm "), std::string::npos) << md;
  EXPECT_NE(md.find("| tiny [a] | sequential | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| tiny [b] | sequential | 2 |"), std::string::npos) << md;
}

TEST_F(RunnerTest, ResumeRefusesAnUnreadableFile) {
  write_file(dir_ / "out/x.json", "{ not json");
  EXPECT_THROW(run(plan(R"({"experiment": "x", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"]})"), true), Error);
  EXPECT_EQ(slurp(dir_ / "out/x.json"), "{ not json");
}

TEST_F(RunnerTest, CompositeRunsEveryIncludedExperiment) {
  write_file(dir_ / "a.json", R"({"experiment": "a", "family": "toy", "datasets": ["tiny"], "backends": ["sequential"], "repetitions": 1})");
  write_file(dir_ / "b.json", R"({"experiment": "b", "family": "toy", "datasets": ["tiny_reg"], "backends": ["openmp"], "repetitions": 1})");
  const auto out = run(plan(R"({"experiment": "both", "title": "Both", "include": ["a.json", "b.json"]})"));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].id, "a");
  EXPECT_EQ(out[1].id, "b");
  EXPECT_EQ(out[2].id, "both");
  EXPECT_EQ(results("a")["runs"].size(), 1u);
  EXPECT_EQ(results("b")["runs"].size(), 1u);
  const std::string md = slurp(dir_ / "out/both.md");
  EXPECT_NE(md.find("Composite of: a, b"), std::string::npos) << md;
}

// ---- atomic writes ----

TEST(AtomicWrite, ReplacesContentAndLeavesNoTempFile) {
  TempDir d;
  const std::string p = d / "sub/f.json";
  write_file_atomic(p, "one");
  EXPECT_EQ(slurp(p), "one");
  write_file_atomic(p, "two");
  EXPECT_EQ(slurp(p), "two");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(d.path() / "sub")) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(AtomicWrite, AKillMidWriteLeavesTheOldFileIntact) {
  TempDir d;
  const std::string p = d / "results.json";
  const std::string a(8 << 20, 'a');  // big enough that a kill lands mid-write
  const std::string b(8 << 20, 'b');
  write_file_atomic(p, a);
  for (int attempt = 0; attempt < 5; ++attempt) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (;;) {
        write_file_atomic(p, b);
        write_file_atomic(p, a);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + 15 * attempt));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string now = slurp(p);
    ASSERT_TRUE(now == a || now == b) << "torn file of " << now.size() << " bytes";
  }
}

// ---- machine tags ----

TEST(MachineTag, FromDeviceNames) {
  EXPECT_EQ(gpu_tag_from_name("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(gpu_tag_from_name("NVIDIA H200"), "h200");
  EXPECT_EQ(gpu_tag_from_name("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(gpu_tag_from_name("Tesla V100-PCIE-16GB"), "v100");
  EXPECT_EQ(gpu_tag_from_name("NVIDIA GeForce RTX 4090"), "rtx4090");
  EXPECT_EQ(gpu_tag_from_name("NVIDIA L40S"), "l40s");
  EXPECT_EQ(gpu_tag_from_name("NVIDIA H100 PCIe"), "h100");
  EXPECT_EQ(gpu_tag_from_name(""), "");
}

TEST(MachineTag, FromEnvironment) {
  EXPECT_EQ(machine_tag(ojson::parse(R"({"cpu_model": "x", "devices": [{"name": "NVIDIA H100 80GB HBM3"}]})")), "h100");
  EXPECT_EQ(machine_tag(ojson::parse(R"({"cpu_model": "Intel(R) Xeon(R) Platinum 8480+", "devices": []})")), "cpu-xeon-8480");
  EXPECT_EQ(machine_tag(ojson::parse(R"({"cpu_model": "AMD EPYC 7763 64-Core Processor", "devices": []})")), "cpu-epyc-7763");
  EXPECT_EQ(machine_tag(ojson::parse(R"({"cpu_model": "unknown", "devices": []})")), "cpu");
}

}  // namespace
}  // namespace gpudm::testing
