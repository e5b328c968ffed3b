// The ceilings family as the runner sees it: one case = one probe on one backend.
#include <algorithm>
#include <memory>
#include <string>

#include "algorithms/ceilings/ceilings.hpp"
#include "algorithms/core/error.hpp"
#include "algorithms/core/family.hpp"
#include "algorithms/core/machine.hpp"

namespace gpudm {

namespace {

using ceilings::Probe;
using ceilings::ProbeSpec;
using ceilings::WorkUnit;

constexpr std::size_t MiB = std::size_t(1) << 20;

// The params, declared once: ProbeSpec's sizes with 0 = automatic (resolve_spec picks them).
const ParamTable<ProbeSpec>& table() {
  static const ParamTable<ProbeSpec> t = [] {
    ProbeSpec automatic;
    automatic.passes = 0;
    ParamTable<ProbeSpec> t("ceilings", automatic);
    std::vector<std::pair<std::string, Probe>> names;
    for (Probe p : ceilings::all_probes()) names.emplace_back(ceilings::to_string(p), p);
    t.add_enum("probe", &ProbeSpec::probe, names, "what to measure");
    t.add("bytes", &ProbeSpec::bytes, "bytes per buffer for copy/transfer probes (0 = automatic: beyond every cache)");
    t.add("passes", &ProbeSpec::passes, "copies or transfers per timed repetition (0 = automatic)");
    t.add("iterations", &ProbeSpec::iterations, "loop trips per thread for fma_rate/popcount_rate (0 = automatic)");
    t.add("launches", &ProbeSpec::launches,
          "kernel launches / parallel regions per repetition for latency probes (0 = automatic)");
    t.add("threads", &ProbeSpec::threads, "CPU threads of the openmp backend (0 = all; the sequential backend uses 1)")
        .range(0, 4096)
        .backend_only();
    return t;
  }();
  return t;
}

// Work per repetition: large enough that one repetition lasts tens of milliseconds on the
// GPU machine (timer resolution and launch overhead negligible), small in smoke runs.
ProbeSpec resolve_spec(const CaseContext& ctx, bool device) {
  ProbeSpec s = table().read(ctx.params);
  const bool gpu = device;
  const bool smoke = ctx.smoke;
  auto pick = [](std::size_t& v, std::size_t full, std::size_t small, bool smoke_run) {
    if (v == 0) v = smoke_run ? small : full;
  };
  switch (s.probe) {
    case Probe::copy_bandwidth:
      // Far beyond every cache: GPU L2 is 50 MB, CPU L3 tens of MB.
      pick(s.bytes, gpu ? 1024 * MiB : 256 * MiB, gpu ? 64 * MiB : 16 * MiB, smoke);
      pick(s.passes, gpu ? 20 : 1, gpu ? 4 : 2, smoke);
      break;
    case Probe::h2d_bandwidth:
    case Probe::d2h_bandwidth:
      pick(s.bytes, 256 * MiB, 16 * MiB, smoke);
      pick(s.passes, 4, 1, smoke);
      break;
    case Probe::fma_rate:
      pick(s.iterations, gpu ? 400000 : 20000000, gpu ? 20000 : 500000, smoke);
      break;
    case Probe::popcount_rate:
      pick(s.iterations, gpu ? 100000 : 200000, gpu ? 5000 : 5000, smoke);
      break;
    case Probe::launch_latency:
    case Probe::launch_sync_latency:
    case Probe::graph_launch_latency:
      // An OpenMP fork/join costs microseconds, but tens of milliseconds when the CPU is
      // oversubscribed (CI): fewer regions on the CPU.
      pick(s.launches, gpu ? 10000 : 2000, gpu ? 1000 : 100, smoke);
      break;
  }
  if (s.passes == 0) s.passes = 1;
  return s;
}

// One probe: the backend prepared (its buffers); run_timed_case() times run_once(), the energy
// meter (device probes) around the timed repetitions; finish() has the self-check and metrics.
class CeilingsTimedCase final : public TimedCase {
 public:
  explicit CeilingsTimedCase(const CaseContext& ctx) {
    if (!ctx.registry) throw Error("ceilings: a case needs a backend registry");
    // No dataset: configs omit "datasets" (the runner passes "none"); probes make their own buffers.
    backend = ctx.registry->create<ceilings::CeilingsBackend>("ceilings", ctx.backend);
    device = backend->capabilities().device();
    spec = resolve_spec(ctx, device);

    res.dataset = ojson{{"name", "none"}, {"note", "ceilings probes generate their own buffers"}};
    backend->configure(spec);
    try {
      backend->prepare({});
    } catch (const Unavailable& e) {
      throw Unavailable(std::string("probe '") + ceilings::to_string(spec.probe) + "' does not apply to the " +
                        ctx.backend + " backend (" + e.what() + ")");
    }
    work = backend->work();
  }
  void run_once(PhaseTimer& timer) override { backend->run(timer); }
  void before_timed() override {
    if (!device) return;
    meter = std::make_unique<machine::GpuEnergyMeter>(0);
    meter->start();
  }
  void after_timed() override {
    if (meter) energy = meter->stop();
  }
  CaseResult finish(TimingStats timing, PhaseTimer breakdown) override {
    res.timing = std::move(timing);
    res.breakdown = std::move(breakdown);

    const ceilings::ProbeCheck check = backend->check();
    res.validation = ojson{{"reference_backend", "scalar reference"},
                           {"what", check.what},
                           {"max_error", check.max_error},
                           {"tolerance", check.tolerance},
                           {"passed", check.passed}};
    if (!check.passed) {
      res.status = "failed";
      res.reason = "self-check failed: " + check.what + " (error " + std::to_string(check.max_error) + " > " +
                   std::to_string(check.tolerance) + ")";
    }

    const WorkUnit unit = ceilings::work_unit(spec.probe);
    const std::string metric = ceilings::metric_name(spec.probe);
    ojson& m = res.metrics;
    m["probe"] = ceilings::to_string(spec.probe);
    m["work_unit"] = ceilings::to_string(unit);
    m["work_per_repetition"] = work.amount;
    m["threads"] = work.threads;
    m["method"] = work.method;
    if (spec.bytes) m["bytes_per_buffer"] = spec.bytes;
    if (spec.passes > 1) m["passes"] = spec.passes;
    if (spec.iterations) m["iterations"] = spec.iterations;
    const double med = res.timing.median(), best = res.timing.min();
    if (unit == WorkUnit::launches) {
      m[metric] = work.amount > 0 ? med / work.amount : 0.0;
      m[metric + "_best"] = work.amount > 0 ? best / work.amount : 0.0;
    } else {
      m[metric] = med > 0 ? work.amount / med : 0.0;
      m[metric + "_best"] = best > 0 ? work.amount / best : 0.0;
    }
    // One number per probe in readable units, so one table can hold every probe.
    const double headline = m[metric].get<double>();
    switch (unit) {
      case WorkUnit::bytes: m["display_value"] = headline * 1e-9; m["display_unit"] = "GB/s"; break;
      case WorkUnit::flops: m["display_value"] = headline * 1e-9; m["display_unit"] = "GFLOP/s"; break;
      case WorkUnit::ops: m["display_value"] = headline * 1e-9; m["display_unit"] = "Gop/s"; break;
      case WorkUnit::launches: m["display_value"] = headline * 1e6; m["display_unit"] = "us/launch"; break;
    }
    if (work.theoretical_per_s > 0 && unit != WorkUnit::launches) {
      m["theoretical_per_s"] = work.theoretical_per_s;
      m["percent_of_theoretical"] = 100.0 * headline / work.theoretical_per_s;
    }
    // Device-clock view of the same work (CUDA events around the probe only).
    const double dev = res.breakdown.seconds("probe");
    if (dev > 0 && !res.timing.samples.empty()) {
      const double per_rep = dev / static_cast<double>(res.timing.samples.size());
      m["device_" + metric] = unit == WorkUnit::launches ? per_rep / work.amount : work.amount / per_rep;
    }
    if (meter) m["energy"] = energy.to_json();
    return res;
  }

 private:
  std::unique_ptr<ceilings::CeilingsBackend> backend;
  bool device = false;
  ProbeSpec spec;
  ceilings::ProbeWork work;
  std::unique_ptr<machine::GpuEnergyMeter> meter;
  machine::EnergyReading energy;
  CaseResult res;
};

class CeilingsFamily final : public Family {
 public:
  std::string name() const override { return "ceilings"; }
  std::string description() const override {
    return "Roofline denominators of this machine: CPU/GPU copy bandwidth, fp32 FMA rate, popcount rate, "
           "pinned H2D/D2H bandwidth, kernel launch latency (param 'probe')";
  }
  std::vector<ParamSpec> params() const override { return table().specs(); }

  std::unique_ptr<TimedCase> make_case(const CaseContext& ctx) override { return std::make_unique<CeilingsTimedCase>(ctx); }
};

}  // namespace

std::unique_ptr<Family> make_ceilings_family() { return std::make_unique<CeilingsFamily>(); }

}  // namespace gpudm
