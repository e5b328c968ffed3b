#pragma once
// A population split over devices, one host thread each: what the rule engine
// (backends/cuda/rules) and pittsburgh's rule-set evaluator (backends/cuda/pittsburgh) share for
// their multi-GPU mode (the GP paper's and the Pittsburgh paper's 2-GPU columns).
//   resolve_devices   the device of every slice from the options ("devices": N = 0..N-1, or an
//                     explicit "device_ids" list that may repeat a device: [0, 0] runs the
//                     two-slice code path on one GPU, so it is testable without two GPUs);
//   balanced_cuts     contiguous slices of about equal work, none empty;
//   SplitRunner       persistent host threads (DeviceWorkers) running one job per slice, each
//                     with its own PhaseTimer, merged as the critical path (slowest per phase).
// CUDA-free (C++17): the CUDA translation units include it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/error.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "backends/cuda/common/device_workers.hpp"

namespace gpudm::backend::cuda {

// `devices` >= 1 slices on devices 0 .. devices - 1, unless `ids` is given: one slice per entry
// (`devices` must then be 1 or ids.size()). Every device must exist (< present): a missing one is
// gpudm::Unavailable (a run on a machine with fewer GPUs skips, it does not fail).
inline std::vector<int> resolve_devices(int devices, const std::vector<int>& ids, int present, const std::string& who) {
  if (devices < 1) throw Error(who + ": devices must be >= 1");
  std::vector<int> out = ids;
  if (out.empty()) {
    for (int d = 0; d < devices; ++d) out.push_back(d);
  } else if (devices != 1 && static_cast<std::size_t>(devices) != ids.size()) {
    throw Error(who + ": devices " + std::to_string(devices) + " and device_ids (" + std::to_string(ids.size()) +
                " entries) disagree; give one of them");
  }
  for (int d : out) {
    if (d < 0) throw Error(who + ": device index " + std::to_string(d) + " is negative");
    if (d >= present)
      throw Unavailable(who + ": device " + std::to_string(d) + " requested, " + std::to_string(present) + " present");
  }
  return out;
}

// Cuts [0, n) into `parts` contiguous, non-empty slices of about equal work; `prefix` holds the
// work prefix sums (n + 1 entries, prefix[0] = 0). Returns parts + 1 boundaries; parts <= n.
inline std::vector<std::size_t> balanced_cuts(const std::vector<std::uint64_t>& prefix, std::size_t parts) {
  const std::size_t n = prefix.size() - 1;
  std::vector<std::size_t> cut(parts + 1, n);
  cut[0] = 0;
  for (std::size_t d = 1; d < parts; ++d) {
    const std::uint64_t target = prefix.back() * d / parts;
    const std::size_t i = static_cast<std::size_t>(std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin());
    cut[d] = std::clamp<std::size_t>(i, cut[d - 1] + 1, n - (parts - d));
  }
  return cut;
}

// Runs job(slice, timer) for slices 0 .. n-1: slice 0 on the calling thread, the others on
// persistent workers (created on first use, as many as the largest n seen less one). Each slice
// records into its own PhaseTimer; `timer` receives the slowest of every phase (the critical
// path). The first exception by slice order is rethrown after every slice has finished.
class SplitRunner {
 public:
  void run(std::size_t n, const std::function<void(std::size_t, PhaseTimer&)>& job, PhaseTimer& timer) {
    if (n == 0) return;
    if (!workers_ || workers_->workers() + 1 < n) workers_ = std::make_unique<DeviceWorkers>(n - 1);
    timers_.assign(n, PhaseTimer());
    for (auto& t : timers_) t.set_enabled(timer.enabled());
    const std::function<void(std::size_t)> f = [&](std::size_t d) { job(d, timers_[d]); };
    workers_->run(f, n);
    timer.merge(PhaseTimer::slowest(timers_));
  }

 private:
  std::unique_ptr<DeviceWorkers> workers_;
  std::vector<PhaseTimer> timers_;
};

}  // namespace gpudm::backend::cuda
