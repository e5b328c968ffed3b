#pragma once
// Host CPU facts for the results' environment (model name from /proc/cpuinfo, core count).
#include <string>

namespace gpudm::cpu_info {
std::string model_name();
int logical_cores();
std::string hostname();
}  // namespace gpudm::cpu_info
