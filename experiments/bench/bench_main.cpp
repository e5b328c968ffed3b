// gpudm_bench: Google Benchmark cases generated from the registry: every family that has an
// experiments/bench/<family>.cpp x every backend registered for it x its sizes.
//
// Timing: one benchmark iteration = one Family::run_case with one warm-up and one timed
// repetition. The iteration's manual time is the run's device-clock total (CUDA events) when
// the backend records device phases, else its host wall-clock sample (which already includes
// synchronisation). Run with --benchmark_repetitions=9 for scripts/perf_gate.py.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/error.hpp"
#include "algorithms/core/family.hpp"
#include "algorithms/core/registry.hpp"
#include "backends/register.hpp"
#include "datasets/catalog.hpp"
#include "experiments/bench/bench_cases.hpp"
#include "experiments/families.hpp"

namespace gpudm::bench {
#define GPUDM_BENCH_FAMILY(f) std::vector<BenchCase> cases_##f();
#include "gpudm/bench_families.inc"
#undef GPUDM_BENCH_FAMILY
}  // namespace gpudm::bench

namespace {

using gpudm::bench::BenchCase;

struct Env {
  gpudm::Registry registry;
  gpudm::experiments::FamilySet families = gpudm::experiments::product_families();
  std::unique_ptr<gpudm::datasets::CatalogProvider> data;
  gpudm::DatasetProvider& datasets() {
    if (!data) data = std::make_unique<gpudm::datasets::CatalogProvider>();
    return *data;
  }
};

Env& env() {
  static Env e = [] {
    Env x;
    gpudm::register_all(x.registry);
    return x;
  }();
  return e;
}

double device_seconds(const gpudm::PhaseTimer& t) {
  double s = 0.0;
  for (const auto& p : t.phases())
    if (p.clock == gpudm::PhaseClock::device) s += p.seconds;
  return s;
}

void run_bench(benchmark::State& state, const std::string& family, const std::string& backend, const BenchCase& c) {
  Env& e = env();
  gpudm::Family* f = e.families.find(family);
  const auto& info = e.registry.info(family, backend);
  if (!f) {
    state.SkipWithError(("family '" + family + "' is not runnable in this build").c_str());
    return;
  }
  if (!info.available) {
    state.SkipWithError(("skipped: " + info.reason).c_str());
    return;
  }
  gpudm::CaseContext ctx;
  ctx.experiment_id = "bench";
  ctx.family = family;
  ctx.backend = backend;
  ctx.dataset = c.dataset;
  ctx.dataset_options = c.dataset_options;
  ctx.params = c.params;
  for (const auto& p : f->params())
    if (!ctx.params.contains(p.name)) ctx.params[p.name] = p.default_value;
  ctx.warmup = 1;
  ctx.repetitions = 1;
  ctx.smoke = c.smoke;
  ctx.registry = &e.registry;
  ctx.datasets = &e.datasets();

  double work = 0.0;
  std::vector<double> counter_sums(c.counters.size(), 0.0);
  bool device_clock = false;
  for (auto _ : state) {
    gpudm::CaseResult r;
    try {
      r = f->run_case(ctx);
    } catch (const gpudm::Unavailable& ex) {
      state.SkipWithError((std::string("skipped: ") + ex.what()).c_str());
      return;
    } catch (const std::exception& ex) {
      state.SkipWithError((std::string("failed: ") + ex.what()).c_str());
      return;
    }
    if (r.status != "ok" || r.timing.samples.empty()) {
      state.SkipWithError((r.status + ": " + r.reason).c_str());
      return;
    }
    const double dev = device_seconds(r.breakdown);
    device_clock = dev > 0.0;
    state.SetIterationTime(device_clock ? dev : r.timing.samples.front());
    if (!c.work_metric.empty() && r.metrics.contains(c.work_metric)) work += r.metrics[c.work_metric].get<double>();
    for (std::size_t i = 0; i < c.counters.size(); ++i)
      if (r.metrics.contains(c.counters[i].metric))
        counter_sums[i] += r.metrics[c.counters[i].metric].get<double>() * c.counters[i].scale;
  }
  if (work > 0.0) {
    if (c.work_is_bytes) state.SetBytesProcessed(static_cast<int64_t>(work));
    else state.SetItemsProcessed(static_cast<int64_t>(work));
  }
  for (std::size_t i = 0; i < c.counters.size(); ++i)
    state.counters[c.counters[i].label] = benchmark::Counter(counter_sums[i], benchmark::Counter::kAvgIterations);
  state.SetLabel(device_clock ? "device clock (CUDA events)" : "host wall clock");
}

void register_family(const std::string& family, const std::vector<BenchCase>& cases) {
  Env& e = env();
  for (const auto& b : e.registry.backends(family)) {
    for (const auto& c : cases) {
      if (c.runs_on && b.available) {
        const auto caps = e.registry.capabilities(family, b.backend);
        if (caps && !c.runs_on(*caps)) continue;
      }
      const std::string name = family + "/" + c.name + "/" + c.size + "/" + b.backend;
      benchmark::RegisterBenchmark(name.c_str(), [family, backend = b.backend, c](benchmark::State& s) {
        run_bench(s, family, backend, c);
      })->UseManualTime()->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
#define GPUDM_BENCH_FAMILY(f) register_family(#f, gpudm::bench::cases_##f());
#include "gpudm/bench_families.inc"
#undef GPUDM_BENCH_FAMILY
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpudm_bench: %s\n", e.what());
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
