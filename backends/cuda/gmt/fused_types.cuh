#pragma once
// The fast path's kernels: per evaluator call one fused statistics pass over the rows
// for every tree of the batch, a fixed-order merge that also solves each leaf's model in the same block. Five kernels
// in one graph (the last two work only for trees with a near-exact leaf fit); the `solve` step below runs inside the
// merge's block (fast_launch.cu, fused_merge.cuh):
//
//   init   per-leaf outputs reset (counts 0, key identities, stray counters 0)
//   fused  grid (tree, chunk of rows): route the chunk's rows through the tree (nodes read through
//          L1), per leaf: count, lowest/highest-target keys, minimum dipole key (integer atomics:
//          exact in any order); then the rows of the leaves that need statistics ("stat leaves":
//          refit leaves, or all leaves when the caller does not know a clean leaf's SSE) sorted by
//          leaf, stably, in shared memory (per-warp counts, a scan, a warp-synchronous scatter), and
//          each stat leaf's sums of [1, x_a - x_a(K), y - y(K)] outer products over its rows of the
//          chunk, split into kWarps runs in row order, a warp each (K: the run's first row), in a
//          fixed order: models of <= 7
//          attributes lanes over rows with the sums in registers and a fixed xor tree, wider ones
//          lanes over the sums with the rows staged in shared memory; a stat leaf with fewer
//          rows in the chunk than the repair limit also records its rows (the strays: a leaf
//          under the limit has all its rows recorded).
//   merge  block per stat leaf, two levels (FusedGroups: 32 groups of consecutive chunks, so a
//          rows split over MPI ranks gives the same bits): each group's partials re-shifted to
//          the group's first row and added in (chunk, run) order, then the groups re-shifted to
//          the leaf's first row and added in group order (leafstats::shift_stats's algebra).
//   solve  thread per stat leaf: leafstats::solve_stats (the CPU's rank rule, ambiguous pivots
//          flagged for the exact QR solver) or, for given coefficients, sse_with_coef; a leaf
//          whose SSE lost digits to cancellation (a near-exact fit) is marked for the residual pass.
//   residual (only blocks of trees with a marked leaf do work) the rows routed again, the marked
//          leaves' squared residuals summed per (chunk, warp) in row order; resid_merge adds
//          them in chunk order into the leaf's SSE.
// Nothing depends on scheduling: every floating-point sum has a fixed order, integer results are
//
// fused_types.cuh: the policy and the layouts the host and the kernels share; fused_device.cuh: the
// kernels' device functions; fused_stats.cuh and fused_merge.cuh: the kernels (included by
// fast_launch.cu only); exact_batch.cuh: the exact solver's kernels.
#include <cstddef>
#include <cstdint>

#include "algorithms/gmt/leaf_stats.hpp"
#include "backends/cuda/common/dataset.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

struct FusedPolicy {
  static constexpr int kWarps = 4;
  static constexpr int kBlock = 32 * kWarps;
  static constexpr int kMaxChunkRows = 16384;  // chunk-local row offsets are 16-bit
  static constexpr int kNarrowKv = 5;          // values per row (attributes + y) summed in registers
  static constexpr int kRouteRows = 4;         // rows each lane routes at once (independent load chains)
  static constexpr int kMaxKv = 128;           // wider models go to the exact solver
  static constexpr int kWideTile = 8;          // rows staged per step of the wide path
  static constexpr int kWideEntries = 8;       // most sums per lane per sweep of the wide path (fewer when fewer fill a sweep)
  static constexpr int kSmemLeaves = 2048;     // per-leaf atomics in shared memory up to this many leaves
  static constexpr int kMaxStatLeaves = 8192;  // stat leaves of one tree (shared-memory sort tables)
  static constexpr int kAuxBlock = 128;
  // How the stats pass shares a stat leaf's rows of a chunk among the block's warps
  // (EvalOptions::fast_stat_split): kSplitWarps, the rows in W runs, a partial per (chunk, warp),
  // each run shifted by its own first row; kSplitLeaf, a warp per stat leaf, one partial per chunk;
  // kSplitAuto (the default), per (chunk, stat leaf): a leaf with kSplitMinRows rows or more in the
  // chunk as kSplitWarps, a smaller one taken whole by warp si mod W as kSplitLeaf. (A third way,
  // the warps' runs added into one partial per chunk, paid two barriers a stat leaf and lost on
  // every set measured: docs/perf-notes-gmt.md.)
  static constexpr int kSplitWarps = 0, kSplitLeaf = 1, kSplitAuto = 3;
  static constexpr int kSplitMinRows = 128;    // kSplitAuto: a run of 32 rows or more per warp
  static constexpr int kMergeBlock = 256;      // threads of the merge's block per stat leaf (128: slower, perf-notes-gmt.md)
  static constexpr int kWideMinBlocks = 5;     // the every-width stats variant's registers capped for 5 blocks an SM
  // The solve, in the merge's block of the leaf: a leaf of at most kSolveSmemKv values (attributes
  // + y) solves in the block's shared memory, wider ones in the global work space. kSolveStride:
  // the doubles of its Gram, shift values and coefficients.
  static constexpr int kSolveSmemKv = 12;
  static constexpr int kSolveStride = kSolveSmemKv * kSolveSmemKv + 2 * kSolveSmemKv + 1;
  // A solved leaf whose SSE from the statistics is under this fraction of its centred target sum
  // of squares (R^2 > 1 - 1e-4) has lost digits to cancellation (C_yy - |L^-1 C_Sy|^2, error
  // ~ eps x C_yy): its SSE is summed again from the residuals (the residual pass).
  static constexpr double kResidualRatio = 1e-4;
};

