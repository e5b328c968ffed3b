#pragma once
// Launch policies of the subtree family's kernels: every tuning constant lives here.
#include <cstddef>

namespace gpudm::backend::cuda::subtree_kernels {

// Stack interpreters (pure postfix, mixed): one thread per instance, blockIdx.y = tree, as the
// poster's population-and-data-parallel interpreter (a warp runs one tree on 32 instances).
struct StackPolicy {
  static constexpr int kBlock = 128;
};

// Parallel subtree interpreter: blockDim.x = instances of the block (one warp, so the block's
// coverage is one ballot word), blockDim.y = node slots of the widest level, capped so the
// block stays <= 1024 threads (wider levels are strided over the slot threads).
struct SubtreePolicy {
  static constexpr int kInstances = 32;
  static constexpr int kMaxSlotThreads = 32;
  static constexpr std::size_t kDefaultSharedBytes = 48 * 1024;  // above this, opt in per kernel
};

// Bit-level interpreter: kBlock threads x R rows per thread make a tile of rows; the tile's
// feature values are staged in shared memory once and reused by every tree of the block's
// group (the population loop is inside the block). R is the largest of 4, 2, 1 whose tile fits
// kStageBudgetBytes while the grid still has >= kMinTilesPerSm * SMs tiles; when even R = 1
// does not fit (very wide datasets) the kernel reads the columns from global memory (L1).
// Trees are split into groups (grid.y) only when the tiles alone cannot fill the GPU.
struct BestPolicy {
  static constexpr int kBlock = 128;
  static constexpr std::size_t kStageBudgetBytes = 32 * 1024;
  static constexpr int kMinTilesPerSm = 1;
  static constexpr int kTargetBlocksPerSm = 8;
  static constexpr int kMinDepthForRows = 4;  // shallower trees run with R = 1 (fewer kernel instantiations)
};

}  // namespace gpudm::backend::cuda::subtree_kernels
