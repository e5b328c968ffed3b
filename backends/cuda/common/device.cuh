#pragma once
// Device selection and the properties launch policies need (SM count, L2, shared memory).
//
//   const int dev = require_device();         // throws gpudm::Unavailable when there is no GPU
//   const DeviceProps& p = device_props(dev);  // cached per device
//   int blocks = p.sm_count * 4;
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace gpudm::backend::cuda {

struct DeviceProps {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int regs_per_sm = 0;
  std::size_t l2_bytes = 0;
  std::size_t persisting_l2_max_bytes = 0;
  std::size_t smem_per_block = 0;        // default limit per block
  std::size_t smem_per_block_optin = 0;  // with cudaFuncAttributeMaxDynamicSharedMemorySize
  std::size_t smem_per_sm = 0;
  std::size_t global_memory_bytes = 0;
  int memory_bus_bits = 0;
  int sm_clock_khz = 0;
  int memory_clock_khz = 0;
  bool concurrent_managed_access = false;
  bool memory_pools_supported = false;
  // Theoretical DRAM bandwidth from the memory clock and bus width (bytes/s; DDR: x2).
  double peak_dram_bytes_per_s() const {
    return 2.0 * static_cast<double>(memory_clock_khz) * 1e3 * (memory_bus_bits / 8.0);
  }
};

// Number of usable devices (0 without driver/GPU; never throws).
int device_count() noexcept;
// Current device; throws gpudm::Unavailable (with the driver's reason) when there is no device.
int require_device();
// Makes `device` current for this host thread (checked).
void set_device(int device);
int current_device();
// Properties of `device` (default: current), queried once and cached (thread-safe).
const DeviceProps& device_props(int device = -1);

// Lets `kernel` launch with up to `bytes` of dynamic shared memory on the current device
// (cudaFuncAttributeMaxDynamicSharedMemorySize). The attribute is the function's on that device,
// shared by every host thread: set to each launch's own size, a thread launching a larger shape
// could find it lowered by another thread between its set and its launch (cudaErrorInvalidValue;
// seen under compute-sanitizer memcheck in Pittsburgh's two-device split, whose halves launch the
// same kernel from two host threads with different sizes). So it only grows, under a lock: after
// this returns the attribute is >= bytes until the process ends. No-op at or below the default
// 48 KB a block.
void allow_dynamic_smem(const void* kernel, std::size_t bytes);
template <class K>
void allow_dynamic_smem(K* kernel, std::size_t bytes) {
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), bytes);
}

// Blocks per grid to cover n items with `block` threads, capped at `max_blocks`
// (grid-stride loops handle the rest).
inline unsigned grid_for(std::size_t n, unsigned block, std::size_t max_blocks = 1u << 30) {
  std::size_t g = (n + block - 1) / block;
  if (g > max_blocks) g = max_blocks;
  return static_cast<unsigned>(g == 0 ? 1 : g);
}

}  // namespace gpudm::backend::cuda
