#pragma once
// CPU package energy from Linux RAPL (/sys/class/powercap/intel-rapl:*/energy_uj), when
// readable; otherwise the caller falls back to the paper's method (TDP share per core used).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpudm::pittsburgh {

// The paper's method when RAPL is unreadable: TDP and physical cores of this CPU from a small
// built-in table keyed by the model name (/proc/cpuinfo); watts = 0 when the model is unknown.
struct CpuTdp {
  std::string model;
  double watts = 0;
  int cores = 0;  // physical cores per package
};
CpuTdp cpu_tdp_from_model();

class CpuEnergyMeter {
 public:
  CpuEnergyMeter();
  bool available() const { return !paths_.empty(); }
  const std::string& reason() const { return reason_; }
  void start();
  // {available, method: "rapl", joules, seconds, mean_watts, packages} or {available: false, reason}
  nlohmann::ordered_json stop();

 private:
  std::vector<std::string> paths_;
  std::vector<double> start_uj_, max_uj_;
  double t0_ = 0;
  std::string reason_;
};

}  // namespace gpudm::pittsburgh
