#include "algorithms/core/sample_profiler.hpp"

#include <execinfo.h>
#include <signal.h>
#include <sys/time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "algorithms/core/error.hpp"

namespace gpudm {
namespace {

struct Buffer {
  void** frames = nullptr;       // max_samples x kMaxFrames
  unsigned char* depth = nullptr;  // per sample
  long max_samples = 0;
  std::atomic<long> next{0};
  std::atomic<long> dropped{0};
};
Buffer g_buf;
std::atomic<bool> g_running{false};
struct sigaction g_old_action;

void on_sigprof(int, siginfo_t*, void*) {
  if (!g_running.load(std::memory_order_relaxed)) return;
  const long i = g_buf.next.fetch_add(1, std::memory_order_relaxed);
  if (i >= g_buf.max_samples) {
    g_buf.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  void** f = g_buf.frames + i * SampleProfiler::kMaxFrames;
  const int n = backtrace(f, SampleProfiler::kMaxFrames);
  g_buf.depth[i] = static_cast<unsigned char>(n > 0 ? n : 0);
}

void set_timer(int hz) {
  itimerval t{};
  if (hz > 0) {
    t.it_interval.tv_sec = 0;
    t.it_interval.tv_usec = 1000000 / hz;
    t.it_value = t.it_interval;
  }
  setitimer(ITIMER_PROF, &t, nullptr);
}

}  // namespace

SampleProfiler::SampleProfiler(const std::string& out_path, int hz, long max_samples) : path_(out_path) {
  GPUDM_REQUIRE(hz > 0 && hz <= 100000, "profiler: GPUDM_PROFILE_HZ must be in [1, 100000]");
  GPUDM_REQUIRE(!g_running.load(), "profiler: one profiler at a time");
  g_buf.max_samples = max_samples;
  g_buf.frames = static_cast<void**>(std::calloc(static_cast<std::size_t>(max_samples) * kMaxFrames, sizeof(void*)));
  g_buf.depth = static_cast<unsigned char*>(std::calloc(static_cast<std::size_t>(max_samples), 1));
  GPUDM_REQUIRE(g_buf.frames && g_buf.depth, "profiler: no memory for the sample buffer");
  g_buf.next = 0;
  g_buf.dropped = 0;
  void* warm[4];
  backtrace(warm, 4);  // (the first call loads the unwinder: never inside the handler)
  struct sigaction sa {};
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  GPUDM_REQUIRE(sigaction(SIGPROF, &sa, &g_old_action) == 0, "profiler: cannot install the SIGPROF handler");
  g_running = true;
  set_timer(hz);
}

long SampleProfiler::finish() {
  if (done_) return 0;
  done_ = true;
  set_timer(0);
  g_running = false;
  sigaction(SIGPROF, &g_old_action, nullptr);
  const long n = std::min(g_buf.next.load(), g_buf.max_samples);
  std::ofstream out(path_);
  if (!out) {
    std::fprintf(stderr, "gpudm: profiler: cannot write %s\n", path_.c_str());
  } else {
    out << "# gpudm sample profile: maps, then one line per sample (innermost frame first)\n";
    out << "# samples " << n << " dropped " << g_buf.dropped.load() << "\n";
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);)
      if (line.find(" r-xp ") != std::string::npos || line.find(" r--p ") != std::string::npos) out << "map " << line << "\n";
    char hex[32];
    for (long i = 0; i < n; ++i) {
      out << "s";
      for (int k = 0; k < g_buf.depth[i]; ++k) {
        std::snprintf(hex, sizeof hex, " %lx", reinterpret_cast<unsigned long>(g_buf.frames[i * kMaxFrames + k]));
        out << hex;
      }
      out << "\n";
    }
  }
  std::free(g_buf.frames);
  std::free(g_buf.depth);
  g_buf.frames = nullptr;
  g_buf.depth = nullptr;
  return n;
}

SampleProfiler::~SampleProfiler() { finish(); }

ProfileFromEnv::ProfileFromEnv() {
  const char* out = std::getenv("GPUDM_PROFILE_OUT");
  if (!out || !*out) return;
  const char* hz = std::getenv("GPUDM_PROFILE_HZ");
  try {
    p_ = std::make_unique<SampleProfiler>(out, hz ? std::atoi(hz) : 997);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpudm: %s (no profile)\n", e.what());
  }
}

ProfileFromEnv::~ProfileFromEnv() {
  if (!p_) return;
  const long n = p_->finish();
  std::fprintf(stderr, "gpudm: profile of %ld samples written to %s\n", n, std::getenv("GPUDM_PROFILE_OUT"));
}

}  // namespace gpudm
