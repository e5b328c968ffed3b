// Ceilings on every CPU thread (OpenMP): aggregate copy bandwidth, FMA and popcount rates,
// and the cost of an empty parallel region (the CPU's "launch latency").
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/ceilings.hpp"
#include "algorithms/ceilings/cpu_probes.hpp"
#include "algorithms/core/error.hpp"

namespace gpudm::backend::openmp {

namespace {

using ceilings::Probe;

class OpenmpCeilings final : public ceilings::CeilingsBackend {
 public:
  std::string name() const override { return "openmp"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.threads = true;
    c.deterministic_over = "thread count";
    return c;
  }

  static bool supports(Probe p) {
    return p == Probe::copy_bandwidth || p == Probe::fma_rate || p == Probe::popcount_rate ||
           p == Probe::launch_latency;
  }

  ceilings::ProbeWork setup(const ceilings::ProbeSpec& spec) override {
    if (!supports(spec.probe)) throw Unavailable(std::string("openmp has no ") + ceilings::to_string(spec.probe));
    spec_ = spec;
    threads_ = spec.threads > 0 ? spec.threads : omp_get_max_threads();
    ceilings::ProbeWork w;
    w.threads = threads_;
    switch (spec.probe) {
      case Probe::copy_bandwidth: {
        n_ = spec.bytes / sizeof(float);
        if (n_ < static_cast<std::size_t>(threads_)) throw Error("ceilings: copy_bandwidth bytes too small for the threads");
        src_.reset(new float[n_]);
        dst_.reset(new float[n_]);
        // First touch by the thread that will copy the chunk (NUMA placement).
        const int T = threads_;
        float* src = src_.get();
        float* dst = dst_.get();
        const std::size_t n = n_;
#pragma omp parallel num_threads(T)
        {
          const auto [b, e] = chunk(n, omp_get_thread_num(), omp_get_num_threads());
          for (std::size_t i = b; i < e; ++i) src[i] = static_cast<float>(i % 1000003);
          std::memset(dst + b, 0, (e - b) * sizeof(float));
        }
        w.amount = 2.0 * static_cast<double>(n_ * sizeof(float)) * static_cast<double>(spec.passes);
        w.method = "memcpy of one contiguous chunk per thread, bytes read + written";
        break;
      }
      case Probe::fma_rate: {
        const auto& k = ceilings::cpu::fma_kernel();
        per_thread_ = static_cast<std::size_t>(k.chains * k.lanes);
        out_.assign(per_thread_ * static_cast<std::size_t>(threads_), 0.0f);
        w.amount = 2.0 * static_cast<double>(spec.iterations) * k.chains * k.lanes * threads_;
        w.method = k.isa + ", " + std::to_string(k.chains) + " chains x " + std::to_string(k.lanes) +
                   " lanes per thread";
        break;
      }
      case Probe::popcount_rate: {
        words_.resize(ceilings::cpu::kPopcountWords * static_cast<std::size_t>(threads_));
        for (int t = 0; t < threads_; ++t) ceilings::cpu::fill_popcount_words(words_.data() + t * ceilings::cpu::kPopcountWords);
        sums_.assign(static_cast<std::size_t>(threads_), 0);
        w.amount = 2.0 * static_cast<double>(spec.iterations) * ceilings::cpu::kPopcountWords * threads_;
        w.method = ceilings::cpu::popcount_isa() + " on 64-bit words (counted as two 32-bit ops), L1-resident per thread";
        break;
      }
      case Probe::launch_latency:
        w.amount = static_cast<double>(spec.launches);
        w.method = "empty '#pragma omp parallel' region (fork + join) with " + std::to_string(threads_) + " threads";
        break;
      default: break;
    }
    return w;
  }

  void run(PhaseTimer&) override {
    const int T = threads_;
    switch (spec_.probe) {
      case Probe::copy_bandwidth: {
        float* src = src_.get();
        float* dst = dst_.get();
        const std::size_t n = n_, passes = spec_.passes;
#pragma omp parallel num_threads(T)
        {
          const auto [b, e] = chunk(n, omp_get_thread_num(), omp_get_num_threads());
          for (std::size_t p = 0; p < passes; ++p) ceilings::cpu::copy(dst + b, src + b, e - b);
        }
        break;
      }
      case Probe::fma_rate: {
        float* out = out_.data();
        const std::size_t per = per_thread_, it = spec_.iterations;
#pragma omp parallel num_threads(T)
        ceilings::cpu::run_fma(it, out + per * static_cast<std::size_t>(omp_get_thread_num()));
        break;
      }
      case Probe::popcount_rate: {
        const std::uint64_t* words = words_.data();
        std::uint64_t* sums = sums_.data();
        const std::size_t it = spec_.iterations;
#pragma omp parallel num_threads(T)
        {
          const int t = omp_get_thread_num();
          const std::uint64_t s = ceilings::cpu::run_popcount(words + t * ceilings::cpu::kPopcountWords, it);
          sums[t] = s;
        }
        break;
      }
      case Probe::launch_latency:
        for (std::size_t l = 0; l < spec_.launches; ++l) {
#pragma omp parallel num_threads(T)
          {
            asm volatile("" ::: "memory");
          }
        }
        break;
      default: break;
    }
  }

  ceilings::ProbeCheck check() override {
    ceilings::ProbeCheck c;
    switch (spec_.probe) {
      case Probe::copy_bandwidth:
        c.what = "destination equals source";
        c.max_error = std::memcmp(dst_.get(), src_.get(), n_ * sizeof(float)) == 0 ? 0.0 : 1.0;
        break;
      case Probe::fma_rate: c = ceilings::cpu::check_fma(out_.data(), threads_, spec_.iterations); break;
      case Probe::popcount_rate: {
        const auto ref = ceilings::cpu::popcount_reference(words_.data(), spec_.iterations);
        c.what = "every thread's popcount sum equals the portable reference";
        for (std::uint64_t s : sums_)
          c.max_error = std::max(c.max_error, std::fabs(static_cast<double>(s) - static_cast<double>(ref)));
        break;
      }
      case Probe::launch_latency: c.what = "nothing to check (empty regions)"; break;
      default: break;
    }
    c.passed = c.max_error <= c.tolerance;
    return c;
  }

 private:
  static std::pair<std::size_t, std::size_t> chunk(std::size_t n, int t, int T) {
    const std::size_t per = (n + static_cast<std::size_t>(T) - 1) / static_cast<std::size_t>(T);
    const std::size_t b = std::min(n, per * static_cast<std::size_t>(t));
    return {b, std::min(n, b + per)};
  }

  ceilings::ProbeSpec spec_;
  int threads_ = 1;
  std::size_t n_ = 0, per_thread_ = 0;
  std::unique_ptr<float[]> src_, dst_;
  std::vector<float> out_;
  std::vector<std::uint64_t> words_, sums_;
};

}  // namespace

std::unique_ptr<ceilings::CeilingsBackend> make_ceilings_backend() { return std::make_unique<OpenmpCeilings>(); }

}  // namespace gpudm::backend::openmp
