#include "backends/sequential/cpu_info.hpp"

#include <unistd.h>

#include <fstream>
#include <thread>

namespace gpudm::cpu_info {

std::string model_name() {
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

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace gpudm::cpu_info
