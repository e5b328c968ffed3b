#include "backends/cuda/subtree/launch.cuh"

#include <algorithm>
#include <string>

#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/subtree/kernels.cuh"

namespace gpudm::backend::cuda::subtree_kernels {

namespace {
void check_trees(int trees) {
  if (trees < 1 || trees > 65535)
    throw ::gpudm::Error("subtree/cuda: population of " + std::to_string(trees) + " trees is outside [1, 65535] (grid.y)");
}
dim3 stack_grid(const DatasetView& d, int trees) {
  return dim3(grid_for(d.padded_rows, StackPolicy::kBlock), static_cast<unsigned>(trees));
}
}  // namespace

void launch_postfix(const DatasetView& d, const std::uint32_t* tokens, const std::uint32_t* offsets, int trees,
                    std::uint32_t* cov, std::size_t words_per_tree, cudaStream_t stream) {
  check_trees(trees);
  postfix_kernel<<<stack_grid(d, trees), StackPolicy::kBlock, 0, stream>>>(d, tokens, offsets, cov, words_per_tree);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_mixed(const DatasetView& d, const std::uint32_t* tokens, const std::uint32_t* offsets, int trees,
                  std::uint32_t* cov, std::size_t words_per_tree, cudaStream_t stream) {
  check_trees(trees);
  mixed_kernel<<<stack_grid(d, trees), StackPolicy::kBlock, 0, stream>>>(d, tokens, offsets, cov, words_per_tree);
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_subtree(const DatasetView& d, const ::gpudm::subtree::Node* levels, int depth, int trees, std::uint32_t* cov,
                    std::size_t words_per_tree, const DeviceProps& props, cudaStream_t stream) {
  check_trees(trees);
  const int leaves = 1 << depth;
  const dim3 block(SubtreePolicy::kInstances, std::min(leaves, SubtreePolicy::kMaxSlotThreads));
  const dim3 grid(static_cast<unsigned>(d.padded_rows / SubtreePolicy::kInstances), static_cast<unsigned>(trees));
  const std::size_t smem = 2ull * leaves * SubtreePolicy::kInstances;
  if (smem > SubtreePolicy::kDefaultSharedBytes) {
    if (smem > props.smem_per_block_optin)
      throw ::gpudm::Error("subtree/cuda: interpreter 'subtree' needs " + std::to_string(smem) +
                           " bytes of shared memory for depth " + std::to_string(depth) + "; the device allows " +
                           std::to_string(props.smem_per_block_optin));
    allow_dynamic_smem(subtree_kernel, smem);
  }
  if (grid.x == 0) return;
  subtree_kernel<<<grid, block, smem, stream>>>(d, levels, depth, cov, words_per_tree);
  GPUDM_CUDA_CHECK_LAUNCH();
}

BestLaunch plan_best(const DatasetView& d, int depth, int trees, bool data_has_nan, const DeviceProps& props) {
  check_trees(trees);
  BestLaunch p;
  p.nan_checks = data_has_nan;
  const int sms = std::max(1, props.sm_count);
  const auto tiles_for = [&](int r) {
    const std::size_t tile = static_cast<std::size_t>(BestPolicy::kBlock) * r;
    return (d.padded_rows + tile - 1) / tile;
  };
  const auto fits = [&](int r) {
    return d.cols * static_cast<std::size_t>(BestPolicy::kBlock) * r * sizeof(float) <= BestPolicy::kStageBudgetBytes;
  };
  p.rows_per_thread = 1;
  p.staged = fits(1);
  for (int r : {4, 2}) {
    if (depth >= BestPolicy::kMinDepthForRows && fits(r) && tiles_for(r) >= static_cast<std::size_t>(BestPolicy::kMinTilesPerSm) * sms) {
      p.rows_per_thread = r;
      break;
    }
  }
  const std::size_t tiles = tiles_for(p.rows_per_thread);
  if (tiles > 0x7FFFFFFFull) throw ::gpudm::Error("subtree/cuda: dataset too large for the bit-level grid");
  p.tiles = static_cast<unsigned>(tiles);
  const std::size_t target = static_cast<std::size_t>(BestPolicy::kTargetBlocksPerSm) * sms;
  std::size_t groups = (target + tiles - 1) / tiles;
  groups = std::max<std::size_t>(1, std::min<std::size_t>(groups, static_cast<std::size_t>(trees)));
  p.trees_per_block = static_cast<int>((trees + groups - 1) / groups);
  p.groups = static_cast<unsigned>((trees + p.trees_per_block - 1) / p.trees_per_block);
  p.shared_bytes = p.staged ? d.cols * static_cast<std::size_t>(BestPolicy::kBlock) * p.rows_per_thread * sizeof(float) : 0;
  return p;
}

namespace {

using ::gpudm::subtree::BitLeaf;

template <int D, int R, bool S, bool N>
void launch_best_t(const DatasetView& d, const BitLeaf* leaves, const std::uint64_t* masks, const std::uint64_t* neg,
                   int trees, std::uint32_t* cov, std::size_t wpt, const BestLaunch& p, cudaStream_t stream) {
  best_kernel<D, R, S, N><<<dim3(p.tiles, p.groups), BestPolicy::kBlock, p.shared_bytes, stream>>>(
      d, leaves, masks, neg, trees, p.trees_per_block, cov, wpt);
  GPUDM_CUDA_CHECK_LAUNCH();
}

// Shallow trees (tests, small sizes) only get R = 1: fewer instantiations.
template <int D, bool N>
void launch_best_n(const DatasetView& d, const BitLeaf* leaves, const std::uint64_t* masks, const std::uint64_t* neg,
                   int trees, std::uint32_t* cov, std::size_t wpt, const BestLaunch& p, cudaStream_t stream) {
  if (!p.staged) return launch_best_t<D, 1, false, N>(d, leaves, masks, neg, trees, cov, wpt, p, stream);
  if constexpr (D >= BestPolicy::kMinDepthForRows) {
    if (p.rows_per_thread == 4) return launch_best_t<D, 4, true, N>(d, leaves, masks, neg, trees, cov, wpt, p, stream);
    if (p.rows_per_thread == 2) return launch_best_t<D, 2, true, N>(d, leaves, masks, neg, trees, cov, wpt, p, stream);
  }
  return launch_best_t<D, 1, true, N>(d, leaves, masks, neg, trees, cov, wpt, p, stream);
}

template <int D>
void launch_best_d(const DatasetView& d, const BitLeaf* leaves, const std::uint64_t* masks, const std::uint64_t* neg,
                   int trees, std::uint32_t* cov, std::size_t wpt, const BestLaunch& p, cudaStream_t stream) {
  if (p.nan_checks) return launch_best_n<D, true>(d, leaves, masks, neg, trees, cov, wpt, p, stream);
  return launch_best_n<D, false>(d, leaves, masks, neg, trees, cov, wpt, p, stream);
}

}  // namespace

void launch_best(const DatasetView& d, const BitLeaf* leaves, const std::uint64_t* and_masks, const std::uint64_t* neg_masks,
                 int depth, int trees, std::uint32_t* cov, std::size_t words_per_tree, const BestLaunch& p,
                 cudaStream_t stream) {
  if (p.tiles == 0 || p.groups == 0) return;
  switch (depth) {
    case 1: return launch_best_d<1>(d, leaves, and_masks, neg_masks, trees, cov, words_per_tree, p, stream);
    case 2: return launch_best_d<2>(d, leaves, and_masks, neg_masks, trees, cov, words_per_tree, p, stream);
    case 3: return launch_best_d<3>(d, leaves, and_masks, neg_masks, trees, cov, words_per_tree, p, stream);
    case 4: return launch_best_d<4>(d, leaves, and_masks, neg_masks, trees, cov, words_per_tree, p, stream);
    case 5: return launch_best_d<5>(d, leaves, and_masks, neg_masks, trees, cov, words_per_tree, p, stream);
    case 6: return launch_best_d<6>(d, leaves, and_masks, neg_masks, trees, cov, words_per_tree, p, stream);
    default:
      throw ::gpudm::Error("subtree/cuda: interpreter 'best' handles depth 1..6, got " + std::to_string(depth));
  }
}

}  // namespace gpudm::backend::cuda::subtree_kernels
