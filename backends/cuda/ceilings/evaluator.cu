// The CUDA ceilings backend: owns the stream and buffers of one probe, launches the kernels of
// launch.cuh (which owns the kernels and their policies), times the device part with events
// (breakdown phase "probe", device clock).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backends/ceilings.hpp"
#include "backends/cuda/ceilings/launch.cuh"
#include "backends/cuda/common/common.cuh"

namespace gpudm::backend::cuda {

namespace {

namespace L = ceilings_launch;
using ceilings::Probe;

// Graph replay: a chain of this many empty-kernel nodes per graph launch.
constexpr std::size_t kGraphNodes = 100;

class CudaCeilings final : public ceilings::CeilingsBackend {
 public:
  CudaCeilings() : device_(require_device()), props_(device_props(device_)) {}
  ~CudaCeilings() override {
    if (graph_exec_) GPUDM_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(graph_exec_));
    if (graph_) GPUDM_CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
  }

  std::string name() const override { return "cuda"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.placement = Placement::device;
    c.devices = 1;
    c.deterministic_over = "launch shape";
    return c;
  }

  ceilings::ProbeWork setup(const ceilings::ProbeSpec& spec) override {
    spec_ = spec;
    ceilings::ProbeWork w;
    switch (spec.probe) {
      case Probe::copy_bandwidth: {
        n_ = spec.bytes / sizeof(float) / 4 * 4;  // whole float4s
        if (n_ == 0) throw Error("ceilings: copy_bandwidth needs bytes >= 16");
        src_ = DeviceBuffer<float>(n_);
        dst_ = DeviceBuffer<float>(n_);
        L::init(src_.data(), n_, props_, stream_);
        dst_.memset_async(0, stream_);
        grid_ = L::copy_grid(props_);
        w.amount = 2.0 * static_cast<double>(n_ * sizeof(float)) * static_cast<double>(spec.passes);
        w.threads = static_cast<int>(grid_.total());
        w.method = "float4 grid-stride device-to-device copy kernel, bytes read + written";
        w.theoretical_per_s = props_.peak_dram_bytes_per_s();
        break;
      }
      case Probe::h2d_bandwidth:
      case Probe::d2h_bandwidth: {
        if (spec.bytes == 0) throw Error("ceilings: transfer probes need bytes > 0");
        host_ = PinnedBuffer<unsigned char>(spec.bytes);
        std::fill(host_.begin(), host_.end(), static_cast<unsigned char>(0x5a));
        bytes_dev_ = DeviceBuffer<unsigned char>(spec.bytes);
        bytes_dev_.memset_async(0x5a, stream_);
        w.amount = static_cast<double>(spec.bytes) * static_cast<double>(spec.passes);
        w.threads = 1;
        w.method = std::string("cudaMemcpyAsync ") + (spec.probe == Probe::h2d_bandwidth ? "pinned host -> device" : "device -> pinned host");
        break;
      }
      case Probe::fma_rate: {
        grid_ = L::fma_grid(props_);
        fma_out_ = DeviceBuffer<float>(grid_.total());
        w.threads = static_cast<int>(grid_.total());
        w.amount = 2.0 * static_cast<double>(spec.iterations) * L::fma_chains() * w.threads;
        w.method = "fmaf chains, " + std::to_string(L::fma_chains()) + " per thread, " +
                   std::to_string(grid_.blocks) + " x " + std::to_string(grid_.threads) + " threads";
        {
          // FP32 lanes per SM: 64 on sm_60/70/80, 128 on sm_86/89/90 and later; one FMA per lane per clock.
          const bool wide = props_.cc_major > 8 || (props_.cc_major == 8 && props_.cc_minor > 0);
          w.theoretical_per_s = 2.0 * props_.sm_count * (wide ? 128 : 64) * props_.sm_clock_khz * 1e3;
        }
        break;
      }
      case Probe::popcount_rate: {
        grid_ = L::popcount_grid(props_);
        pop_out_ = DeviceBuffer<unsigned long long>(grid_.total());
        w.threads = static_cast<int>(grid_.total());
        w.amount = static_cast<double>(spec.iterations) * L::popcount_chains() * w.threads;
        w.method = "__popc on 32-bit words, " + std::to_string(L::popcount_chains()) + " per thread";
        break;
      }
      case Probe::launch_latency:
      case Probe::launch_sync_latency:
        w.amount = static_cast<double>(spec.launches);
        w.threads = 1;
        w.method = spec.probe == Probe::launch_latency
                       ? "empty kernel <<<1,1>>>, launches queued back to back, one synchronisation"
                       : "empty kernel <<<1,1>>> + cudaStreamSynchronize per launch";
        break;
      case Probe::graph_launch_latency: {
        replays_ = std::max<std::size_t>(1, (spec.launches + kGraphNodes - 1) / kGraphNodes);
        GPUDM_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
        for (std::size_t i = 0; i < kGraphNodes; ++i) L::empty(stream_);
        GPUDM_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph_));
        GPUDM_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph_, 0));
        GPUDM_CUDA_CHECK(cudaGraphUpload(graph_exec_, stream_));
        w.amount = static_cast<double>(replays_ * kGraphNodes);
        w.threads = 1;
        w.method = "CUDA graph of " + std::to_string(kGraphNodes) + " empty-kernel nodes, replayed " +
                   std::to_string(replays_) + " times; seconds per node";
        break;
      }
    }
    stream_.synchronize();
    return w;
  }

  void run(PhaseTimer& phases) override {
    const bool timed = phases.enabled();
    if (timed) timer_.start(stream_);
    switch (spec_.probe) {
      case Probe::copy_bandwidth: {
        for (std::size_t p = 0; p < spec_.passes; ++p) L::copy(dst_.data(), src_.data(), n_, grid_, stream_);
        break;
      }
      case Probe::h2d_bandwidth:
        for (std::size_t p = 0; p < spec_.passes; ++p) bytes_dev_.upload_async(host_.data(), host_.size(), stream_);
        break;
      case Probe::d2h_bandwidth:
        for (std::size_t p = 0; p < spec_.passes; ++p) bytes_dev_.download_async(host_.data(), host_.size(), stream_);
        break;
      case Probe::fma_rate:
        L::fma(spec_.iterations, fma_out_.data(), grid_, stream_);
        break;
      case Probe::popcount_rate:
        L::popcount(spec_.iterations, pop_out_.data(), grid_, stream_);
        break;
      case Probe::launch_latency:
        for (std::size_t i = 0; i < spec_.launches; ++i) L::empty(stream_);
        break;
      case Probe::launch_sync_latency:
        for (std::size_t i = 0; i < spec_.launches; ++i) {
          L::empty(stream_);
          GPUDM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        }
        break;
      case Probe::graph_launch_latency:
        for (std::size_t i = 0; i < replays_; ++i) GPUDM_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream_));
        break;
    }
    if (timed) {
      timer_.stop(stream_);
      record_device_phase(phases, "probe", timer_);
    }
    stream_.synchronize();
  }

  ceilings::ProbeCheck check() override {
    ceilings::ProbeCheck c;
    switch (spec_.probe) {
      case Probe::copy_bandwidth: {
        DeviceBuffer<unsigned long long> count(1);
        count.memset_async(0, stream_);
        L::count_mismatches(dst_.data(), src_.data(), n_, count.data(), props_, stream_);
        stream_.synchronize();
        c.what = "destination equals source (elements differing)";
        c.max_error = static_cast<double>(count.to_host()[0]);
        break;
      }
      case Probe::h2d_bandwidth:
      case Probe::d2h_bandwidth: {
        const auto h = bytes_dev_.to_host();
        c.what = "transferred bytes equal the pattern (bytes differing)";
        c.max_error = static_cast<double>(std::count_if(h.begin(), h.end(), [](unsigned char b) { return b != 0x5a; }) +
                                          std::count_if(host_.begin(), host_.end(), [](unsigned char b) { return b != 0x5a; }));
        break;
      }
      case Probe::fma_rate: {
        const auto out = fma_out_.to_host();
        c.what = "per-thread sum of fmaf chains equals the scalar std::fma reference (abs error)";
        for (std::size_t t : {std::size_t(0), std::size_t(37), out.size() - 1}) {
          float s = 0.0f;
          for (int ch = 0; ch < L::fma_chains(); ++ch)
            s += ceilings::fma_reference(ceilings::fma_start(static_cast<std::uint32_t>(ch), static_cast<std::uint32_t>(t % 64)),
                                         spec_.iterations, true);
          c.max_error = std::max(c.max_error, static_cast<double>(std::fabs(out[t] - s)));
        }
        break;
      }
      case Probe::popcount_rate: {
        const auto out = pop_out_.to_host();
        c.what = "per-thread popcount sums equal the host reference (difference)";
        for (std::size_t t : {std::size_t(0), std::size_t(1001), out.size() - 1}) {
          unsigned long long ref = 0;
          for (std::size_t i = 0; i < spec_.iterations; ++i)
            for (int ch = 0; ch < L::popcount_chains(); ++ch)
              ref += static_cast<unsigned long long>(
                  __builtin_popcount(fmix32(static_cast<std::uint32_t>(t * L::popcount_chains() + ch)) ^
                                     static_cast<std::uint32_t>(i)));
          c.max_error = std::max(c.max_error, std::fabs(static_cast<double>(out[t]) - static_cast<double>(ref)));
        }
        break;
      }
      case Probe::launch_latency:
      case Probe::launch_sync_latency:
      case Probe::graph_launch_latency: c.what = "nothing to check (empty kernels; launch errors are checked)"; break;
    }
    c.passed = c.max_error <= c.tolerance;
    return c;
  }

 private:
  int device_;
  const DeviceProps& props_;
  Stream stream_;  // declared before the buffers: they are released first
  EventTimer timer_;
  ceilings::ProbeSpec spec_;
  std::size_t n_ = 0, replays_ = 0;
  L::Grid grid_;
  DeviceBuffer<float> src_, dst_, fma_out_;
  DeviceBuffer<unsigned long long> pop_out_;
  DeviceBuffer<unsigned char> bytes_dev_;
  PinnedBuffer<unsigned char> host_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
};

}  // namespace

std::unique_ptr<ceilings::CeilingsBackend> make_ceilings_backend() { return std::make_unique<CudaCeilings>(); }

}  // namespace gpudm::backend::cuda
