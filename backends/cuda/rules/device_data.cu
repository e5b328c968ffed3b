#include "backends/cuda/rules/device_data.cuh"

#include <algorithm>

#include "backends/cuda/common/device.cuh"

namespace gpudm::backend::cuda::rules_kernels {

namespace rl = ::gpudm::rules;

RankedLayout choose_layout(const Dataset& data, rl::Features requested, const std::string& who) {
  RankedLayout l;
  if (requested == rl::Features::f32) l.reason = "features \"f32\" requested";
  else l.ranked = rl::rank_columns(data);
  l.packed = !l.ranked.codes.empty();
  if (!l.packed && l.reason.empty()) l.reason = l.ranked.reason.empty() ? "empty dataset" : l.ranked.reason;
  if (!l.packed && requested == rl::Features::f16x2)
    throw Error(who + ": features \"f16x2\" requested for dataset '" + data.name() + "', but " + l.reason);
  return l;
}

std::unique_ptr<RuleDeviceData> RuleDeviceData::upload(int device, const Dataset& d, const RankedLayout& layout) {
  set_device(device);
  std::unique_ptr<RuleDeviceData> s(new RuleDeviceData(device));
  s->data = upload_dataset(d, s->stream);
  s->packed = layout.packed;
  if (layout.packed) {
    const auto& r = layout.ranked;
    s->features16.resize(r.codes.size() / 2);
    s->features16.upload(reinterpret_cast<const std::uint32_t*>(r.codes.data()), r.codes.size() / 2);
    s->rank_values.resize(std::max<std::size_t>(1, r.values.size()));
    if (!r.values.empty()) s->rank_values.upload(r.values);
    s->rank_begin.resize(r.begin.size());
    s->rank_begin.upload(r.begin);
  }
  s->stream.synchronize();
  return s;
}

}  // namespace gpudm::backend::cuda::rules_kernels
