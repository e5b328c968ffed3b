#pragma once
// One-call upload of a gpudm::Dataset: the padded column-major features (the papers'
// coalesced transposed layout: thread i of a warp reads row i of a column), the missing mask
// when there is one, and the labels (classification) or targets (regression).
//
//   DeviceDataset dd = upload_dataset(data, stream);   // owns the device memory
//   kernel<<<g, b, 0, stream>>>(dd.view(), ...);        // DatasetView is a POD kernel argument
//   __device__: float x = v.at(row, col); int y = v.labels[row];
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "algorithms/core/dataset.hpp"
#include "algorithms/core/hd.hpp"
#include "backends/cuda/common/buffer.cuh"

namespace gpudm::backend::cuda {

// Non-owning view of an uploaded dataset, passed to kernels by value.
struct DatasetView {
  const float* features = nullptr;        // padded_rows * cols, column-major
  const std::uint8_t* missing = nullptr;  // same layout, nullptr when the dataset has no missing values
  const std::int32_t* labels = nullptr;   // rows, classification only
  const float* targets = nullptr;         // rows, regression only
  std::size_t rows = 0;
  std::size_t padded_rows = 0;
  std::size_t cols = 0;
  int num_classes = 0;  // 0 for regression

  GPUDM_HD float at(std::size_t row, std::size_t col) const { return features[col * padded_rows + row]; }
  GPUDM_HD const float* column(std::size_t col) const { return features + col * padded_rows; }
  GPUDM_HD bool is_missing(std::size_t row, std::size_t col) const {
    return missing != nullptr && missing[col * padded_rows + row] != 0;
  }
};

class DeviceDataset {
 public:
  DeviceDataset() = default;
  DatasetView view() const {
    DatasetView v;
    v.features = features_.data();
    v.missing = missing_.empty() ? nullptr : missing_.data();
    v.labels = labels_.empty() ? nullptr : labels_.data();
    v.targets = targets_.empty() ? nullptr : targets_.data();
    v.rows = rows_;
    v.padded_rows = padded_rows_;
    v.cols = cols_;
    v.num_classes = num_classes_;
    return v;
  }
  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t padded_rows() const { return padded_rows_; }
  // Bytes held on the device (what the upload moved).
  std::size_t bytes() const { return features_.bytes() + missing_.bytes() + labels_.bytes() + targets_.bytes(); }

 private:
  friend DeviceDataset upload_dataset(const ::gpudm::Dataset& d, cudaStream_t stream);
  DeviceBuffer<float> features_;
  DeviceBuffer<std::uint8_t> missing_;
  DeviceBuffer<std::int32_t> labels_;
  DeviceBuffer<float> targets_;
  std::size_t rows_ = 0, padded_rows_ = 0, cols_ = 0;
  int num_classes_ = 0;
};

// Allocates and copies everything on `stream` (stream-ordered allocations), then synchronises
// that stream so the host vectors may change afterwards. Pageable host memory: the copy is
// staged by the driver; time it as the "transfers" phase.
DeviceDataset upload_dataset(const ::gpudm::Dataset& d, cudaStream_t stream);

}  // namespace gpudm::backend::cuda
