#include "algorithms/pittsburgh/cpu_energy.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>

namespace gpudm::pittsburgh {

namespace {
bool read_number(const std::string& path, double& v) {
  std::ifstream in(path);
  return static_cast<bool>(in >> v);
}
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

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

nlohmann::ordered_json CpuEnergyMeter::stop() {
  if (paths_.empty()) return {{"available", false}, {"reason", reason_}};
  const double secs = now_s() - t0_;
  double uj = 0;
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    double v = 0;
    read_number(paths_[i], v);
    double d = v - start_uj_[i];
    if (d < 0 && max_uj_[i] > 0) d += max_uj_[i];  // counter wrapped
    uj += d;
  }
  const double j = uj * 1e-6;
  return {{"available", true}, {"method", "rapl_package"}, {"packages", paths_.size()}, {"seconds", secs},
          {"joules", j}, {"mean_watts", secs > 0 ? j / secs : 0.0}};
}

}  // namespace gpudm::pittsburgh
