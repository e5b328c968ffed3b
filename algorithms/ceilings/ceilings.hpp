#pragma once
// The "ceilings" family: the machine's roofline denominators, measured by the same pipeline as
// every paper experiment so that later results can say "% of measured peak".
//
// Probes (param "probe"):
//   copy_bandwidth        bytes read + written per second by a large copy (CPU: memcpy per thread
//                         chunk; GPU: device-to-device float4 grid-stride copy)
//   fma_rate              fp32 FMA throughput, FLOP/s with one FMA = 2 FLOP, from independent
//                         FMA chains (CPU: widest vector ISA found at run time; GPU: fmaf chains)
//   popcount_rate         32-bit population counts per second (CPU: 64-bit popcnt counts as 2)
//   h2d_bandwidth         pinned host -> device cudaMemcpyAsync bytes per second (GPU only)
//   d2h_bandwidth         device -> pinned host (GPU only)
//   launch_latency        seconds per launch of an empty kernel, launches queued back to back
//                         (GPU); for OpenMP, seconds per empty parallel region (fork/join)
//   launch_sync_latency   seconds per launch + stream synchronisation round trip (GPU only)
//   graph_launch_latency  seconds per empty-kernel node when a captured CUDA graph is replayed
//
// A backend prepares a probe once (allocation, first touch, graph capture: not timed), then runs
// it once per timed repetition; the family times repetitions with the host wall clock (the
// headline) and divides the work by the median. GPU backends add the event-timed device phase
// to the breakdown.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/ceilings/probe_math.hpp"
#include "algorithms/core/backend.hpp"
#include "algorithms/core/phase_timer.hpp"

namespace gpudm::ceilings {

enum class Probe {
  copy_bandwidth,
  fma_rate,
  popcount_rate,
  h2d_bandwidth,
  d2h_bandwidth,
  launch_latency,
  launch_sync_latency,
  graph_launch_latency,
};

const std::vector<Probe>& all_probes();
const char* to_string(Probe p);
// Throws gpudm::Error naming the valid probes.
Probe parse_probe(const std::string& name);

// What one repetition's work is counted in, and the metric its rate is reported as.
enum class WorkUnit { bytes, flops, ops, launches };
WorkUnit work_unit(Probe p);
const char* to_string(WorkUnit u);
// "bytes_per_s" | "flops_per_s" | "ops_per_s" | "seconds_per_launch"
const char* metric_name(Probe p);

struct ProbeSpec {
  Probe probe = Probe::copy_bandwidth;
  std::size_t bytes = 0;       // per buffer (copy, transfers)
  std::size_t passes = 1;      // copies/transfers per repetition
  std::size_t iterations = 0;  // loop trips per thread (fma, popcount)
  std::size_t launches = 0;    // launches or parallel regions per repetition
  int threads = 0;             // CPU threads (openmp; 0 = all available)
};

// What one repetition does, fixed by prepare().
struct ProbeWork {
  double amount = 0.0;  // in work_unit(probe)
  int threads = 1;      // CPU threads or GPU threads launched
  std::string method;   // how it is measured, e.g. "avx512f fma, 16 chains x 16 lanes"
  // The vendor's theoretical rate for this probe (work units per second), 0 when unknown:
  // GPU DRAM bandwidth from memory clock x bus width, FP32 peak from SMs x 128 lanes x clock.
  double theoretical_per_s = 0.0;
};

// Self-check of the probe's output against a scalar reference (guards against the compiler
// removing the work and against wrong kernels).
struct ProbeCheck {
  bool passed = false;
  double max_error = 0.0;
  double tolerance = 0.0;
  std::string what;
};

// The lifecycle of backend.hpp: configure(spec), prepare() allocates and initialises for the
// probe (untimed; throws gpudm::Unavailable for a probe the backend does not run), then run()
// once per timed repetition.
class CeilingsBackend : public BackendOf<ProbeSpec, NoInput> {
 public:
  void prepare(const NoInput&) final { work_ = setup(options_); }
  // What one repetition does (valid after prepare()).
  const ProbeWork& work() const { return work_; }
  // One timed repetition; returns only when the work is complete (device synchronised).
  // Device-clock phases go into `phases` when it is enabled.
  virtual void run(PhaseTimer& phases) = 0;
  // Checks the last run's output.
  virtual ProbeCheck check() = 0;

 protected:
  virtual ProbeWork setup(const ProbeSpec& spec) = 0;

 private:
  ProbeWork work_;
};

// ---- references for the checks ----
// One FMA chain after `iterations` updates from x0, fused (std::fma) or not (x * m, then + a).
float fma_reference(float x0, std::size_t iterations, bool fused);

}  // namespace gpudm::ceilings
