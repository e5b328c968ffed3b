// What both paths share: phase marks, the memory guard.
#include <algorithm>
#include <string>

#include "algorithms/core/error.hpp"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/paths.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

void PhaseMarks::record(Event& e, cudaStream_t s, bool capture) {
  if (capture) GPUDM_CUDA_CHECK(cudaEventRecordWithFlags(e.get(), s, cudaEventRecordExternal));
  else e.record(s);
}

void PhaseMarks::begin(const char* name, cudaStream_t s, bool capture) {
  if (open_) throw ::gpudm::Error(std::string("gmt/cuda: phase '") + name + "' begun inside another");
  if (used_ == marks_.size()) marks_.emplace_back();
  Mark& m = marks_[used_];
  m.name = name;
  record(m.start, s, capture);
  open_ = true;
}

void PhaseMarks::end(cudaStream_t s, bool capture) {
  if (!open_) throw ::gpudm::Error("gmt/cuda: phase end without begin");
  record(marks_[used_].stop, s, capture);
  ++used_;
  open_ = false;
}

void PhaseMarks::flush(::gpudm::PhaseTimer& timer) const {
  if (open_) throw ::gpudm::Error("gmt/cuda: phases flushed with one still open");
  for (std::size_t i = 0; i < used_; ++i)
    timer.add(marks_[i].name, elapsed_seconds(marks_[i].start, marks_[i].stop), ::gpudm::PhaseClock::device);
}

void MemoryGuard::take(std::size_t more, const std::string& what) {
  std::size_t free_b = 0, total_b = 0;
  GPUDM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  double avail = static_cast<double>(free_b);
  if (limit_ > 0) avail = std::min(avail, std::max(0.0, limit_ - static_cast<double>(held_)));
  if (static_cast<double>(more) > avail) {
    const std::string cap = limit_ > 0 ? " (device_memory_limit " + std::to_string(static_cast<long long>(limit_)) + " bytes, " +
                                             std::to_string(held_) + " held)"
                                       : "";
    throw ::gpudm::Unavailable("gmt/cuda: " + what + " needs " + std::to_string(more) + " bytes of device memory, " +
                               std::to_string(static_cast<long long>(avail)) + " free" + cap);
  }
  held_ += more;
}

}  // namespace gpudm::backend::cuda::gmt_cuda
