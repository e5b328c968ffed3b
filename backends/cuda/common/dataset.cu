#include "backends/cuda/common/dataset.cuh"

namespace gpudm::backend::cuda {

DeviceDataset upload_dataset(const ::gpudm::Dataset& d, cudaStream_t stream) {
  DeviceDataset out;
  out.rows_ = d.rows();
  out.padded_rows_ = d.padded_rows();
  out.cols_ = d.cols();
  out.num_classes_ = d.task() == ::gpudm::Task::classification ? d.num_classes() : 0;

  const auto& f = d.features();
  out.features_ = DeviceBuffer<float>(f.size(), stream);
  out.features_.upload_async(f.data(), f.size(), stream);
  if (d.has_missing()) {
    const auto& m = d.missing_mask();
    out.missing_ = DeviceBuffer<std::uint8_t>(m.size(), stream);
    out.missing_.upload_async(m.data(), m.size(), stream);
  }
  if (d.task() == ::gpudm::Task::classification) {
    const auto& y = d.labels();
    out.labels_ = DeviceBuffer<std::int32_t>(y.size(), stream);
    out.labels_.upload_async(y.data(), y.size(), stream);
  } else {
    const auto& y = d.targets();
    out.targets_ = DeviceBuffer<float>(y.size(), stream);
    out.targets_.upload_async(y.data(), y.size(), stream);
  }
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

}  // namespace gpudm::backend::cuda
