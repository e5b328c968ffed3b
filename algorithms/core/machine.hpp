#pragma once
// Machine information in one place, behind a CUDA-free header: the CPU (model, cores, host
// name, RAPL package energy, TDP table), OpenMP (threads), GPUs (count, properties, PCI bus ids)
// and NVML power/energy. The runner's environment block and the families' power figures use it;
// implemented in backends/machine/ (library gpudm_machine: gpus.cu in CUDA builds,
// gpus_nocuda.cpp otherwise; NVML through dlopen, so CPU-only builds keep power sampling).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpudm::machine {

// ---- CPU ----
std::string cpu_model();  // /proc/cpuinfo "model name", "unknown" when absent
int logical_cores();      // std::thread::hardware_concurrency()
std::string hostname();

// ---- OpenMP ----
// omp_get_max_threads() in OpenMP builds; 1 otherwise.
int openmp_max_threads();

// ---- GPUs ----
// Usable CUDA devices (0 when none, when the driver is missing, or in a build without CUDA).
int gpu_count();
// Why no GPU can be used ("" when gpu_count() > 0).
std::string gpu_unavailable_reason();
// [{index, name, compute_capability, sm_count, memory_bytes, ...}] for every device.
nlohmann::ordered_json describe_gpus();
// PCI bus id of CUDA device `device` ("0000:65:00.0"), "" when unknown or without CUDA; lets
// NVML find the same GPU whatever CUDA_VISIBLE_DEVICES does to the order.
std::string gpu_pci_bus_id(int device);

// The results' "environment" block: cpu_model, cpu_cores, openmp_threads, devices (+ the reason
// when there are none).
nlohmann::ordered_json environment();

// ---- energy ----
struct EnergyReading {
  bool available = false;
  std::string reason;              // why not available
  std::string method;              // "energy_counter" | "power_integration" (NVML), "rapl_package"
  double seconds = 0.0;            // host wall clock of the region
  double joules = 0.0;
  double mean_watts = 0.0;         // joules / seconds
  double max_watts = 0.0;          // highest power sample (0 when no samples)
  double integrated_joules = 0.0;  // NVML: from power samples (also when the counter is used)
  int samples = 0;                 // NVML power samples taken
  int sources = 0;                 // devices or CPU packages summed
  nlohmann::ordered_json to_json() const;
  // Sum of readings taken over the same region on several devices (available when all are).
  static EnergyReading sum(const std::vector<EnergyReading>& parts);
};

// Whether NVML could be loaded and initialised here; the reason when not; the library loaded.
bool nvml_available();
std::string nvml_unavailable_reason();
std::string nvml_library_path();

// GPU power and energy over a measured region through NVML (never throws):
//   GpuEnergyMeter meter(cuda_device); meter.start(); ...; EnergyReading r = meter.stop();
// Energy comes from nvmlDeviceGetTotalEnergyConsumption (mJ counter) when the device supports it,
// else from integrating nvmlDeviceGetPowerUsage samples taken by a background thread every
// `sample_interval`. Both update every few tens of ms: measure repetitions, not one call.
class GpuEnergyMeter {
 public:
  explicit GpuEnergyMeter(int cuda_device = 0,
                          std::chrono::milliseconds sample_interval = std::chrono::milliseconds(10));
  ~GpuEnergyMeter();
  GpuEnergyMeter(const GpuEnergyMeter&) = delete;
  GpuEnergyMeter& operator=(const GpuEnergyMeter&) = delete;

  bool available() const;
  const std::string& reason() const;
  void start();          // a second start() without stop() restarts the region
  EnergyReading stop();
  double power_watts() const;  // instantaneous, negative when unavailable

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// CPU package energy from Linux RAPL (/sys/class/powercap/intel-rapl:*/energy_uj) when readable.
class CpuEnergyMeter {
 public:
  CpuEnergyMeter();
  bool available() const { return !paths_.empty(); }
  const std::string& reason() const { return reason_; }
  void start();
  EnergyReading stop();

 private:
  std::vector<std::string> paths_;
  std::vector<double> start_uj_, max_uj_;
  double t0_ = 0;
  std::string reason_;
};

// The Pittsburgh paper's power method when RAPL is unreadable: TDP and physical cores of this
// CPU from a small built-in table keyed by the model name; watts = 0 when the model is unknown.
struct CpuTdp {
  std::string model;
  double watts = 0;
  int cores = 0;  // physical cores per package
};
CpuTdp cpu_tdp_from_model();

}  // namespace gpudm::machine
