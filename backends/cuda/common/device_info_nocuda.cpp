#include "backends/cuda/common/device_info.hpp"

#include "gpudm/build_info.hpp"

namespace gpudm::cuda_info {
int device_count() { return 0; }
std::string unavailable_reason() { return std::string("CUDA backend not built: ") + build_info::kCudaMissingReason; }
nlohmann::ordered_json describe_devices() { return nlohmann::ordered_json::array(); }
std::string pci_bus_id(int) { return ""; }
}  // namespace gpudm::cuda_info
