#pragma once
// Scratch memory for CUB's two-phase calls (first call asks for the size, second does the work).
// One TempStorage per evaluator, grown on demand and reused, so steady-state iterations
// allocate nothing:
//
//   TempStorage temp(stream);
//   cub_two_phase(temp, [&](void* p, std::size_t& bytes) {
//     return cub::DeviceRadixSort::SortPairs(p, bytes, keys_in, keys_out, vals_in, vals_out, n, 0, 32, stream);
//   });
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "backends/cuda/common/buffer.cuh"
#include "backends/cuda/common/error.cuh"

namespace gpudm::backend::cuda {

class TempStorage {
 public:
  TempStorage() = default;
  // Allocations are stream-ordered on `stream` (the evaluator's stream).
  explicit TempStorage(cudaStream_t stream) : stream_(stream), has_stream_(true) {}

  // Returns at least `bytes` of device scratch; grows by 1.5x to avoid repeated reallocation.
  void* reserve(std::size_t bytes) {
    if (bytes > buf_.size()) {
      const std::size_t grown = bytes + bytes / 2;
      buf_ = has_stream_ ? DeviceBuffer<std::byte>(grown, stream_) : DeviceBuffer<std::byte>(grown);
    }
    return buf_.data();
  }
  std::size_t capacity() const { return buf_.size(); }
  void* data() { return buf_.data(); }

 private:
  cudaStream_t stream_ = nullptr;
  bool has_stream_ = false;
  DeviceBuffer<std::byte> buf_;
};

// Runs a CUB-style call twice: with a null pointer to query the size, then with scratch from
// `temp`. `call(void* d_temp, std::size_t& bytes)` returns cudaError_t.
template <class Call>
void cub_two_phase(TempStorage& temp, Call&& call) {
  std::size_t bytes = 0;
  GPUDM_CUDA_CHECK(call(static_cast<void*>(nullptr), bytes));
  void* p = temp.reserve(bytes == 0 ? 1 : bytes);
  GPUDM_CUDA_CHECK(call(p, bytes));
}

}  // namespace gpudm::backend::cuda
