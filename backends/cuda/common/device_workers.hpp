#pragma once
// Persistent host threads for multi-GPU work: the pool of algorithms/core/host_workers.hpp.
#include "algorithms/core/host_workers.hpp"

namespace gpudm::backend::cuda {
using DeviceWorkers = ::gpudm::HostWorkers;
using ::gpudm::OneShotBarrier;
}  // namespace gpudm::backend::cuda
