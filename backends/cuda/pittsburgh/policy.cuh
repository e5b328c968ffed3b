#pragma once
// Launch policies of the Pittsburgh kernels (kernels.cuh): every tuning constant and layout
// limit lives here; launch.cu turns them into grids and blocks, evaluator.cu into path choices.
#include <cstddef>

namespace gpudm::backend::cuda::pitt {

// Faithful path: the paper's four kernels (Cano, Zafra, Ventura 2014, Listings 1-4).
struct FaithfulPolicy {
  static constexpr int kCoverageThreads = 192;        // Table 1: 100% occupancy on Fermi
  static constexpr int kRuleFitnessThreads = 128;     // 2-level reduction, sequential addressing
  static constexpr int kClassificationThreads = 192;
  static constexpr int kRuleSetFitnessThreads = 128;
  static constexpr unsigned kMaxGridY = 65535;
};

// Fast path: one fused kernel (kernels.cuh describes it). A block of 256 threads interprets
// R = 4, 2 or 1 rows per thread, the largest whose tile of columns fits kTileBytesTarget (a
// 128-thread block with R = 1 past that); groups of individuals within kWordsBudget words are
// staged in shared memory (an individual alone may take up to 4 x kWordsBudget).
struct FastPolicy {
  static constexpr int kBlock = 256;                // threads per block
  static constexpr int kWideBlock = 128;            // when even R = 1 at kBlock exceeds the tile target
  static constexpr int kWordsBudget = 2048;         // words of one group staged in shared memory
  static constexpr int kMaxStackBits = 32;          // rules deeper than this use the faithful path
  static constexpr std::size_t kTileBytesTarget = 48 * 1024;
  static constexpr int kBlocksPerSmCap = 8;
  static constexpr int kBlocksPerSmWanted = 4;      // groups are cut so every SM gets this many blocks
  static constexpr int kThreadsPerRuleUpdate = 128; // finalize: one thread per rule
};
// The f16x2 layout's stack limit and the one class per lane of the counting are the rule
// engine's (backends/cuda/rules/: kMaxPackedDepth, FastPolicy::kMaxClasses).

}  // namespace gpudm::backend::cuda::pitt
