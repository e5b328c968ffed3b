// On the GPU machine: the results' environment names the device and the results folder's tag
// comes from it (results/h100/, results/h200/). Skips visibly without a device.
#include <gtest/gtest.h>

#include "algorithms/core/machine.hpp"
#include "experiments/results.hpp"

namespace gpudm::testing {
namespace {

TEST(RunnerOnGpu, EnvironmentNamesTheDeviceAndTheTagFollows) {
  if (machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << machine::gpu_unavailable_reason();
  const auto env = experiments::make_environment();
  ASSERT_TRUE(env["devices"].is_array());
  ASSERT_FALSE(env["devices"].empty());
  const auto& d = env["devices"][0];
  const std::string name = d.value("name", std::string());
  ASSERT_FALSE(name.empty());
  EXPECT_GT(d.value("sm_count", 0), 0);
  const std::string tag = experiments::machine_tag(env);
  EXPECT_FALSE(tag.empty());
  EXPECT_NE(tag.rfind("cpu", 0), 0u) << "a GPU machine got a CPU tag from '" << name << "'";
  if (name.find("H100") != std::string::npos) {
    EXPECT_EQ(tag, "h100");
  }
  if (name.find("H200") != std::string::npos) {
    EXPECT_EQ(tag, "h200");
  }
  std::printf("device '%s' -> results/%s/\n", name.c_str(), tag.c_str());
}

}  // namespace
}  // namespace gpudm::testing
