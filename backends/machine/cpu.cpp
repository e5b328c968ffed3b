// CPU facts (model, cores, host name) for the results' environment.
#include "algorithms/core/machine.hpp"

#include <unistd.h>

#include <fstream>
#include <thread>

namespace gpudm::machine {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      if (p != std::string::npos) return line.substr(p + 2);
    }
  }
  return "unknown";
}

int logical_cores() { return static_cast<int>(std::thread::hardware_concurrency()); }

nlohmann::ordered_json environment() {
  nlohmann::ordered_json e;
  e["cpu_model"] = cpu_model();
  e["cpu_cores"] = logical_cores();
  e["openmp_threads"] = openmp_max_threads();
  e["devices"] = describe_gpus();
  if (e["devices"].empty()) e["devices_unavailable_reason"] = gpu_unavailable_reason();
  return e;
}

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace gpudm::machine