// A node of the packed batch: a >= 0 tests attribute a (left child `left`, right left + 1);
// a < 0 is a leaf, local leaf index -1 - a. Children are tree-local indices. A leaf's `pad` is its
// stat leaf's index in the tree (-1: a clean leaf) in the stats pass's batch (0 elsewhere), read by
// the routing with the node itself.
struct alignas(16) PackedNode {
  int a;
  float t;
  int left;
  int pad;
};

// Per leaf: integer results of the pass. A stat leaf: lowest / highest-target and minimum dipole
// keys (its count is StatOut::n); a clean leaf: count and minimum dipole key (its lowest and
// highest-target rows are its last evaluation's).
struct LeafOut {
  unsigned long long lo, hi, rnd;
  int count;
  int pad;
};
struct StatOut {  // per stat leaf
  double sse;
  long long n;    // rows (the merge's sum of chunk counts)
  int rank;       // columns kept (intercept included); -1 for given coefficients
  int flag;       // leafstats::SolveFlag
  int krow;       // the shift row K (the leaf's first row), -1 when empty
  int nstray;     // rows recorded in `strays` (capped at stray_cap)
  int resid;      // 1: SSE summed from the residuals (kResidualRatio), not from the statistics
  int pad;
};

// The batch as the kernels see it; written at the start of the uploaded buffer, so the kernels'
// launch parameters do not change between calls (one graph, replayed).
struct FusedView {
  int B = 0, L = 0, S = 0;
  int stray_cap = 0;          // rows recorded per small stat leaf (repair limit - 1; 0 = none)
  long long stat_total = 0;   // doubles of one chunk's statistics (every stat leaf)
  int coef_total = 0;         // doubles of the stat leaves' coefficients (k + 1 each)
  int chunks = 0;
  long long work_total = 0;   // doubles of the solve work space
  long long rows = 0, ld = 0;
  int chunk_rows = 0;
  int stat_split = FusedPolicy::kSplitAuto;
  int chunk_major = 0;        // the stats pass's grid: 1 = (chunk, tree rank), 0 = (tree rank, chunk)
  // The merge's groups (FusedGroups): the data's chunks_all chunks in G groups of consecutive
  // chunks; this device holds the rows of groups [g0, g1) (every group in one process; a block of
  // them on each rank of a rows split), i.e. chunks [chunk0, chunk0 + chunks) and rows
  // [row_base, row_base + rows) of the whole data. Rows are local on the device (feature reads)
  // and row_base + local in every result (keys, shift rows, strays).
  long long row_base = 0;
  int chunk0 = 0, chunks_all = 0;
  int G = 1, g0 = 0, g1 = 1;
  // inputs
  const int* t_node0 = nullptr;  // [B + 1]
  const int* t_leaf0 = nullptr;  // [B + 1]
  const int* t_stat0 = nullptr;  // [B + 1]
  const unsigned long long* t_salt = nullptr;  // [B]
  const int* t_order = nullptr;  // [B] the trees by estimated stats work, heaviest first (the stats pass's block order)
  const PackedNode* nodes = nullptr;           // [sum nodes]
  const int* l_stat = nullptr;   // [L] stat leaf or -1
  const int* s_leaf = nullptr;   // [S] the stat leaf's leaf
  const int* s_k = nullptr;      // [S] model attributes
  const int* s_fit = nullptr;    // [S] 1: solve; 0: coefficients given (SSE only)
  const int* s_attr0 = nullptr;  // [S] into attrs; coefficients at s_attr0 + s
  const long long* s_stat0 = nullptr;  // [S] into a chunk's statistics
  const long long* s_work0 = nullptr;  // [S] into the solve work space
  const int* attrs = nullptr;    // [sum k]
  const double* coef_in = nullptr;  // [coef_total] given coefficients (fit == 0)
  // outputs (one region, downloaded at once)
  LeafOut* leaf_out = nullptr;   // [L]
  StatOut* stat_out = nullptr;   // [S]
  double* stats = nullptr;       // [stat_total] merged statistics
  double* coef = nullptr;        // [coef_total]
  int* strays = nullptr;         // [S x stray_cap]
  // device work
  double* part = nullptr;        // [chunks x kWarps x stat_total] (partial c x kWarps + w: warp w's run of chunk c)
  int* part_n = nullptr;         // [chunks x kWarps x S]
  int* part_k = nullptr;         // [chunks x kWarps x S]
  double* part_shift = nullptr;  // [chunks x kWarps x coef_total]: a stat leaf's kv values at the partial's shift row
  double* work = nullptr;        // [work_total]
  int* work_i = nullptr;         // [sum k]
  // the groups' merged partials: record g (FusedGroups::record words of 8 bytes) holds per stat
  // leaf its rows n [S], shift row (global; -1 empty) [S], values at the shift row [coef_total],
  // sums shifted by it [stat_total]
  double* grec = nullptr;        // [G x record]
  double* gres = nullptr;        // [G x S] the residual pass's squared residuals per (group, stat leaf)
  double* grun = nullptr;        // [runs of this device's groups x stat_total] level 1's run sums (FusedGroups::runs)
};

