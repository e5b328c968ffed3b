#pragma once
// RAII CUDA stream, non-blocking with respect to the legacy default stream. Move-only.
// Owners declare their Stream before their DeviceBuffers so buffers (whose stream-ordered
// frees are enqueued on it) are destroyed first.
#include <cuda_runtime_api.h>

#include <utility>

#include "backends/cuda/common/error.cuh"

namespace gpudm::backend::cuda {

class Stream {
 public:
  Stream() { GPUDM_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  // priority: lower is higher priority (cudaDeviceGetStreamPriorityRange).
  explicit Stream(int priority) {
    GPUDM_CUDA_CHECK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, priority));
  }
  ~Stream() { reset(); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }

  cudaStream_t get() const { return s_; }
  operator cudaStream_t() const { return s_; }  // NOLINT: pass where a cudaStream_t is expected
  void synchronize() const { GPUDM_CUDA_CHECK(cudaStreamSynchronize(s_)); }
  // True when all work queued so far has completed (does not block).
  bool idle() const {
    const cudaError_t e = cudaStreamQuery(s_);
    if (e == cudaErrorNotReady) return false;
    GPUDM_CUDA_CHECK(e);
    return true;
  }

 private:
  void reset() noexcept {
    if (s_) {
      GPUDM_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(s_));
      GPUDM_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
      s_ = nullptr;
    }
  }
  cudaStream_t s_ = nullptr;
};

}  // namespace gpudm::backend::cuda
