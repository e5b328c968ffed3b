#pragma once
// The four CUDA tree interpreters. All read the same per-instance / per-node functions as the
// CPU backends (algorithms/subtree/encoding.hpp, algorithms/rules/opcodes.hpp) and write the
// same coverage layout: word (row / 32) of tree t holds the warp's ballot of the tree's value,
// rows >= rows masked to 0. Every grid covers whole warps of the padded rows (padded_rows is a
// multiple of 32 and padding rows hold 0), so every lane reaches __ballot_sync.
#include <cstdint>

#include "algorithms/subtree/encoding.hpp"
#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/subtree/policy.cuh"

namespace gpudm::backend::cuda::subtree_kernels {

using ::gpudm::subtree::BitLeaf;
using ::gpudm::subtree::Node;

__device__ __forceinline__ void store_ballot(bool v, std::size_t row, const DatasetView& d, std::uint32_t* tree_cov) {
  const unsigned word = __ballot_sync(0xFFFFFFFFu, v && row < d.rows);
  if ((threadIdx.x & 31u) == 0 && row < d.padded_rows) tree_cov[row / 32] = word;
}

// Pure postfix stack interpreter (float stack in local memory).
__global__ void __launch_bounds__(StackPolicy::kBlock)
    postfix_kernel(DatasetView d, const std::uint32_t* __restrict__ tokens, const std::uint32_t* __restrict__ offsets,
                   std::uint32_t* __restrict__ cov, std::size_t words_per_tree) {
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int t = blockIdx.y;
  bool v = false;
  if (row < d.padded_rows) {
    const float* f = d.features;
    const std::size_t stride = d.padded_rows;
    v = ::gpudm::subtree::postfix_evaluate(tokens + offsets[t],
                                            [&](std::uint32_t attr) { return __ldg(f + attr * stride + row); });
  }
  store_ballot(v, row, d, cov + static_cast<std::size_t>(t) * words_per_tree);
}

// Mixed prefix/postfix stack interpreter: the shared rules::evaluate (bit stack in registers).
__global__ void __launch_bounds__(StackPolicy::kBlock)
    mixed_kernel(DatasetView d, const std::uint32_t* __restrict__ tokens, const std::uint32_t* __restrict__ offsets,
                 std::uint32_t* __restrict__ cov, std::size_t words_per_tree) {
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int t = blockIdx.y;
  bool v = false;
  if (row < d.padded_rows) {
    const float* f = d.features;
    const std::size_t stride = d.padded_rows;
    v = ::gpudm::rules::evaluate(tokens + offsets[t], [&](std::uint32_t attr) { return __ldg(f + attr * stride + row); });
  }
  store_ballot(v, row, d, cov + static_cast<std::size_t>(t) * words_per_tree);
}

// Parallel subtree interpreter (Cano & Ventura): blockIdx.y = tree, threadIdx.x = instance,
// threadIdx.y = node slot of the current level. Leaves first, then one level per step up to
// the root, each level separated by one __syncthreads. The poster's code overwrites slot y of
// the array its sibling threads are still reading (a race between levels); here the levels
// ping-pong between two shared arrays, which keeps one synchronisation per level.
__global__ void subtree_kernel(DatasetView d, const Node* __restrict__ levels, int depth, std::uint32_t* __restrict__ cov,
                               std::size_t words_per_tree) {
  constexpr int kI = SubtreePolicy::kInstances;
  extern __shared__ std::uint8_t subtree_smem[];
  const int leaves = 1 << depth;
  const int half = leaves * kI;  // the two level arrays: [0, half) and [half, 2 half)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * kI + tx;  // < padded_rows by construction
  const int t = blockIdx.y;
  const Node* tree = levels + static_cast<std::size_t>(t) * ((2 << depth) - 1);

  for (int y = ty; y < leaves; y += blockDim.y) {  // level `depth` (leaves) is first in the array
    const Node n = tree[y];
    const float x = __ldg(d.features + static_cast<std::size_t>(::gpudm::rules::attribute_of(n.word)) * d.padded_rows + row);
    subtree_smem[y * kI + tx] = ::gpudm::subtree::level_leaf(n, x);
  }
  __syncthreads();
  int cur = 0;
  for (int k = depth - 1; k >= 0; --k) {
    const Node* level = tree + ::gpudm::subtree::level_offset(depth, k);
    const std::uint8_t* src = subtree_smem + cur * half;
    std::uint8_t* dst = subtree_smem + (cur ^ 1) * half;
    for (int y = ty; y < (1 << k); y += blockDim.y)
      dst[y * kI + tx] = ::gpudm::subtree::level_combine(level[y].word, src[2 * y * kI + tx], src[(2 * y + 1) * kI + tx]);
    __syncthreads();
    cur ^= 1;
  }
  if (ty == 0) store_ballot(subtree_smem[cur * half + tx] != 0, row, d, cov + static_cast<std::size_t>(t) * words_per_tree);
}

// Ours: bit-level interpreter. A block owns a tile of kBlock * R rows and a group of trees;
// the tile's features are staged in shared memory (kStaged) once, then every tree of the group
// is evaluated with no synchronisation: the 2^D leaf results of a row are bits of one 64-bit
// register (leaves in bit-reversed slot order), each level is 5 word operations (bit_reduce),
// and the root bits of a warp are one ballot word. Leaf parameters are one uniform 128-bit
// load each (the whole warp reads the same leaf). Without NaN in the data (!kNan) every leaf
// is an IN test (two compares) and the OUT leaves are flipped by one XOR per row and tree.
template <int D, int R, bool kStaged, bool kNan>
__global__ void __launch_bounds__(BestPolicy::kBlock)
    best_kernel(DatasetView d, const BitLeaf* __restrict__ leaves, const std::uint64_t* __restrict__ and_masks,
                const std::uint64_t* __restrict__ neg_masks, int trees, int trees_per_block, std::uint32_t* __restrict__ cov,
                std::size_t words_per_tree) {
  constexpr int kB = BestPolicy::kBlock;
  constexpr int kTile = kB * R;
  constexpr int L = 1 << D;
  extern __shared__ float best_tile[];  // cols x kTile when staged
  const std::size_t tile0 = static_cast<std::size_t>(blockIdx.x) * kTile;
  const int t_begin = blockIdx.y * trees_per_block;
  const int t_end = min(trees, t_begin + trees_per_block);

  if (kStaged) {
    const int cols = static_cast<int>(d.cols);
    for (int i = threadIdx.x; i < cols * kTile; i += kB) {
      const int c = i / kTile, r = i - c * kTile;
      const std::size_t row = tile0 + r;
      best_tile[i] = row < d.padded_rows ? __ldg(d.features + static_cast<std::size_t>(c) * d.padded_rows + row) : 0.0f;
    }
    __syncthreads();
  }

  for (int t = t_begin; t < t_end; ++t) {
    const BitLeaf* tl = leaves + static_cast<std::size_t>(t) * L;
    std::uint64_t bits[R];
#pragma unroll
    for (int r = 0; r < R; ++r) bits[r] = 0;
#pragma unroll
    for (int s = 0; s < L; ++s) {
      const uint4 raw = __ldg(reinterpret_cast<const uint4*>(tl + s));
      const std::uint32_t attr = raw.x & ~::gpudm::subtree::kBitOut;
      const float lo = __uint_as_float(raw.y), hi = __uint_as_float(raw.z);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float x;
        if (kStaged) {
          x = best_tile[attr * kTile + r * kB + threadIdx.x];
        } else {
          const std::size_t row = tile0 + r * kB + threadIdx.x;
          x = row < d.padded_rows ? __ldg(d.features + static_cast<std::size_t>(attr) * d.padded_rows + row) : 0.0f;
        }
        const bool v = kNan ? ::gpudm::subtree::bit_leaf(raw.x & ::gpudm::subtree::kBitOut, lo, hi, x)
                            : ::gpudm::subtree::bit_leaf_in(lo, hi, x);
        if (v) bits[r] |= 1ull << s;
      }
    }
    const std::uint64_t mask = __ldg(reinterpret_cast<const unsigned long long*>(and_masks) + t);
    const std::uint64_t neg = kNan ? 0ull : __ldg(reinterpret_cast<const unsigned long long*>(neg_masks) + t);
    std::uint32_t* tree_cov = cov + static_cast<std::size_t>(t) * words_per_tree;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const std::size_t row = tile0 + r * kB + threadIdx.x;
      store_ballot(::gpudm::subtree::bit_reduce(bits[r] ^ neg, mask, D), row, d, tree_cov);
    }
  }
}

}  // namespace gpudm::backend::cuda::subtree_kernels
