#pragma once
// A runner over the toy family, writing under a private temp folder: plan(config text) loads it,
// run(plan) executes it into <tmp>/out, results(id) reads <tmp>/out/<id>.json.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/config.hpp"
#include "experiments/results.hpp"
#include "experiments/runner.hpp"
#include "tests/experiments/test_family.hpp"
#include "tests/experiments/test_util.hpp"

namespace gpudm::testing {

class RunnerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    Progress::set_quiet(true);
    families_ = toy_families();
    register_toy(registry_);
    ctx_.families = &families_;
    ctx_.registry = &registry_;
    ctx_.paper_tables_dir = dir_ / "paper";
  }
  experiments::ExperimentPlan plan(const std::string& text, experiments::PlanOptions opt = {}) {
    write_file(dir_ / "cfg.json", text);
    return experiments::load_plan(dir_ / "cfg.json", ctx_, opt);
  }
  std::vector<experiments::ExperimentOutcome> run(const experiments::ExperimentPlan& p, bool resume = false) {
    experiments::RunnerOptions o;
    o.out_dir = dir_ / "out";
    o.paper_tables_dir = dir_ / "paper";
    o.resume = resume;
    o.quiet = true;
    o.argv = {"run_experiment", "cfg.json"};
    experiments::Runner r(families_, registry_, provider_, o);
    return r.run(p);
  }
  // Runs `p` in a child process that crashes (exits without unwinding) inside run `crash_at`.
  void run_and_crash(const experiments::ExperimentPlan& p, int crash_at, bool resume = false) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ToyFamily::calls = 0;
      ToyFamily::exit_at = crash_at;
      try {
        run(p, resume);
      } catch (...) {
      }
      ::_exit(0);  // not reached when the crash happens
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 3) << "the toy family should have crashed the child";
  }
  experiments::ojson results(const std::string& id) {
    return experiments::ojson::parse(slurp(dir_ / ("out/" + id + ".json")));
  }

  TempDir dir_;
  experiments::FamilySet families_;
  Registry registry_;
  TinyProvider provider_;
  experiments::ValidationContext ctx_;
};

}  // namespace gpudm::testing
