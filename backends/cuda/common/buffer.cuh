#pragma once
// Device and pinned host memory, only through move-only RAII buffers.
//
//   DeviceBuffer<float> d(n);              // cudaMalloc (synchronous, device-wide)
//   DeviceBuffer<float> d(n, stream);      // cudaMallocAsync: stream-ordered, freed on that stream
//   d.upload(h_vec); d.upload_async(h_ptr, n, stream); d.download(h_ptr, n); d.to_host();
//   d.memset(0); d.memset_async(0, stream);
//   PinnedBuffer<float> h(n);              // cudaMallocHost, for truly asynchronous copies
//
// Sizes are in elements of T; offsets too. Copies are checked against the buffer's size.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cuda/common/error.cuh"

namespace gpudm::backend::cuda {

namespace detail {
inline void check_range(std::size_t offset, std::size_t n, std::size_t size, const char* what) {
  if (offset > size || n > size - offset)
    throw ::gpudm::Error(std::string(what) + ": range [" + std::to_string(offset) + ", " +
                         std::to_string(offset + n) + ") outside a buffer of " + std::to_string(size) +
                         " elements");
}
}  // namespace detail

template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable<T>::value, "DeviceBuffer holds trivially copyable types");

 public:
  using value_type = T;

  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) { allocate(n, nullptr, false); }
  // Stream-ordered allocation (pool-backed, cheap to repeat); the memory is usable by work
  // queued on `stream` after this point and is freed on `stream` when the buffer dies.
  DeviceBuffer(std::size_t n, cudaStream_t stream) { allocate(n, stream, true); }
  // Allocates and uploads synchronously.
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }

  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)), stream_(std::exchange(o.stream_, nullptr)),
        async_(std::exchange(o.async_, false)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
      stream_ = std::exchange(o.stream_, nullptr);
      async_ = std::exchange(o.async_, false);
    }
    return *this;
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }

  // Sets the size to n; reallocates (contents lost) only when n exceeds the capacity.
  void resize(std::size_t n) {
    if (n > capacity_) {
      const cudaStream_t s = stream_;
      const bool a = async_;
      release();
      allocate(n, s, a);
    }
    size_ = n;
  }

  // ---- synchronous copies (complete when the call returns) ----
  void upload(const T* host, std::size_t n, std::size_t offset = 0) {
    detail::check_range(offset, n, size_, "DeviceBuffer::upload");
    if (n) GPUDM_CUDA_CHECK(cudaMemcpy(ptr_ + offset, host, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  void upload(const std::vector<T>& host, std::size_t offset = 0) { upload(host.data(), host.size(), offset); }
  void download(T* host, std::size_t n, std::size_t offset = 0) const {
    detail::check_range(offset, n, size_, "DeviceBuffer::download");
    if (n) GPUDM_CUDA_CHECK(cudaMemcpy(host, ptr_ + offset, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  std::vector<T> to_host() const {
    std::vector<T> h(size_);
    download(h.data(), size_);
    return h;
  }
  void memset(int byte_value = 0) {
    if (size_) GPUDM_CUDA_CHECK(cudaMemset(ptr_, byte_value, bytes()));
  }

  // ---- asynchronous copies on a stream (truly async only from pinned host memory) ----
  void upload_async(const T* host, std::size_t n, cudaStream_t stream, std::size_t offset = 0) {
    detail::check_range(offset, n, size_, "DeviceBuffer::upload_async");
    if (n)
      GPUDM_CUDA_CHECK(cudaMemcpyAsync(ptr_ + offset, host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  void download_async(T* host, std::size_t n, cudaStream_t stream, std::size_t offset = 0) const {
    detail::check_range(offset, n, size_, "DeviceBuffer::download_async");
    if (n)
      GPUDM_CUDA_CHECK(cudaMemcpyAsync(host, ptr_ + offset, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
  }
  void copy_from_async(const DeviceBuffer& src, cudaStream_t stream) {
    detail::check_range(0, src.size(), size_, "DeviceBuffer::copy_from_async");
    if (src.size())
      GPUDM_CUDA_CHECK(cudaMemcpyAsync(ptr_, src.data(), src.bytes(), cudaMemcpyDeviceToDevice, stream));
  }
  void memset_async(int byte_value, cudaStream_t stream) {
    if (size_) GPUDM_CUDA_CHECK(cudaMemsetAsync(ptr_, byte_value, bytes(), stream));
  }

 private:
  void allocate(std::size_t n, cudaStream_t stream, bool async) {
    stream_ = stream;
    async_ = async;
    size_ = capacity_ = n;
    if (n == 0) return;
    void* p = nullptr;
    if (async) GPUDM_CUDA_CHECK(cudaMallocAsync(&p, n * sizeof(T), stream));
    else GPUDM_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
    ptr_ = static_cast<T*>(p);
  }
  void release() noexcept {
    if (ptr_) {
      if (async_) GPUDM_CUDA_CHECK_NOTHROW(cudaFreeAsync(ptr_, stream_));
      else GPUDM_CUDA_CHECK_NOTHROW(cudaFree(ptr_));
    }
    ptr_ = nullptr;
    size_ = capacity_ = 0;
  }

  T* ptr_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
  cudaStream_t stream_ = nullptr;
  bool async_ = false;
};

// Page-locked host memory: the only host memory from which cudaMemcpyAsync is asynchronous,
// and the memory the H2D/D2H bandwidth ceilings are measured from.
template <class T>
class PinnedBuffer {
  static_assert(std::is_trivially_copyable<T>::value, "PinnedBuffer holds trivially copyable types");

 public:
  using value_type = T;
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t n) : size_(n) {
    if (n) {
      void* p = nullptr;
      GPUDM_CUDA_CHECK(cudaMallocHost(&p, n * sizeof(T)));
      ptr_ = static_cast<T*>(p);
    }
  }
  ~PinnedBuffer() {
    if (ptr_) GPUDM_CUDA_CHECK_NOTHROW(cudaFreeHost(ptr_));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) GPUDM_CUDA_CHECK_NOTHROW(cudaFreeHost(ptr_));
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return ptr_[i]; }
  const T& operator[](std::size_t i) const { return ptr_[i]; }
  T* begin() { return ptr_; }
  T* end() { return ptr_ + size_; }
  const T* begin() const { return ptr_; }
  const T* end() const { return ptr_ + size_; }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace gpudm::backend::cuda
