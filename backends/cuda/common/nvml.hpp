#pragma once
// GPU power and energy over a measured region, through NVML loaded at run time with dlopen
// (no link-time dependency; libnvidia-ml ships with the driver, not the toolkit). CUDA-free:
// the runner and families' host code use it directly.
//
//   gpudm::nvml::EnergyMeter meter(cuda_device_index);   // never throws
//   meter.start();  ... measured region ...  EnergyReading r = meter.stop();
//   if (r.available) use r.joules, r.mean_watts; else report r.reason
//
// Energy comes from nvmlDeviceGetTotalEnergyConsumption (mJ counter, Volta+) when the device
// supports it, else from integrating nvmlDeviceGetPowerUsage samples (trapezoids) taken by a
// background thread every `sample_interval`. Both are reported when both exist; `method` says
// which one `joules` is. The counter and the power readings update every few tens of ms, so
// regions shorter than ~100 ms have large relative error: measure repetitions, not one call.
#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace gpudm::nvml {

struct EnergyReading {
  bool available = false;
  std::string reason;             // why not available
  std::string method;             // "energy_counter" | "power_integration"
  double seconds = 0.0;           // host wall clock of the region
  double joules = 0.0;
  double mean_watts = 0.0;        // joules / seconds
  double max_watts = 0.0;         // highest power sample (0 when no samples)
  double integrated_joules = 0.0; // from power samples (also when the counter is used)
  int samples = 0;                // power samples taken
  nlohmann::ordered_json to_json() const;
};

// Whether NVML could be loaded and initialised here; reason() says why not.
bool available();
std::string unavailable_reason();
// Path or soname that was loaded ("" when none).
std::string library_path();

class EnergyMeter {
 public:
  // `cuda_device`: CUDA device index; matched to the NVML device by PCI bus id when the CUDA
  // runtime is linked (CUDA_VISIBLE_DEVICES may reorder), else used as the NVML index.
  explicit EnergyMeter(int cuda_device = 0,
                       std::chrono::milliseconds sample_interval = std::chrono::milliseconds(10));
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  bool available() const;
  const std::string& reason() const;
  // Starts sampling; a second start() without stop() restarts the region.
  void start();
  // Stops sampling and returns the region's energy.
  EnergyReading stop();
  // Instantaneous power (watts), or a negative value when unavailable.
  double power_watts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpudm::nvml
