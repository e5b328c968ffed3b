// NVML through dlopen: the few entry points we need are declared here with NVML's C ABI
// (nvml.h is not part of the CUDA toolkit install on every machine).
#include "algorithms/core/machine.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>


namespace gpudm::machine {

namespace {

using nvmlReturn_t = int;  // NVML_SUCCESS == 0
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kSuccess = 0;

struct Api {
  void* handle = nullptr;
  std::string path;
  std::string reason;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*device_by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*device_by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;                  // mW
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;       // mJ

  std::string err(nvmlReturn_t r) const {
    return error_string ? std::string(error_string(r)) : "NVML error " + std::to_string(r);
  }
};

template <class F>
bool load_symbol(void* h, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(h, name));
  return out != nullptr;
}

Api& api() {
  static Api a = [] {
    Api x;
    // The soname first (driver installs), then where the GPU machine's container mounts it.
    std::vector<std::string> candidates = {"libnvidia-ml.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
                                           "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"};
    if (const char* env = std::getenv("GPUDM_NVML_LIBRARY")) candidates.insert(candidates.begin(), env);
    std::string errors;
    for (const auto& c : candidates) {
      x.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (x.handle) {
        x.path = c;
        break;
      }
      const char* e = dlerror();
      if (errors.empty() && e) errors = e;
    }
    if (!x.handle) {
      x.reason = "NVML library not found (libnvidia-ml.so.1: " + errors + ")";
      return x;
    }
    bool ok = load_symbol(x.handle, "nvmlInit_v2", x.init) && load_symbol(x.handle, "nvmlShutdown", x.shutdown) &&
              load_symbol(x.handle, "nvmlDeviceGetHandleByIndex_v2", x.device_by_index) &&
              load_symbol(x.handle, "nvmlDeviceGetPowerUsage", x.power_usage);
    load_symbol(x.handle, "nvmlErrorString", x.error_string);
    load_symbol(x.handle, "nvmlDeviceGetHandleByPciBusId_v2", x.device_by_pci);
    load_symbol(x.handle, "nvmlDeviceGetTotalEnergyConsumption", x.total_energy);
    if (!ok) {
      x.reason = "NVML library " + x.path + " lacks nvmlInit_v2/nvmlDeviceGetPowerUsage";
      x.init = nullptr;
      return x;
    }
    const nvmlReturn_t r = x.init();
    if (r != kSuccess) {
      x.reason = "nvmlInit_v2 failed: " + x.err(r);
      x.init = nullptr;
    }
    // Never dlclose/nvmlShutdown: samplers may outlive static destruction order guarantees.
    return x;
  }();
  return a;
}

}  // namespace

bool nvml_available() { return api().init != nullptr; }
std::string nvml_unavailable_reason() { return nvml_available() ? "" : api().reason; }
std::string nvml_library_path() { return api().path; }

nlohmann::ordered_json EnergyReading::to_json() const {
  nlohmann::ordered_json j;
  j["available"] = available;
  if (!available) {
    j["reason"] = reason;
    return j;
  }
  j["method"] = method;
  j["seconds"] = seconds;
  j["joules"] = joules;
  j["mean_watts"] = mean_watts;
  j["max_watts"] = max_watts;
  j["integrated_joules"] = integrated_joules;
  j["samples"] = samples;
  j["sources"] = sources;
  return j;
}

EnergyReading EnergyReading::sum(const std::vector<EnergyReading>& parts) {
  EnergyReading out;
  if (parts.empty()) {
    out.reason = "no meter";
    return out;
  }
  out.available = true;
  for (const auto& r : parts) {
    if (!r.available) return r;
    if (out.method.empty()) out.method = r.method;
    else if (out.method != r.method) out.method = "mixed";
    out.seconds = std::max(out.seconds, r.seconds);
    out.joules += r.joules;
    out.max_watts += r.max_watts;
    out.integrated_joules += r.integrated_joules;
    out.samples += r.samples;
    out.sources += r.sources;
  }
  out.mean_watts = out.seconds > 0 ? out.joules / out.seconds : 0.0;
  return out;
}

struct GpuEnergyMeter::Impl {
  nvmlDevice_t dev = nullptr;
  std::string reason;
  bool has_counter = false;
  std::chrono::milliseconds interval;

  std::mutex mu;
  std::condition_variable cv;
  std::thread thread;
  bool running = false;

