// Ceilings on one CPU thread: copy bandwidth, FMA rate and popcount rate of a single core.
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/ceilings.hpp"
#include "algorithms/ceilings/cpu_probes.hpp"
#include "algorithms/core/error.hpp"

namespace gpudm::backend::sequential {

namespace {

using ceilings::Probe;

class SequentialCeilings final : public ceilings::CeilingsBackend {
 public:
  std::string name() const override { return "sequential"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.reference = true;
    return c;
  }

  static bool supports(Probe p) {
    return p == Probe::copy_bandwidth || p == Probe::fma_rate || p == Probe::popcount_rate;
  }

  ceilings::ProbeWork setup(const ceilings::ProbeSpec& spec) override {
    if (!supports(spec.probe)) throw Unavailable(std::string("sequential has no ") + ceilings::to_string(spec.probe));
    spec_ = spec;
    ceilings::ProbeWork w;
    w.threads = 1;
    switch (spec.probe) {
      case Probe::copy_bandwidth: {
        n_ = spec.bytes / sizeof(float);
        if (n_ == 0) throw Error("ceilings: copy_bandwidth needs bytes >= 4");
        src_.reset(new float[n_]);
        dst_.reset(new float[n_]);
        for (std::size_t i = 0; i < n_; ++i) src_[i] = static_cast<float>(i % 1000003);
        std::memset(dst_.get(), 0, n_ * sizeof(float));
        w.amount = 2.0 * static_cast<double>(n_ * sizeof(float)) * static_cast<double>(spec.passes);
        w.method = "memcpy, bytes read + written";
        break;
      }
      case Probe::fma_rate: {
        const auto& k = ceilings::cpu::fma_kernel();
        out_.assign(static_cast<std::size_t>(k.chains * k.lanes), 0.0f);
        w.amount = 2.0 * static_cast<double>(spec.iterations) * k.chains * k.lanes;
        w.method = k.isa + ", " + std::to_string(k.chains) + " chains x " + std::to_string(k.lanes) + " lanes";
        break;
      }
      case Probe::popcount_rate: {
        words_.resize(ceilings::cpu::kPopcountWords);
        ceilings::cpu::fill_popcount_words(words_.data());
        w.amount = 2.0 * static_cast<double>(spec.iterations) * ceilings::cpu::kPopcountWords;
        w.method = ceilings::cpu::popcount_isa() + " on 64-bit words (counted as two 32-bit ops), L1-resident";
        break;
      }
      default: break;
    }
    return w;
  }

  void run(PhaseTimer&) override {
    switch (spec_.probe) {
      case Probe::copy_bandwidth:
        for (std::size_t p = 0; p < spec_.passes; ++p) ceilings::cpu::copy(dst_.get(), src_.get(), n_);
        break;
      case Probe::fma_rate: ceilings::cpu::run_fma(spec_.iterations, out_.data()); break;
      case Probe::popcount_rate: popcount_ = ceilings::cpu::run_popcount(words_.data(), spec_.iterations); break;
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
      case Probe::fma_rate: c = ceilings::cpu::check_fma(out_.data(), 1, spec_.iterations); break;
      case Probe::popcount_rate: {
        const auto ref = ceilings::cpu::popcount_reference(words_.data(), spec_.iterations);
        c.what = "popcount sum equals the portable reference";
        c.max_error = std::fabs(static_cast<double>(popcount_) - static_cast<double>(ref));
        break;
      }
      default: break;
    }
    c.passed = c.max_error <= c.tolerance;
    return c;
  }

 private:
  ceilings::ProbeSpec spec_;
  std::size_t n_ = 0;
  std::unique_ptr<float[]> src_, dst_;
  std::vector<float> out_;
  std::vector<std::uint64_t> words_;
  std::uint64_t popcount_ = 0;

};

}  // namespace

std::unique_ptr<ceilings::CeilingsBackend> make_ceilings_backend() { return std::make_unique<SequentialCeilings>(); }

}  // namespace gpudm::backend::sequential
