#pragma once
// A sampling profiler inside the process, for machines where `perf` is absent or not permitted
// (the GPU machines have neither perf nor gdb): SIGPROF every 1/hz seconds of the process's CPU
// time (ITIMER_PROF, every thread counts), each sample the interrupted call stack (glibc
// backtrace(): unwind tables, no frame pointers needed), kept in a buffer allocated up front (the
// signal handler only writes into it). At the end the samples and /proc/self/maps go to a text
// file; scripts/profile_report.py maps the addresses to functions (addr2line) and prints flat
// (self) and inclusive counts.
//   GPUDM_PROFILE_OUT=prof.txt [GPUDM_PROFILE_HZ=997] run_experiment ...
// (run_experiment starts one from the environment: ProfileFromEnv in main).
#include <memory>
#include <string>

namespace gpudm {

class SampleProfiler {
 public:
  static constexpr int kMaxFrames = 24;
  // Starts sampling into a buffer of `max_samples` stacks; throws gpudm::Error when the timer or
  // the handler cannot be installed or a profiler already runs.
  SampleProfiler(const std::string& out_path, int hz, long max_samples = 400000);
  ~SampleProfiler();  // stops and writes the file (errors to stderr: a destructor does not throw)
  SampleProfiler(const SampleProfiler&) = delete;
  SampleProfiler& operator=(const SampleProfiler&) = delete;
  // Stops sampling and writes the file; returns the samples taken.
  long finish();

 private:
  std::string path_;
  bool done_ = false;
};

// A profiler when GPUDM_PROFILE_OUT is set (GPUDM_PROFILE_HZ, default 997), for main()'s scope.
class ProfileFromEnv {
 public:
  ProfileFromEnv();
  ~ProfileFromEnv();

 private:
  std::unique_ptr<SampleProfiler> p_;
};

}  // namespace gpudm
