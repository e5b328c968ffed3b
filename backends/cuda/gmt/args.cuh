#pragma once
// Kernel argument structs of the GMT kernels (passed by value; host code fills them).
#include <cstddef>

#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/gmt/batch.cuh"
#include "backends/cuda/gmt/device_common.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

// The candidate columns of a least-squares step (select_columns_kernel).
struct ColumnList {
  static constexpr int kMax = 512;
  int n;
  int idx[kMax];
};
// Per-block node table of estimate_errors: sums of squared and absolute errors, lowest- and
// highest-target keys (atomicMin / atomicMax on 64-bit keys: the CPU's dipole order), minimum dipole key.
struct NodeTables {
  double* sse;
  double* sae;
  unsigned long long* lo;
  unsigned long long* hi;
  unsigned long long* rnd;  // minimum dipole key (the random row, tree.hpp)
};

}  // namespace gpudm::backend::cuda::gmt_cuda
