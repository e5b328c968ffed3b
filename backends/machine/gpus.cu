#include <cuda_runtime.h>

#include "algorithms/core/machine.hpp"

namespace gpudm::machine {

int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::string gpu_unavailable_reason() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA device: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  }
  return n > 0 ? "" : "no CUDA device present";
}

nlohmann::ordered_json describe_gpus() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const int n = gpu_count();
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    int clock_khz = 0, mem_clock_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, i);
    cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, i);
    nlohmann::ordered_json d;
    d["index"] = i;
    d["name"] = p.name;
    d["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
    d["sm_count"] = p.multiProcessorCount;
    d["memory_bytes"] = p.totalGlobalMem;
    d["l2_bytes"] = p.l2CacheSize;
    d["memory_bus_bits"] = p.memoryBusWidth;
    d["sm_clock_mhz"] = clock_khz / 1000;
    d["memory_clock_mhz"] = mem_clock_khz / 1000;
    d["pci_bus_id"] = gpu_pci_bus_id(i);
    d["driver_version"] = driver;
    d["runtime_version"] = runtime;
    out.push_back(d);
  }
  return out;
}

std::string gpu_pci_bus_id(int device) {
  char buf[32] = {0};
  if (device < 0 || cudaDeviceGetPCIBusId(buf, sizeof buf, device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return buf;
}

}  // namespace gpudm::machine
