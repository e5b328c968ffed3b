#pragma once
// Launch policies of the rule engine's kernels: every tuning constant lives here.
#include <cstddef>
#include <cstdint>

namespace gpudm::backend::cuda::rules_kernels {

// The GP paper's faithful path (Cano, Zafra, Ventura 2012, Sec. 5.2).
struct FaithfulPolicy {
  // Match kernel: one thread per (individual, instance); the paper's 128 threads per block for
  // compute capability 1.x (192 for 2.x); 128 keeps 16 blocks per SM on sm_90.
  static constexpr int kMatchThreads = 128;
  // Reduction kernel: one block per individual, 128 threads each counting a strided slice
  // (coalesced: iteration x threads + threadIdx), then a barrier and one sum per class.
  static constexpr int kReduceThreads = 128;
  // Individuals live in constant memory (64 KB): offsets + words of one launch's chunk.
  static constexpr std::size_t kConstantWords = 16384;
  static constexpr unsigned kMaxGridY = 65535;
  static constexpr int kPackThreads = 256;  // coverage bits from the results array (when requested)
};

// The fused fast path.
struct FastPolicy {
  static constexpr int kWordsBudget = 4096;       // words of one rule group staged in shared memory
  static constexpr int kCountersBudget = 4096;    // rules x classes counters of one group
  static constexpr int kMaxStackBits = 32;        // deeper rules run on the faithful path
  static constexpr int kMaxClasses = 32;          // one class per lane; more run on the faithful path
  static constexpr std::size_t kTileBytesTarget = 48 * 1024;
  static constexpr int kBlocksPerSmCap = 8;
  static constexpr int kWantBlocksPerSm = 4;      // rule groups are split until the grid has this many
};

}  // namespace gpudm::backend::cuda::rules_kernels
