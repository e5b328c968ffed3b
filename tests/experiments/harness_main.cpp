// run_experiment_harness: the real CLI (experiments/cli.cpp) wired to the test-only toy family
// and the in-memory TinyProvider, so the CLI's exit codes, one-line errors and "results
// untouched" guarantees are tested end to end whatever families the product has.
#include <cstdio>

#include "experiments/cli.hpp"
#include "tests/experiments/test_family.hpp"

int main(int argc, char** argv) {
  using namespace gpudm;
  using namespace gpudm::experiments;
  FamilySet families = testing::toy_families();
  Registry registry;
  testing::register_toy(registry);
  testing::TinyProvider provider;
  CliServices s;
  s.families = [&]() -> FamilySet& { return families; };
  s.registry = [&]() -> Registry& { return registry; };
  s.datasets = [&]() -> DatasetProvider& { return provider; };
  s.check_dataset = [](const std::string& n) -> std::string {
    return n == "tiny" || n == "tiny_reg" || n == "tiny_surrogate" || n == "broken" ? "" : "unknown dataset '" + n + "'";
  };
  s.datasets_report = [] { return std::string("tiny tiny_reg tiny_surrogate broken\n"); };
  s.paper_tables_dir = GPUDM_SOURCE_DIR "/experiments/paper_tables";
  // A raw mode, as families' --train/--predict are: it receives everything after its trigger.
  auto modes = builtin_modes();
  CliMode echo;
  echo.name = "echo";
  echo.raw_trigger = "--echo-rest";
  echo.raw_help = "--echo-rest ARGS...   print ARGS joined by '|'";
  echo.run_raw = [](const std::vector<std::string>& rest, CliServices&) {
    std::string out;
    for (const auto& r : rest) out += (out.empty() ? "" : "|") + r;
    std::printf("%s\n", out.c_str());
    return 0;
  };
  modes.push_back(echo);
  for (auto& m : family_command_modes(families)) modes.push_back(std::move(m));
  return run_cli(argc, argv, s, modes);
}
