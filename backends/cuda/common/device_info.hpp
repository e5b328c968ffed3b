#pragma once
// CUDA-free view of the machine's GPUs, for the results' environment block and for
// deciding whether a CUDA backend can run. Implemented in device_info.cu (CUDA builds)
// or device_info_nocuda.cpp (builds without CUDA: no devices, with the reason).
#include <string>

#include <nlohmann/json.hpp>

namespace gpudm::cuda_info {

// Number of usable CUDA devices (0 when none, when the driver is missing, or without CUDA).
int device_count();
// Why no device can be used ("" when device_count() > 0).
std::string unavailable_reason();
// [{name, sm_count, memory_bytes, driver, runtime, clocks...}] for every device.
nlohmann::ordered_json describe_devices();
// PCI bus id of CUDA device `device` ("0000:65:00.0"), "" when unknown or without CUDA;
// lets NVML (nvml.hpp) find the same GPU whatever CUDA_VISIBLE_DEVICES does to the order.
std::string pci_bus_id(int device);

}  // namespace gpudm::cuda_info
