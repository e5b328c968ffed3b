// The config parser and validator (experiments/config.cpp): any bytes as a config file must give
// a plan or a ConfigError, never a crash, a hang or unbounded memory.
#include <cstdint>

#include "experiments/config.hpp"
#include "tests/experiments/test_family.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace gpudm;
using namespace gpudm::experiments;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static FamilySet families = testing::toy_families();
  static Registry registry = [] {
    Registry r;
    testing::register_toy(r);
    return r;
  }();
  const std::string path = fuzz::write_input("config.json", data, size);
  ValidationContext ctx;
  ctx.families = &families;
  ctx.registry = &registry;
  ctx.check_dataset = [](const std::string& n) -> std::string { return n == "tiny" || n == "tiny_reg" ? "" : "unknown dataset"; };
  ctx.paper_tables_dir = GPUDM_SOURCE_DIR "/experiments/paper_tables";
  for (const bool smoke : {false, true}) {
    PlanOptions opt;
    opt.smoke = smoke;
    try {
      const ExperimentPlan plan = load_plan(path, ctx, opt);
      for (const auto& r : plan.runs) (void)run_identity(r);
    } catch (const ConfigError&) {
    }
  }
  return 0;
}
