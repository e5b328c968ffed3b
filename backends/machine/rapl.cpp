// CPU package energy through Linux RAPL and the TDP table of the Pittsburgh paper's power method.
#include "algorithms/core/machine.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>

namespace gpudm::machine {

namespace {
bool read_number(const std::string& path, double& v) {
  std::ifstream in(path);
  return static_cast<bool>(in >> v);
}
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

CpuTdp cpu_tdp_from_model() {
  CpuTdp t;
  t.model = cpu_model();
  // Vendor TDPs (per package) of server CPUs found on H100/H200 hosts.
  struct Known {
    const char* key;
    double watts;
    int cores;
  };
  static const Known known[] = {{"8480", 350, 56},  {"8470", 350, 52},  {"8468", 350, 48}, {"8462Y", 300, 32},
                                {"8460Y", 300, 40}, {"8458P", 350, 44}, {"6448Y", 225, 32}, {"9654", 360, 96},
                                {"9554", 360, 64},  {"9474F", 360, 48}, {"9454", 290, 48}, {"9334", 210, 32},
                                {"7763", 280, 64},  {"7713", 225, 64},  {"7543", 225, 32}, {"8592", 350, 64},
                                {"8580", 350, 60},  {"6548Y", 250, 32}, {"E5645", 80, 6}};
  for (const auto& k : known)
    if (t.model.find(k.key) != std::string::npos) {
      t.watts = k.watts;
      t.cores = k.cores;
      break;
    }
  return t;
}

CpuEnergyMeter::CpuEnergyMeter() {
  namespace fs = std::filesystem;
  const fs::path root = "/sys/class/powercap";
  std::error_code ec;
  if (!fs::exists(root, ec)) {
    reason_ = "RAPL not exposed (/sys/class/powercap missing)";
    return;
  }
  for (int pkg = 0; pkg < 16; ++pkg) {
    const fs::path dir = root / ("intel-rapl:" + std::to_string(pkg));
    if (!fs::exists(dir, ec)) break;
    double v = 0, m = 0;
    if (read_number((dir / "energy_uj").string(), v)) {
      paths_.push_back((dir / "energy_uj").string());
      if (!read_number((dir / "max_energy_range_uj").string(), m)) m = 0;
      max_uj_.push_back(m);
    } else {
      reason_ = "RAPL energy_uj not readable (permissions)";
    }
  }
  if (paths_.empty() && reason_.empty()) reason_ = "no RAPL package domains found";
}

void CpuEnergyMeter::start() {
  start_uj_.assign(paths_.size(), 0);
  for (std::size_t i = 0; i < paths_.size(); ++i) read_number(paths_[i], start_uj_[i]);
  t0_ = now_s();
}

EnergyReading CpuEnergyMeter::stop() {
  EnergyReading out;
  if (paths_.empty()) {
    out.reason = reason_;
    return out;
  }
  const double secs = now_s() - t0_;
  double uj = 0;
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    double v = 0;
    read_number(paths_[i], v);
    double d = v - start_uj_[i];
    if (d < 0 && max_uj_[i] > 0) d += max_uj_[i];  // counter wrapped
    uj += d;
  }
  out.available = true;
  out.method = "rapl_package";
  out.sources = static_cast<int>(paths_.size());
  out.seconds = secs;
  out.joules = uj * 1e-6;
  out.mean_watts = secs > 0 ? out.joules / secs : 0.0;
  return out;
}

}  // namespace gpudm::machine
