#pragma once
// Device-clock timing with CUDA events.
//
//   EventTimer t; t.start(stream); kernel<<<..., stream>>>(...); t.stop(stream);
//   double s = t.seconds();              // waits for the stop event
//
//   DevicePhases phases(stream);          // many phases, one synchronisation at the end
//   { auto p = phases.scope("coverage"); launch_coverage(...); }
//   { auto p = phases.scope("fitness");  launch_fitness(...); }
//   phases.flush(timer);                  // adds each phase to gpudm::PhaseTimer, PhaseClock::device
//
// Event times measure what the GPU did between the two records on one stream: they exclude
// host overhead and must never be mixed into a host-clock phase (PhaseTimer enforces that).
#include <cuda_runtime_api.h>

#include <string>
#include <utility>
#include <vector>

#include "algorithms/core/phase_timer.hpp"
#include "backends/cuda/common/error.cuh"

namespace gpudm::backend::cuda {

class Event {
 public:
  // Timing events by default; pass cudaEventDisableTiming for pure synchronisation events.
  explicit Event(unsigned flags = cudaEventDefault) { GPUDM_CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
  ~Event() {
    if (e_) GPUDM_CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      if (e_) GPUDM_CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  cudaEvent_t get() const { return e_; }
  operator cudaEvent_t() const { return e_; }  // NOLINT
  void record(cudaStream_t s) { GPUDM_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void synchronize() const { GPUDM_CUDA_CHECK(cudaEventSynchronize(e_)); }

 private:
  cudaEvent_t e_ = nullptr;
};

// Seconds between two recorded events (waits for `stop`).
inline double elapsed_seconds(const Event& start, const Event& stop) {
  stop.synchronize();
  float ms = 0.0f;
  GPUDM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

class EventTimer {
 public:
  void start(cudaStream_t s) {
    stream_ = s;
    start_.record(s);
    running_ = true;
  }
  void stop(cudaStream_t s) {
    if (!running_) throw ::gpudm::Error("EventTimer::stop without start");
    stop_.record(s);
    running_ = false;
    stopped_ = true;
  }
  void stop() { stop(stream_); }
  // Seconds between start and stop; synchronises on the stop event.
  double seconds() const {
    if (!stopped_) throw ::gpudm::Error("EventTimer::seconds before stop");
    return elapsed_seconds(start_, stop_);
  }

 private:
  Event start_, stop_;
  cudaStream_t stream_ = nullptr;
  bool running_ = false, stopped_ = false;
};

// Adds `t.seconds()` to phase `name` on the device clock.
inline void record_device_phase(::gpudm::PhaseTimer& timer, const std::string& name, const EventTimer& t) {
  timer.add(name, t.seconds(), ::gpudm::PhaseClock::device);
}

// Collects device phases on one stream without synchronising per phase; events are pooled and
// reused across flushes, so a steady-state loop creates no events.
class DevicePhases {
 public:
  explicit DevicePhases(cudaStream_t stream, bool enabled = true) : stream_(stream), enabled_(enabled) {}

  class Scope {
   public:
    Scope(DevicePhases* p, std::size_t i) : p_(p), i_(i) {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope(Scope&& o) noexcept : p_(std::exchange(o.p_, nullptr)), i_(o.i_) {}
    ~Scope() noexcept(false) {
      if (p_) p_->end(i_);
    }

   private:
    DevicePhases* p_;
    std::size_t i_;
  };

  // Records a start event now and a stop event when the returned scope ends.
  Scope scope(std::string name) {
    if (!enabled_) return Scope(nullptr, 0);
    return Scope(this, begin(std::move(name)));
  }
  std::size_t begin(std::string name) {
    if (used_ == pool_.size()) pool_.emplace_back();
    Entry& e = pool_[used_];
    e.name = std::move(name);
    e.start.record(stream_);
    e.open = true;
    return used_++;
  }
  void end(std::size_t i) {
    pool_.at(i).stop.record(stream_);
    pool_[i].open = false;
  }
  // Waits for the recorded phases and adds them to `timer` (PhaseClock::device), then resets.
  void flush(::gpudm::PhaseTimer& timer) {
    for (std::size_t i = 0; i < used_; ++i) {
      if (pool_[i].open) throw ::gpudm::Error("DevicePhases::flush with phase '" + pool_[i].name + "' still open");
      timer.add(pool_[i].name, elapsed_seconds(pool_[i].start, pool_[i].stop), ::gpudm::PhaseClock::device);
    }
    used_ = 0;
  }
  // Drops recorded phases (e.g. after a warm-up run).
  void discard() { used_ = 0; }
  bool enabled() const { return enabled_; }

 private:
  struct Entry {
    std::string name;
    Event start, stop;
    bool open = false;
  };
  cudaStream_t stream_;
  bool enabled_;
  std::vector<Entry> pool_;
  std::size_t used_ = 0;
};

}  // namespace gpudm::backend::cuda
