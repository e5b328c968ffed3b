// The in-process sampling profiler (algorithms/core/sample_profiler.hpp): a CPU-bound function
// must show up in the samples' stacks, the file must name the mapped executable, and a second
// profiler while one runs is an error.
#include <gtest/gtest.h>

#include <ctime>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "algorithms/core/error.hpp"
#include "algorithms/core/sample_profiler.hpp"

namespace {

// Busy for `cpu_seconds` of this process's CPU time (the profiler's clock: ITIMER_PROF), however
// loaded the machine is.
__attribute__((noinline)) double busy_for(double cpu_seconds) {
  const std::clock_t c0 = std::clock();
  volatile double x = 1.0;
  while (static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC < cpu_seconds)
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

TEST(SampleProfiler, SamplesACpuBoundLoopAndWritesMapsAndStacks) {
  const std::string path = (std::filesystem::temp_directory_path() / "gpudm_profile_test.txt").string();
  long n = 0;
  {
    gpudm::SampleProfiler p(path, 1000);
    EXPECT_THROW(gpudm::SampleProfiler(path + ".2", 1000), gpudm::Error);  // one at a time
    busy_for(0.5);
    n = p.finish();
  }
  // 0.5 s of CPU: ~500 samples at 1 kHz, fewer where the kernel's timer tick is coarser (at least
  // 100 Hz: 50); under a sanitizer or a loaded machine still well above 20.
  EXPECT_GE(n, 20) << "0.5 s of process CPU time sampled at 1 kHz";
  std::ifstream f(path);
  int maps = 0, stacks = 0, deep = 0;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("map ", 0) == 0) ++maps;
    if (line.rfind("s ", 0) == 0) {
      ++stacks;
      int frames = 0;
      for (char c : line) frames += c == ' ';
      deep += frames >= 4;  // handler, trampoline, the loop, its caller...
    }
  }
  EXPECT_GT(maps, 0);
  EXPECT_EQ(stacks, n);
  EXPECT_GT(deep, n / 2) << "the stacks reach past the signal frame";
  std::remove(path.c_str());
}

}  // namespace