  // Region state (guarded by mu while the thread runs).
  std::chrono::steady_clock::time_point t0, last_t;
  double last_w = -1.0, integrated = 0.0, max_w = 0.0;
  int samples = 0;
  unsigned long long e0 = 0;

  double read_watts() const {
    unsigned mw = 0;
    if (api().power_usage(dev, &mw) != kSuccess) return -1.0;
    return mw * 1e-3;
  }
  void sample(std::chrono::steady_clock::time_point now) {
    const double w = read_watts();
    if (w < 0) return;
    if (last_w >= 0) integrated += 0.5 * (w + last_w) * std::chrono::duration<double>(now - last_t).count();
    last_w = w;
    last_t = now;
    max_w = std::max(max_w, w);
    ++samples;
  }
  void loop() {
    std::unique_lock<std::mutex> lock(mu);
    while (running) {
      cv.wait_for(lock, interval, [this] { return !running; });
      if (!running) break;
      sample(std::chrono::steady_clock::now());
    }
  }
  void join() {
    {
      std::lock_guard<std::mutex> lock(mu);
      running = false;
    }
    cv.notify_all();
    if (thread.joinable()) thread.join();
  }
};

GpuEnergyMeter::GpuEnergyMeter(int cuda_device, std::chrono::milliseconds sample_interval) : impl_(new Impl) {
  impl_->interval = sample_interval;
  if (!nvml_available()) {
    impl_->reason = nvml_unavailable_reason();
    return;
  }
  const Api& a = api();
  nvmlReturn_t r = -1;
  const std::string bus = gpu_pci_bus_id(cuda_device);
  if (!bus.empty() && a.device_by_pci) r = a.device_by_pci(bus.c_str(), &impl_->dev);
  if (r != kSuccess) r = a.device_by_index(static_cast<unsigned>(cuda_device < 0 ? 0 : cuda_device), &impl_->dev);
  if (r != kSuccess) {
    impl_->reason = "NVML has no device for CUDA device " + std::to_string(cuda_device) + ": " + a.err(r);
    impl_->dev = nullptr;
    return;
  }
  unsigned long long e = 0;
  impl_->has_counter = a.total_energy && a.total_energy(impl_->dev, &e) == kSuccess;
  if (impl_->read_watts() < 0 && !impl_->has_counter) {
    impl_->reason = "NVML device reports neither power usage nor total energy (not supported on this GPU)";
    impl_->dev = nullptr;
  }
}

GpuEnergyMeter::~GpuEnergyMeter() { impl_->join(); }

bool GpuEnergyMeter::available() const { return impl_->dev != nullptr; }
const std::string& GpuEnergyMeter::reason() const { return impl_->reason; }

double GpuEnergyMeter::power_watts() const { return available() ? impl_->read_watts() : -1.0; }

void GpuEnergyMeter::start() {
  if (!available()) return;
  impl_->join();
  Impl& m = *impl_;
  m.integrated = 0.0;
  m.max_w = 0.0;
  m.samples = 0;
  m.last_w = -1.0;
  if (m.has_counter) api().total_energy(m.dev, &m.e0);
  m.t0 = std::chrono::steady_clock::now();
  m.sample(m.t0);
  m.running = true;
  m.thread = std::thread([&m] { m.loop(); });
}

EnergyReading GpuEnergyMeter::stop() {
  EnergyReading out;
  if (!available()) {
    out.reason = impl_->reason;
    return out;
  }
  Impl& m = *impl_;
  const bool was_running = m.thread.joinable();
  m.join();
  if (!was_running) {
    out.reason = "GpuEnergyMeter::stop without start";
    return out;
  }
  const auto t1 = std::chrono::steady_clock::now();
  m.sample(t1);
  out.available = true;
  out.seconds = std::chrono::duration<double>(t1 - m.t0).count();
  out.integrated_joules = m.integrated;
  out.max_watts = m.max_w;
  out.samples = m.samples;
  unsigned long long e1 = 0;
  if (m.has_counter && api().total_energy(m.dev, &e1) == kSuccess && e1 >= m.e0) {
    out.method = "energy_counter";
    out.joules = static_cast<double>(e1 - m.e0) * 1e-3;
  } else {
    out.method = "power_integration";
    out.joules = m.integrated;
  }
  out.mean_watts = out.seconds > 0 ? out.joules / out.seconds : 0.0;
  out.sources = 1;
  return out;
}

}  // namespace gpudm::machine
