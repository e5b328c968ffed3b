// NVML through dlopen: never throws; where there is no driver it says why; where there is one,
// a region's energy is positive and consistent with its mean power.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "algorithms/core/machine.hpp"

TEST(Nvml, UnavailableHasAReason) {
  if (gpudm::machine::nvml_available()) GTEST_SKIP() << "NVML is available here (" << gpudm::machine::nvml_library_path() << ")";
  EXPECT_FALSE(gpudm::machine::nvml_unavailable_reason().empty());
  gpudm::machine::GpuEnergyMeter m(0);
  EXPECT_FALSE(m.available());
  EXPECT_FALSE(m.reason().empty());
  m.start();
  const auto r = m.stop();
  EXPECT_FALSE(r.available);
  EXPECT_FALSE(r.reason.empty());
  EXPECT_EQ(r.to_json()["available"], false);
  EXPECT_LT(m.power_watts(), 0.0);
}

TEST(Nvml, MeasuresEnergyOverARegion) {
  if (!gpudm::machine::nvml_available()) GTEST_SKIP() << "NVML unavailable: " << gpudm::machine::nvml_unavailable_reason();
  if (gpudm::machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device";
  gpudm::machine::GpuEnergyMeter m(0, std::chrono::milliseconds(5));
  ASSERT_TRUE(m.available()) << m.reason();
  EXPECT_GT(m.power_watts(), 0.0);
  m.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto r = m.stop();
  ASSERT_TRUE(r.available) << r.reason;
  EXPECT_GT(r.seconds, 0.29);
  EXPECT_GT(r.samples, 10);
  EXPECT_GT(r.integrated_joules, 0.0);
  // An idle or busy datacentre GPU draws between a few and ~1000 W.
  EXPECT_GT(r.mean_watts, 1.0);
  EXPECT_LT(r.mean_watts, 1500.0);
  EXPECT_GE(r.max_watts, r.integrated_joules / r.seconds * 0.5);
}
