#include "backends/cuda/common/device.cuh"

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "algorithms/core/error.hpp"
#include "algorithms/core/machine.hpp"
#include "backends/cuda/common/error.cuh"

namespace gpudm::backend::cuda {

int device_count() noexcept { return ::gpudm::machine::gpu_count(); }

int require_device() {
  if (device_count() == 0) throw ::gpudm::Unavailable(::gpudm::machine::gpu_unavailable_reason());
  return current_device();
}

void set_device(int device) {
  const int n = device_count();
  if (device < 0 || device >= n)
    throw ::gpudm::Error("CUDA device " + std::to_string(device) + " requested, but " + std::to_string(n) +
                         " device(s) are visible");
  GPUDM_CUDA_CHECK(cudaSetDevice(device));
}

int current_device() {
  int d = 0;
  GPUDM_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void allow_dynamic_smem(const void* kernel, std::size_t bytes) {
  if (bytes <= 48u * 1024u) return;  // (the default limit of every function)
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, std::size_t> set;  // (kernel, device) -> the attribute
  const int device = current_device();
  std::lock_guard<std::mutex> lock(mu);
  std::size_t& now = set[{kernel, device}];
  if (bytes <= now) return;
  GPUDM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  now = bytes;
}

const DeviceProps& device_props(int device) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<DeviceProps>> cache;
  if (device < 0) device = require_device();
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(device);
  if (it != cache.end()) return *it->second;

  cudaDeviceProp p{};
  GPUDM_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  auto attr = [device](cudaDeviceAttr a) {
    int v = 0;
    GPUDM_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
    return v;
  };
  auto d = std::make_unique<DeviceProps>();
  d->index = device;
  d->name = p.name;
  d->cc_major = p.major;
  d->cc_minor = p.minor;
  d->sm_count = p.multiProcessorCount;
  d->warp_size = p.warpSize;
  d->max_threads_per_block = p.maxThreadsPerBlock;
  d->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d->max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  d->regs_per_sm = p.regsPerMultiprocessor;
  d->l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d->persisting_l2_max_bytes = static_cast<std::size_t>(p.persistingL2CacheMaxSize);
  d->smem_per_block = p.sharedMemPerBlock;
  d->smem_per_block_optin = p.sharedMemPerBlockOptin;
  d->smem_per_sm = p.sharedMemPerMultiprocessor;
  d->global_memory_bytes = p.totalGlobalMem;
  d->memory_bus_bits = p.memoryBusWidth;
  d->sm_clock_khz = attr(cudaDevAttrClockRate);
  d->memory_clock_khz = attr(cudaDevAttrMemoryClockRate);
  d->concurrent_managed_access = attr(cudaDevAttrConcurrentManagedAccess) != 0;
  d->memory_pools_supported = attr(cudaDevAttrMemoryPoolsSupported) != 0;
  return *cache.emplace(device, std::move(d)).first->second;
}

}  // namespace gpudm::backend::cuda
