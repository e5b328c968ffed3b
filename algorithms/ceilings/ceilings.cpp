#include "algorithms/ceilings/ceilings.hpp"

#include <cmath>

#include "algorithms/core/error.hpp"

namespace gpudm::ceilings {

const std::vector<Probe>& all_probes() {
  static const std::vector<Probe> p = {Probe::copy_bandwidth,      Probe::fma_rate,       Probe::popcount_rate,
                                       Probe::h2d_bandwidth,       Probe::d2h_bandwidth,  Probe::launch_latency,
                                       Probe::launch_sync_latency, Probe::graph_launch_latency};
  return p;
}

const char* to_string(Probe p) {
  switch (p) {
    case Probe::copy_bandwidth: return "copy_bandwidth";
    case Probe::fma_rate: return "fma_rate";
    case Probe::popcount_rate: return "popcount_rate";
    case Probe::h2d_bandwidth: return "h2d_bandwidth";
    case Probe::d2h_bandwidth: return "d2h_bandwidth";
    case Probe::launch_latency: return "launch_latency";
    case Probe::launch_sync_latency: return "launch_sync_latency";
    case Probe::graph_launch_latency: return "graph_launch_latency";
  }
  return "?";
}

Probe parse_probe(const std::string& name) {
  std::string valid;
  for (Probe p : all_probes()) {
    if (name == to_string(p)) return p;
    valid += valid.empty() ? "" : ", ";
    valid += to_string(p);
  }
  throw Error("ceilings: unknown probe '" + name + "' (valid: " + valid + ")");
}

WorkUnit work_unit(Probe p) {
  switch (p) {
    case Probe::copy_bandwidth:
    case Probe::h2d_bandwidth:
    case Probe::d2h_bandwidth: return WorkUnit::bytes;
    case Probe::fma_rate: return WorkUnit::flops;
    case Probe::popcount_rate: return WorkUnit::ops;
    case Probe::launch_latency:
    case Probe::launch_sync_latency:
    case Probe::graph_launch_latency: return WorkUnit::launches;
  }
  return WorkUnit::ops;
}

const char* to_string(WorkUnit u) {
  switch (u) {
    case WorkUnit::bytes: return "bytes";
    case WorkUnit::flops: return "flops";
    case WorkUnit::ops: return "ops";
    case WorkUnit::launches: return "launches";
  }
  return "?";
}

const char* metric_name(Probe p) {
  switch (work_unit(p)) {
    case WorkUnit::bytes: return "bytes_per_s";
    case WorkUnit::flops: return "flops_per_s";
    case WorkUnit::ops: return "ops_per_s";
    case WorkUnit::launches: return "seconds_per_launch";
  }
  return "?";
}

float fma_reference(float x0, std::size_t iterations, bool fused) {
  float x = x0;
  if (fused) {
    for (std::size_t i = 0; i < iterations; ++i) x = std::fma(x, kFmaMul, kFmaAdd);
  } else {
    for (std::size_t i = 0; i < iterations; ++i) {
      // volatile keeps the product rounded to float before the add (no contraction).
      volatile float p = x * kFmaMul;
      x = p + kFmaAdd;
    }
  }
  return x;
}

}  // namespace gpudm::ceilings
