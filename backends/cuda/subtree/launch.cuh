#pragma once
// Launchers of the subtree kernels: pick block/grid from the policies, launch on a stream,
// check the launch. Pointers are device pointers.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "algorithms/subtree/encoding.hpp"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/common/device.cuh"

namespace gpudm::backend::cuda::subtree_kernels {

void launch_postfix(const DatasetView& d, const std::uint32_t* tokens, const std::uint32_t* offsets, int trees,
                    std::uint32_t* cov, std::size_t words_per_tree, cudaStream_t stream);
void launch_mixed(const DatasetView& d, const std::uint32_t* tokens, const std::uint32_t* offsets, int trees,
                  std::uint32_t* cov, std::size_t words_per_tree, cudaStream_t stream);
void launch_subtree(const DatasetView& d, const ::gpudm::subtree::Node* levels, int depth, int trees, std::uint32_t* cov,
                    std::size_t words_per_tree, const DeviceProps& props, cudaStream_t stream);

// The bit-level kernel's launch shape (reported in the results' metrics).
struct BestLaunch {
  int rows_per_thread = 1;
  bool staged = false;
  int trees_per_block = 1;
  unsigned tiles = 0;
  unsigned groups = 0;
  std::size_t shared_bytes = 0;
  bool nan_checks = true;  // per-leaf OUT tests (data with NaN) instead of IN tests + negate mask
};
BestLaunch plan_best(const DatasetView& d, int depth, int trees, bool data_has_nan, const DeviceProps& props);
void launch_best(const DatasetView& d, const ::gpudm::subtree::BitLeaf* leaves, const std::uint64_t* and_masks,
                 const std::uint64_t* neg_masks, int depth, int trees, std::uint32_t* cov, std::size_t words_per_tree,
                 const BestLaunch& plan, cudaStream_t stream);

}  // namespace gpudm::backend::cuda::subtree_kernels
