#pragma once
// A prepared classification dataset on one device, for every fused rule kernel (the rule
// engine's and pittsburgh's decision-list kernel): the f32 columns (upload_dataset) and, when
// the layout allows, the ranked fp16 codes two rows per word (algorithms/rules/ranked.hpp) with
// every column's sorted distinct values, which the threshold rewrite (launch_rewrite_ranked)
// searches. The layout is decided once per dataset on the host (choose_layout); every device of
// a split uploads the same one.
#include <memory>
#include <string>

#include "algorithms/core/dataset.hpp"
#include "algorithms/rules/evaluator.hpp"
#include "algorithms/rules/ranked.hpp"
#include "backends/cuda/common/buffer.cuh"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/common/stream.cuh"

namespace gpudm::backend::cuda::rules_kernels {

struct RankedLayout {
  ::gpudm::rules::RankedColumns ranked;  // codes empty when the packed layout is not used
  bool packed = false;
  std::string reason;  // why not packed ("features \"f32\" requested", too many distinct values, ...)
};
// `who` names the caller in the error thrown when "f16x2" is requested and the data refuse it.
RankedLayout choose_layout(const ::gpudm::Dataset& data, ::gpudm::rules::Features requested, const std::string& who);

// One device's copy. The stream is declared before the buffers (they are freed first).
struct RuleDeviceData {
  int device = 0;
  Stream stream;
  DeviceDataset data;
  DeviceBuffer<std::uint32_t> features16, rank_begin;  // the packed layout, when used
  DeviceBuffer<float> rank_values;
  bool packed = false;

  // Makes `device` current (the stream belongs to it), uploads `d` and the layout, synchronises.
  static std::unique_ptr<RuleDeviceData> upload(int device, const ::gpudm::Dataset& d, const RankedLayout& layout);

 private:
  explicit RuleDeviceData(int dev) : device(dev) {}
};

}  // namespace gpudm::backend::cuda::rules_kernels