// The merge's two levels (a documented summation order: every sum of a leaf is its groups' sums,
// each the group's partials in (chunk, run) order, added in group order): with a rows split each
// rank merges its groups and the ranks exchange the groups' records, so a leaf's sums are the same
// bits at any rank count. G = min(kGroups, chunks): a rank holds whole groups (ranks <= G).
struct FusedGroups {
  static constexpr int kGroups = 32;
  // first chunk of group g of G over `chunks` chunks (contiguous, sizes differ by at most one)
  __host__ __device__ static int chunk_begin(int g, int G, int chunks) {
    return static_cast<int>(static_cast<long long>(chunks) * g / G);
  }
  // Level 1 adds a group's partials in runs of kRunParts (each run's partials in order, then the
  // runs in order): short dependent chains on large data (Susy-shaped: ~150 partials a group).
  static constexpr int kRunParts = 8;
  __host__ __device__ static int runs_of(int group_chunks) { return (group_chunks * FusedPolicy::kWarps + kRunParts - 1) / kRunParts; }
  __host__ __device__ static int runs(int g, int G, int chunks) { return runs_of(chunk_begin(g + 1, G, chunks) - chunk_begin(g, G, chunks)); }
  __host__ __device__ static long long record(int S, int coef_total, long long stat_total) {
    return 2LL * S + coef_total + stat_total;
  }
  __host__ __device__ static long long* n(double* rec, int) { return reinterpret_cast<long long*>(rec); }
  __host__ __device__ static long long* k(double* rec, int S) { return reinterpret_cast<long long*>(rec) + S; }
  __host__ __device__ static double* shift(double* rec, int S) { return rec + 2 * S; }
  __host__ __device__ static double* sums(double* rec, int S, int coef_total) { return rec + 2 * S + coef_total; }
};

// Shared memory of the fused kernel for trees of up to `leaves` leaves and `stat_leaves` stat
// leaves, chunks of `chunk_rows` rows, models of up to `wide_kv` values on the wide path (0: none).
__host__ __device__ inline std::size_t fused_smem_bytes(int leaves, int stat_leaves, int chunk_rows, int wide_kv,
                                                        bool smem_leaves) {
  std::size_t b = static_cast<std::size_t>(FusedPolicy::kWarps) * FusedPolicy::kWideTile * static_cast<std::size_t>(wide_kv) * 8;
  if (smem_leaves) b += static_cast<std::size_t>(leaves) * (8 + 4);
  b += (static_cast<std::size_t>(FusedPolicy::kWarps) * stat_leaves + stat_leaves + 1) * 4;
  b = (b + 15) / 16 * 16;
  b += static_cast<std::size_t>(chunk_rows) * 2 * 2;
  return b;
}

}  // namespace gpudm::backend::cuda::gmt_cuda
