#include "algorithms/ceilings/cpu_ceilings.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "algorithms/ceilings/cpu_probes.hpp"
#include "algorithms/core/error.hpp"

namespace gpudm::ceilings {

CpuCeilings::CpuCeilings(std::unique_ptr<TaskRunner> tasks, bool threaded) : tasks_(std::move(tasks)), threaded_(threaded) {
  GPUDM_REQUIRE(tasks_ != nullptr, "ceilings: a CPU backend needs a task runner");
}

bool CpuCeilings::supports(Probe p) const {
  return p == Probe::copy_bandwidth || p == Probe::fma_rate || p == Probe::popcount_rate ||
         (threaded_ && p == Probe::launch_latency);
}

std::pair<std::size_t, std::size_t> CpuCeilings::chunk(std::size_t n, int t) const {
  const std::size_t T = static_cast<std::size_t>(threads_);
  const std::size_t per = (n + T - 1) / T;
  const std::size_t b = std::min(n, per * static_cast<std::size_t>(t));
  return {b, std::min(n, b + per)};
}

template <class Fn>
void CpuCeilings::per_worker(const Fn& task) const {
  tasks_->run_indexed(
      static_cast<std::size_t>(threads_), [&](std::size_t t, int) { task(static_cast<int>(t)); }, {TaskSchedule::Kind::fixed, 1});
}

ProbeWork CpuCeilings::setup(const ProbeSpec& spec) {
  if (!supports(spec.probe)) throw Unavailable(name() + " has no " + to_string(spec.probe));
  spec_ = spec;
  tasks_->set_threads(spec.threads);
  threads_ = tasks_->threads();
  ProbeWork w;
  w.threads = threads_;
  switch (spec.probe) {
    case Probe::copy_bandwidth: {
      n_ = spec.bytes / sizeof(float);
      if (n_ == 0) throw Error("ceilings: copy_bandwidth needs bytes >= 4");
      if (n_ < static_cast<std::size_t>(threads_)) throw Error("ceilings: copy_bandwidth bytes too small for the threads");
      src_.reset(new float[n_]);
      dst_.reset(new float[n_]);
      // First touch by the worker that will copy the chunk (NUMA placement).
      per_worker([&](int t) {
        const auto [b, e] = chunk(n_, t);
        for (std::size_t i = b; i < e; ++i) src_[i] = static_cast<float>(i % 1000003);
        std::memset(dst_.get() + b, 0, (e - b) * sizeof(float));
      });
      w.amount = 2.0 * static_cast<double>(n_ * sizeof(float)) * static_cast<double>(spec.passes);
      w.method = threaded_ ? "memcpy of one contiguous chunk per thread, bytes read + written" : "memcpy, bytes read + written";
      break;
    }
    case Probe::fma_rate: {
      const auto& k = cpu::fma_kernel();
      per_thread_ = static_cast<std::size_t>(k.chains * k.lanes);
      out_.assign(per_thread_ * static_cast<std::size_t>(threads_), 0.0f);
      w.amount = 2.0 * static_cast<double>(spec.iterations) * k.chains * k.lanes * threads_;
      w.method = k.isa + ", " + std::to_string(k.chains) + " chains x " + std::to_string(k.lanes) + (threaded_ ? " lanes per thread" : " lanes");
      break;
    }
    case Probe::popcount_rate: {
      words_.resize(cpu::kPopcountWords * static_cast<std::size_t>(threads_));
      for (int t = 0; t < threads_; ++t) cpu::fill_popcount_words(words_.data() + t * cpu::kPopcountWords);
      sums_.assign(static_cast<std::size_t>(threads_), 0);
      w.amount = 2.0 * static_cast<double>(spec.iterations) * cpu::kPopcountWords * threads_;
      w.method = cpu::popcount_isa() + " on 64-bit words (counted as two 32-bit ops), L1-resident" + (threaded_ ? " per thread" : "");
      break;
    }
    case Probe::launch_latency:
      w.amount = static_cast<double>(spec.launches);
      w.method = "empty parallel region (fork + join, the task runner's fixed schedule) with " + std::to_string(threads_) + " threads";
      break;
    default: break;
  }
  return w;
}

void CpuCeilings::run(PhaseTimer&) {
  switch (spec_.probe) {
    case Probe::copy_bandwidth:
      per_worker([&](int t) {
        const auto [b, e] = chunk(n_, t);
        for (std::size_t p = 0; p < spec_.passes; ++p) cpu::copy(dst_.get() + b, src_.get() + b, e - b);
      });
      break;
    case Probe::fma_rate:
      per_worker([&](int t) { cpu::run_fma(spec_.iterations, out_.data() + per_thread_ * static_cast<std::size_t>(t)); });
      break;
    case Probe::popcount_rate:
      per_worker([&](int t) {
        sums_[static_cast<std::size_t>(t)] = cpu::run_popcount(words_.data() + t * cpu::kPopcountWords, spec_.iterations);
      });
      break;
    case Probe::launch_latency:
      for (std::size_t l = 0; l < spec_.launches; ++l) per_worker([](int) { asm volatile("" ::: "memory"); });
      break;
    default: break;
  }
}

ProbeCheck CpuCeilings::check() {
  ProbeCheck c;
  switch (spec_.probe) {
    case Probe::copy_bandwidth:
      c.what = "destination equals source";
      c.max_error = std::memcmp(dst_.get(), src_.get(), n_ * sizeof(float)) == 0 ? 0.0 : 1.0;
      break;
    case Probe::fma_rate: c = cpu::check_fma(out_.data(), threads_, spec_.iterations); break;
    case Probe::popcount_rate: {
      const auto ref = cpu::popcount_reference(words_.data(), spec_.iterations);
      c.what = threaded_ ? "every thread's popcount sum equals the portable reference" : "popcount sum equals the portable reference";
      for (std::uint64_t s : sums_) c.max_error = std::max(c.max_error, std::fabs(static_cast<double>(s) - static_cast<double>(ref)));
      break;
    }
    case Probe::launch_latency: c.what = "nothing to check (empty regions)"; break;
    default: break;
  }
  c.passed = c.max_error <= c.tolerance;
  return c;
}

}  // namespace gpudm::ceilings
