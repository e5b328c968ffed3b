#pragma once
// Launch policies of the streaming forest's kernels: every tuning constant lives here.
#include <cstdint>

namespace gpudm::backend::cuda::vfdt_kernels {

// Path default (compact node pool; kernels.cuh, persistent.cuh).
struct Policy {
  static constexpr int kInstanceBlock = 256;  // threads per block over (instance, tree)
  static constexpr int kSplitBlock = 256;     // threads per tree in the split kernel
  static constexpr int kMaxClasses = 64;      // vote histogram in registers/local memory
  static constexpr int kSplitList = 1024;     // splitting leaves per tree and batch kept in shared memory
  static constexpr int kScanMax = 1024;       // largest block block_compact supports
  static constexpr int kPersistentBlock = 512;  // threads per tree in the persistent kernel
  static constexpr int kAdwinBlock = 256;     // threads per tree in the per-batch prefix ADWIN kernel
  static constexpr int kStreamWindows = 256;  // batch_order "stream": 32-instance windows per batch (B <= 8192)
};

// Path faithful (the paper's layout; faithful.cuh).
struct FaithfulPolicy {
  static constexpr int kInstanceBlock = 256;
  static constexpr int kGainBlock = 256;
  static constexpr int kSortCapacity = 256;  // attributes sorted per block (next power of two of d)
  static constexpr std::uint32_t kLeaf = 0x80000000u;  // node word: leaf flag (low 31 bits: leaf id)
};

}  // namespace gpudm::backend::cuda::vfdt_kernels
