#pragma once
// Launch policies of the GMT kernels: every tuning constant of backends/cuda/gmt lives here.
#include <cstddef>

namespace gpudm::backend::cuda::gmt_cuda {

// The paper's path (Sec. 4, Listing 2): one individual at a time, two-level block/thread
// decomposition of the rows (each block a contiguous part, threads strided inside it).
struct FaithfulPolicy {
  // Sec. 5.3: "between four and eight samples for each thread"; 256 x 256 by default.
  static constexpr int kDefaultBlocks = 256, kDefaultThreads = 256;
  // Per-block node tables of estimate_errors in shared memory while they fit the paper's 48 KB
  // (sum and absolute sum of errors, lowest- and highest-target keys, minimum dipole key: 40 bytes
  // per node).
  static constexpr std::size_t kSharedTableBytes = 48 * 1024;
  static constexpr int kNodeEntryBytes = 40;
  static constexpr int kReduceThreads = 256;  // reduction<<<1, kReduceThreads>>>
  static constexpr int kAuxThreads = 256;     // column norms, column gathers
  // Float least squares: the rank rule's tolerance is raised to this (rank_tol = 1e-9 is below
  // float rounding, so no column would ever be dropped).
  static constexpr double kFloatRankTol = 1e-5;
};

// The fast path's policy is FusedPolicy (fused_types.cuh).

}  // namespace gpudm::backend::cuda::gmt_cuda
