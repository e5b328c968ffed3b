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
  // (sum and absolute sum of errors, lowest- and highest-target keys: 32 bytes per node).
  static constexpr std::size_t kSharedTableBytes = 48 * 1024;
  static constexpr int kNodeEntryBytes = 32;
  static constexpr int kReduceThreads = 256;  // reduction<<<1, kReduceThreads>>>
  static constexpr int kAuxThreads = 256;     // column norms, column gathers
  // Float least squares: the rank rule's tolerance is raised to this (rank_tol = 1e-9 is below
  // float rounding, so no column would ever be dropped).
  static constexpr double kFloatRankTol = 1e-5;
};

// The fast path: one launch sequence per generation.
struct FastPolicy {
  static constexpr int kBlock = 256;  // rows kernels: 8 warps, each owning a contiguous sub-chunk
  static constexpr int kWarps = kBlock / 32;
  static constexpr int kMinRowsPerThread = 1;   // small data: one 32-row tile per warp, more SMs busy
  static constexpr int kMaxBlocksPerSm = 4;     // rows kernels' grid: at most this x SMs blocks
  // estimate_errors: one group of leaves at a time, each thread summing its rows' errors per
  // leaf in shared memory (kErrKeys x 256 threads x 16 bytes ~ 96 KB + warp tables: two blocks
  // per SM); a generation's leaves are split into groups of kErrKeys (trees inner per group).
  static constexpr int kErrKeys = 24;
  // Gram pass: rows of one leaf per work item (one partial Gram each, merged in item order).
  static constexpr int kSegRows = 8192;
  static constexpr int kGramBlock = 256;
  static constexpr int kGramBlocksPerSm = 2;    // persistent blocks over the work items
  static constexpr int kTileDoubles = 4096;     // shared row tile of the Gram pass (32 KB)
  static constexpr int kMaxTilesPerThread = 3;  // 4x4 register tiles per thread (fp64 engine)
  // Widest model (1 + attributes + y) the batched solver takes; wider leaves go to the exact
  // QR solver (cuSOLVER), as do ambiguous pivots.
  static constexpr int kMaxWidth = 128;
  static constexpr int kSolveBlock = 256;
  static constexpr int kSolveBlocksPerSm = 2;
  static constexpr int kAuxBlock = 256;         // scans, k-th row search, reductions
  static constexpr int kAuxBlocks = 64;
  // A pivot with d <= kRankMargin x rank_tol^2 x (uncentred column norm^2) could be a drop by
  // the CPU's rule within the Gram's rounding: exact solver.
  static constexpr double kRankMargin = 100.0;
};

}  // namespace gpudm::backend::cuda::gmt_cuda
