#include "algorithms/core/machine.hpp"

#include "gpudm/build_info.hpp"

namespace gpudm::machine {
int gpu_count() { return 0; }
std::string gpu_unavailable_reason() { return std::string("CUDA backend not built: ") + build_info::kCudaMissingReason; }
nlohmann::ordered_json describe_gpus() { return nlohmann::ordered_json::array(); }
std::string gpu_pci_bus_id(int) { return ""; }
}  // namespace gpudm::machine
