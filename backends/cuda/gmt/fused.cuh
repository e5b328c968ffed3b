#pragma once
// The fast path's kernels (issue 23): per evaluator call one fused statistics pass over the rows
// for every tree of the batch, a fixed-order merge, a batched solve. Six kernels in one graph (the last two work only
// for trees with a near-exact leaf fit):
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
// exact, so a call's results are bit-identical from run to run.
#include <cstdint>

#include <cuda/atomic>

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
  static constexpr int kNarrowNs = 20;         // n_stats(kNarrowKv): a warp's narrow sums in the block mode's scratch
  // How the stats pass shares a stat leaf's rows of a chunk among the block's warps
  // (GPUDM_GMT_STAT_SPLIT): kSplitWarps, the rows in W runs, a partial per (chunk, warp), each run
  // shifted by its own first row (162d8dd); kSplitLeaf, a warp per stat leaf, one partial per chunk
  // (29fd70b); kSplitBlock, the rows in W runs shifted by the chunk's first row of the leaf, the
  // warps' narrow sums added in warp order into one partial per chunk, wide models' sums split over
  // the warps by entries; kSplitAuto (the default), per (chunk, stat leaf): a leaf with
  // kSplitMinRows rows or more in the chunk as kSplitWarps, a smaller one taken whole by warp
  // si mod W as kSplitLeaf.
  static constexpr int kSplitWarps = 0, kSplitLeaf = 1, kSplitBlock = 2, kSplitAuto = 3;
  static constexpr int kSplitMinRows = 128;    // kSplitAuto: a run of 32 rows or more per warp
  static constexpr int kMergeBlock = 256;      // threads of the merge's block per stat leaf
  // The solve: a thread per stat leaf, kSolveBlock threads a block; a leaf of at most kSolveSmemKv
  // values (attributes + y) solves in the block's shared memory, wider ones in the global work
  // space. kSolveStride (doubles a thread: its Gram, shift and coefficients) is odd, so a
  // half-warp's threads at the same offset hit different banks.
  static constexpr int kSolveBlock = 32;
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
  b += static_cast<std::size_t>(FusedPolicy::kWarps) * FusedPolicy::kNarrowNs * 8;  // the block mode's scratch
  if (smem_leaves) b += static_cast<std::size_t>(leaves) * (8 + 4);
  b += (static_cast<std::size_t>(FusedPolicy::kWarps) * stat_leaves + stat_leaves + 1) * 4;
  b = (b + 15) / 16 * 16;
  b += static_cast<std::size_t>(chunk_rows) * 2 * 2;
  return b;
}

__device__ __forceinline__ unsigned fused_lanemask_lt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// R rows at once: the levels of the R walks interleave, so R feature loads (and R node loads) are
// in flight together instead of one dependent chain per lane. Rows with valid[r] false stay at
// leaf 0 and read nothing.
// `tag` (optional): each row's leaf node's `pad` field (the stats pass: the leaf's stat index in its
// tree, or -1), read with the node instead of from a table after the walk.
template <int R>
__device__ __forceinline__ void fused_route_n(const PackedNode* __restrict__ nodes, const float* __restrict__ feat, int ld,
                                              const long long* row, const bool* valid, int* leaf, int* tag = nullptr) {
  const int4 root = __ldg(reinterpret_cast<const int4*>(nodes));
  int4 nd[R];
  bool more = false;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    nd[r] = root;
    if (!valid[r]) nd[r].x = -1;
    more |= nd[r].x >= 0;
  }
  while (more) {
    float x[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (nd[r].x >= 0) x[r] = __ldg(feat + (static_cast<long long>(nd[r].x) * ld + row[r]));  // ld < 2^31: 32x32->64
    more = false;
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (nd[r].x >= 0) {
        const int i = nd[r].z + (x[r] <= __int_as_float(nd[r].y) ? 0 : 1);  // NaN fails <= and goes right
        nd[r] = __ldg(reinterpret_cast<const int4*>(nodes + i));
        more |= nd[r].x >= 0;
      }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    leaf[r] = -1 - nd[r].x;
    if (tag) tag[r] = nd[r].w;
  }
}

// Lane `lane` of a warp routes rows base + 32 q + lane, q < R (R walks interleaved); rows at or
// past `end` are not valid and read nothing.
template <int R>
__device__ __forceinline__ void fused_route_lanes(const PackedNode* __restrict__ nodes, const float* __restrict__ feat, int ld,
                                                  long long base, long long end, int lane, long long* row, bool* valid, int* leaf,
                                                  int* tag = nullptr) {
#pragma unroll
  for (int q = 0; q < R; ++q) {
    row[q] = base + 32 * q + lane;
    valid[q] = row[q] < end;
  }
  fused_route_n<R>(nodes, feat, ld, row, valid, leaf, tag);
}

__device__ __forceinline__ int fused_route(const PackedNode* __restrict__ nodes, const float* __restrict__ feat, long long ld,
                                           long long row) {
  int i = 0;
  int4 nd = __ldg(reinterpret_cast<const int4*>(nodes));
  while (nd.x >= 0) {
    const float x = __ldg(feat + static_cast<long long>(nd.x) * ld + row);
    i = nd.z + (x <= __int_as_float(nd.y) ? 0 : 1);  // NaN fails <= and goes right
    nd = __ldg(reinterpret_cast<const int4*>(nodes + i));
  }
  return -1 - nd.x;
}

// Value j of a row for a stat leaf: attribute a[j] for j < kv - 1, the target for j = kv - 1.
__device__ __forceinline__ double fused_value(const float* __restrict__ feat, const float* __restrict__ y, long long ld,
                                              const int* __restrict__ a, int j, int kv, long long row) {
  return j < kv - 1 ? static_cast<double>(__ldg(feat + static_cast<long long>(a[j]) * ld + row))
                    : static_cast<double>(__ldg(y + row));
}

// Each of the warp's lanes gets the sum over the lanes of a[q], q < N, by a fixed xor tree (the same
// order on every run).
template <int N>
__device__ __forceinline__ void fused_warp_sum(double* a) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
#pragma unroll
    for (int q = 0; q < N; ++q) a[q] += __shfl_xor_sync(0xFFFFFFFFu, a[q], o);
}

// Sums of a stat leaf's rows of the chunk, lanes over rows, KV values per row in registers.
template <int KV>
__device__ void fused_narrow(const float* __restrict__ feat, const float* __restrict__ y, long long ld, const int* __restrict__ a,
                             const unsigned short* __restrict__ rows, int m, long long r0, long long krow,
                             double* __restrict__ out, int lane) {
  constexpr int NS = (KV + 1) * (KV + 2) / 2 - 1;
  double shift[KV];
#pragma unroll
  for (int j = 0; j < KV; ++j) shift[j] = fused_value(feat, y, ld, a, j, KV, krow);
  double s[NS];
#pragma unroll
  for (int q = 0; q < NS; ++q) s[q] = 0.0;
  for (int p = lane; p < m; p += 32) {
    const long long row = r0 + rows[p];
    double v[KV];
#pragma unroll
    for (int j = 0; j < KV; ++j) v[j] = fused_value(feat, y, ld, a, j, KV, row) - shift[j];
    int q = 0;
#pragma unroll
    for (int j = 0; j < KV; ++j) s[q++] += v[j];
#pragma unroll
    for (int i = 0; i < KV; ++i)
#pragma unroll
      for (int j = i; j < KV; ++j) s[q++] += v[i] * v[j];
  }
  fused_warp_sum<NS>(s);
  if (lane == 0)
#pragma unroll
    for (int q = 0; q < NS; ++q) out[q] = s[q];
}

// Packed entry e of a stat vector (leaf_stats.hpp) as (i, j) of u = [1, v].
__device__ __forceinline__ void fused_entry(int e, int kv, int* i, int* j) {
  int row = 0, len = kv;
  while (e >= len) {
    e -= len;
    ++row;
    len = kv + 1 - row;
  }
  *i = row;
  *j = row == 0 ? e + 1 : row + e;
}

// Wide models: lanes over the sums, rows staged kWideTile at a time in the warp's tile; each sum
// runs over the rows in order.
template <int E>
__device__ void fused_wide(const float* __restrict__ feat, const float* __restrict__ y, long long ld, const int* __restrict__ a,
                           int kv, const unsigned short* __restrict__ rows, int m, long long r0, long long krow,
                           double* __restrict__ out, double* __restrict__ tile, int lane, int sweep0, int sweeps) {
  const int ns = ::gpudm::gmt::leafstats::n_stats(kv);
  constexpr int T = FusedPolicy::kWideTile;
  for (int e0 = sweep0 * 32 * E; e0 < ns; e0 += sweeps * 32 * E) {  // (sweep0, sweeps: a warp's share of the sweeps)
    int ei[E], ej[E];
    double acc[E];
#pragma unroll
    for (int q = 0; q < E; ++q) {
      const int e = e0 + lane + 32 * q;
      ei[q] = -1;
      ej[q] = 0;
      acc[q] = 0.0;
      if (e < ns) fused_entry(e, kv, &ei[q], &ej[q]);
    }
    for (int p0 = 0; p0 < m; p0 += T) {
      const int rn = m - p0 < T ? m - p0 : T;
      for (int idx = lane; idx < rn * kv; idx += 32) {
        const int r = idx / kv, j = idx - r * kv;
        const long long row = r0 + rows[p0 + r];
        tile[idx] = fused_value(feat, y, ld, a, j, kv, row) - fused_value(feat, y, ld, a, j, kv, krow);
      }
      __syncwarp();
      for (int r = 0; r < rn; ++r)
#pragma unroll
        for (int q = 0; q < E; ++q) {
          if (ei[q] < 0) continue;
          const double vi = ei[q] == 0 ? 1.0 : tile[r * kv + ei[q] - 1];
          acc[q] += vi * tile[r * kv + ej[q] - 1];
        }
      __syncwarp();
    }
#pragma unroll
    for (int q = 0; q < E; ++q)
      if (ei[q] >= 0) out[e0 + lane + 32 * q] = acc[q];
  }
}

// The wide path with E sums per lane and sweep, E the least of 1, 2, 4, kWideEntries whose sweep
// holds the model's n_stats sums (wider: several sweeps). Each sum is one lane's, over the rows in
// order, whatever E is: the same bits for every E (E = 8 for a 27-sum model left 7 of a lane's 8
// slots idle in every row's step).
__device__ __forceinline__ void fused_wide_any(const float* __restrict__ feat, const float* __restrict__ y, long long ld,
                                               const int* __restrict__ a, int kv, const unsigned short* __restrict__ rows, int m,
                                               long long r0, long long krow, double* __restrict__ out, double* __restrict__ tile,
                                               int lane, int sweep0 = 0, int sweeps = 1) {
  static_assert(FusedPolicy::kWideEntries == 8, "E in 1, 2, 4, 8");
  const int ns = ::gpudm::gmt::leafstats::n_stats(kv);
  if (ns <= 32) fused_wide<1>(feat, y, ld, a, kv, rows, m, r0, krow, out, tile, lane, sweep0, sweeps);
  else if (ns <= 64) fused_wide<2>(feat, y, ld, a, kv, rows, m, r0, krow, out, tile, lane, sweep0, sweeps);
  else if (ns <= 128) fused_wide<4>(feat, y, ld, a, kv, rows, m, r0, krow, out, tile, lane, sweep0, sweeps);
  else fused_wide<8>(feat, y, ld, a, kv, rows, m, r0, krow, out, tile, lane, sweep0, sweeps);
}

__global__ void fused_init_kernel(const FusedView* __restrict__ vp) {
  const FusedView& v = *vp;
  const int stride = gridDim.x * blockDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < v.L; i += stride) {
    LeafOut o;
    o.lo = ::gpudm::gmt::leafstats::kNoLoKey;
    o.hi = ::gpudm::gmt::leafstats::kNoHiKey;
    o.rnd = ::gpudm::gmt::leafstats::kNoLoKey;
    o.count = 0;
    o.pad = 0;
    v.leaf_out[i] = o;
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < v.S; i += stride) v.stat_out[i].nstray = 0;
}

// kMaxKv: the widest model the variant sums (values per row): 3 or kNarrowKv compile only the
// narrow sums up to that width (fewer registers, more resident warps for the routing); 0 compiles
// every width (the narrow sums up to kNarrowKv, the wide path above). A width sums the same way in
// every variant that takes it, so the host may pick the variant per call from the batch.
// kMinBlocks: resident blocks per SM the registers are capped for (0: the compiler's choice; the
// every-width variant with shared-memory leaf atomics takes 128 registers, 4 blocks of 4 warps an
// SM; GPUDM_GMT_STATS_CAP=5 or 6 caps it at 96 or 80, spilling what does not fit to local memory).
// The same arithmetic, so the same bits.
template <bool kSmemLeaves, int kMaxKv, int kMinBlocks = 0>
__global__ void __launch_bounds__(FusedPolicy::kBlock, kMinBlocks) fused_stats_kernel(const FusedView* __restrict__ vp, DatasetView d,
                                                                                      int wide_kv) {
  namespace ls = ::gpudm::gmt::leafstats;
  constexpr int W = FusedPolicy::kWarps;
  const FusedView& v = *vp;
  // The block's tree (its rank in t_order: the heaviest trees' blocks are dispatched first) and
  // chunk; which grid axis is which is the host's choice (FusedView::chunk_major).
  const int tr = static_cast<int>(v.chunk_major ? blockIdx.y : blockIdx.x);
  const int chunk = static_cast<int>(v.chunk_major ? blockIdx.x : blockIdx.y);
  if (tr >= v.B || chunk >= v.chunks) return;
  const int t = v.t_order[tr];
  const long long r0 = static_cast<long long>(chunk) * v.chunk_rows;
  const long long r1 = r0 + v.chunk_rows < v.rows ? r0 + v.chunk_rows : v.rows;
  const int node0 = v.t_node0[t];
  const int leaf0 = v.t_leaf0[t], nl = v.t_leaf0[t + 1] - leaf0;
  const int stat0 = v.t_stat0[t], ns = v.t_stat0[t + 1] - stat0;
  const std::uint32_t salt32 = ::gpudm::gmt::leafstats::dipole_salt32(v.t_salt[t]);
  const PackedNode* nodes = v.nodes + node0;
  const float* feat = d.features;
  const float* yv = d.targets;
  const long long ld = v.ld;
  const int tid = threadIdx.x, w = tid / 32, lane = tid % 32;

  extern __shared__ __align__(16) unsigned char fused_smem[];
  unsigned char* p = fused_smem;
  double* tile = reinterpret_cast<double*>(p);
  p += static_cast<std::size_t>(W) * FusedPolicy::kWideTile * wide_kv * 8;
  double* scratch = reinterpret_cast<double*>(p);  // [W x kNarrowNs]
  p += static_cast<std::size_t>(W) * FusedPolicy::kNarrowNs * 8;
  unsigned long long* rnd_s = nullptr;
  int* cnt_s = nullptr;
  if (kSmemLeaves) {
    rnd_s = reinterpret_cast<unsigned long long*>(p);
    cnt_s = reinterpret_cast<int*>(rnd_s + nl);
    p = reinterpret_cast<unsigned char*>(cnt_s + nl);
  }
  int* wcnt = reinterpret_cast<int*>(p);  // [W x ns]: counts, then write positions
  int* soff = wcnt + W * ns;              // [ns + 1]
  p = reinterpret_cast<unsigned char*>(soff + ns + 1);
  p = fused_smem + (static_cast<std::size_t>(p - fused_smem) + 15) / 16 * 16;
  unsigned short* lid = reinterpret_cast<unsigned short*>(p);  // [chunk rows] stat leaf per row
  unsigned short* sorted = lid + v.chunk_rows;                  // [chunk rows] rows grouped by stat leaf

  if (kSmemLeaves)
    for (int i = tid; i < nl; i += blockDim.x) {
      rnd_s[i] = ls::kNoLoKey;
      cnt_s[i] = 0;
    }
  for (int i = tid; i < W * ns; i += blockDim.x) wcnt[i] = 0;
  __syncthreads();

  // Route: warp w owns the contiguous rows [wr0, wr1) of the chunk, 32 at a time. The lanes that
  // reach the same leaf are grouped (match_any) and their leader updates the leaf once: a stat
  // leaf's per-warp count (its rows are summed below from the sorted list, keys included); a
  // clean leaf's count and minimum dipole key (its lowest / highest-target rows are the last
  // evaluation's: same rows).
  const long long span = (r1 - r0 + W - 1) / W;
  const long long wr0 = r0 + w * span < r1 ? r0 + w * span : r1;
  const long long wr1 = wr0 + span < r1 ? wr0 + span : r1;
  constexpr int R = FusedPolicy::kRouteRows;
  for (long long base = wr0; base < wr1; base += 32 * R) {
    long long rws[R];
    bool ok[R];
    int lls[R], sis[R];
    fused_route_lanes<R>(nodes, feat, static_cast<int>(ld), base, wr1, lane, rws, ok, lls, sis);
#pragma unroll
    for (int r = 0; r < R; ++r) {
    const long long row = rws[r];
    const bool valid = ok[r];
    __syncwarp();  // the last step's leader updates of wcnt are seen by this step's leaders
    const unsigned vmask = __ballot_sync(0xFFFFFFFFu, valid);
    if (!valid) continue;
    const int ll = lls[r];
    const unsigned peers = __match_any_sync(vmask, ll);
    const bool leader = lane == __ffs(peers) - 1;
    const int si = sis[r];  // the leaf's stat index in the tree (the packed leaf's pad), or -1
    if (si >= 0) {
      lid[row - r0] = static_cast<unsigned short>(si);
      if (leader) wcnt[w * ns + si] += __popc(peers);  // this warp's entry: no other writer
    } else {
      lid[row - r0] = 0xFFFFu;
      // The leaf's minimum dipole key: a lane whose key is under the minimum so far updates it
      // (the minimum only falls, so a stale read can only cost an extra atomic, never skip one;
      // after a few rows almost no key is under it). Exact in any order.
      const unsigned long long krn = ls::dipole_key_s(salt32, static_cast<unsigned long long>(row + v.row_base));
      unsigned long long* rmin = kSmemLeaves ? rnd_s + ll : &v.leaf_out[leaf0 + ll].rnd;
      if (krn < ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(*rmin).load(::cuda::memory_order_relaxed))
        atomicMin(rmin, krn);
      if (leader) atomicAdd(kSmemLeaves ? cnt_s + ll : &v.leaf_out[leaf0 + ll].count, __popc(peers));
    }
    }
  }
  __syncthreads();

  // Exclusive scan of the (stat leaf, warp) counts in stat-leaf-major order (warp 0).
  if (w == 0) {
    int carry = 0;
    for (int e0 = 0; e0 < ns * W; e0 += 32) {
      const int e = e0 + lane;
      const int si = e / W, ww = e - si * W;
      const int val = e < ns * W ? wcnt[ww * ns + si] : 0;
      int incl = val;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const int nb = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        if (lane >= o) incl += nb;
      }
      if (e < ns * W) {
        wcnt[ww * ns + si] = carry + incl - val;
        if (ww == 0) soff[si] = carry + incl - val;
      }
      carry += __shfl_sync(0xFFFFFFFFu, incl, 31);
    }
    if (lane == 0) soff[ns] = carry;
  }
  __syncthreads();

  // Stable scatter: each warp replays its rows in order; lanes of one leaf take consecutive slots.
  for (long long base = wr0; base < wr1; base += 32) {
    const long long row = base + lane;
    const int si = row < wr1 ? static_cast<int>(lid[row - r0]) : 0xFFFF;
    const bool has = si != 0xFFFF;
    const unsigned active = __ballot_sync(0xFFFFFFFFu, has);
    unsigned peers = 0;
    int pos = 0;
    if (has) {
      peers = __match_any_sync(active, si);
      pos = wcnt[w * ns + si] + __popc(peers & fused_lanemask_lt());
      sorted[pos] = static_cast<unsigned short>(row - r0);
    }
    __syncwarp();
    if (has && lane == __ffs(peers) - 1) wcnt[w * ns + si] += __popc(peers);
    __syncwarp();
  }
  __syncthreads();

  // Per stat leaf (FusedPolicy's split modes): the leaf's rows of the chunk, all of them (leaf mode:
  // a warp per stat leaf) or the w-th of W equal runs in row order (warps and block modes); per
  // run the keys (atomics) and, for a leaf under the repair limit in the chunk, its rows; the sums
  // into partial (chunk, w) shifted by the run's first row (warps mode) or into partial (chunk, 0)
  // shifted by the chunk's first row of the leaf (leaf and block modes; block: the warps' sums
  // added in warp order; auto: per leaf, warps mode at kSplitMinRows rows or more, else leaf
  // mode). The loop is uniform over the block in block mode (its barriers).
  const int mode = v.stat_split;
  const bool by_leaf = mode == FusedPolicy::kSplitLeaf;
  for (int si = by_leaf ? w : 0; si < ns; si += by_leaf ? W : 1) {
    const int gs = stat0 + si;
    const int mall = soff[si + 1] - soff[si];
    // runs: the w-th of W runs into this warp's own partial (warps mode; auto mode's large leaves);
    // whole: all the chunk's rows by one warp (leaf mode; auto mode's small leaves, warp si mod W)
    const bool runs = mode == FusedPolicy::kSplitWarps || (mode == FusedPolicy::kSplitAuto && mall >= FusedPolicy::kSplitMinRows);
    const bool whole = by_leaf || (mode == FusedPolicy::kSplitAuto && !runs);
    if (whole && !by_leaf && si % W != w) continue;
    const int q0 = whole ? 0 : static_cast<int>(static_cast<long long>(mall) * w / W);
    const int m = whole ? mall : static_cast<int>(static_cast<long long>(mall) * (w + 1) / W) - q0;
    const unsigned short* all_rows = sorted + soff[si];
    const unsigned short* rows = all_rows + q0;
    // this warp's partial, and the row its sums are shifted by
    const std::size_t part_i = static_cast<std::size_t>(chunk) * W + (runs ? w : 0);
    const bool writer = mode != FusedPolicy::kSplitBlock || w == 0;  // writes its partial's count, shift and sums
    const long long krow = runs ? (m > 0 ? r0 + rows[0] : -1) : (mall > 0 ? r0 + all_rows[0] : -1);
    if (lane == 0 && writer) {
      if (runs) {
        v.part_n[part_i * v.S + gs] = m;
        v.part_k[part_i * v.S + gs] = krow >= 0 ? static_cast<int>(krow + v.row_base) : -1;
      } else {  // partial (chunk, 0) holds the chunk; the chunk's other partials stay empty
        for (int q = 0; q < W; ++q) {
          const std::size_t pq = (static_cast<std::size_t>(chunk) * W + q) * v.S + gs;
          v.part_n[pq] = q == 0 ? mall : 0;
          v.part_k[pq] = q == 0 && krow >= 0 ? static_cast<int>(krow + v.row_base) : -1;
        }
      }
    }
    if (m > 0) {  // the leaf's dipole keys over the run's rows: integer min / max, exact in any order
      unsigned long long klo = ls::kNoLoKey, khi = ls::kNoHiKey, krn = ls::kNoLoKey;
      for (int q = lane; q < m; q += 32) {
        const long long row = r0 + rows[q];
        const float yr = __ldg(yv + row);
        const auto grow = static_cast<unsigned long long>(row + v.row_base);  // (the whole data's row id)
        const unsigned long long a = ls::lo_key(yr, grow);
        const unsigned long long b = ls::hi_key(yr, grow);
        const unsigned long long c = ls::dipole_key_s(salt32, grow);
        klo = a < klo ? a : klo;
        khi = b > khi ? b : khi;
        krn = c < krn ? c : krn;
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long a = __shfl_xor_sync(0xFFFFFFFFu, klo, o);
        const unsigned long long b = __shfl_xor_sync(0xFFFFFFFFu, khi, o);
        const unsigned long long c = __shfl_xor_sync(0xFFFFFFFFu, krn, o);
        klo = a < klo ? a : klo;
        khi = b > khi ? b : khi;
        krn = c < krn ? c : krn;
      }
      if (lane == 0) {
        LeafOut& o = v.leaf_out[v.s_leaf[gs]];
        atomicMin(&o.lo, klo);
        atomicMax(&o.hi, khi);
        atomicMin(&o.rnd, krn);
      }
    }
    if (m > 0 && mall <= v.stray_cap) {  // (the host sorts the recorded rows)
      int b0 = 0;
      if (lane == 0) b0 = atomicAdd(&v.stat_out[gs].nstray, m);
      b0 = __shfl_sync(0xFFFFFFFFu, b0, 0);
      for (int q = lane; q < m && b0 + q < v.stray_cap; q += 32)
        v.strays[static_cast<std::size_t>(gs) * v.stray_cap + b0 + q] = static_cast<int>(r0 + rows[q] + v.row_base);
    }
    const int kv = v.s_k[gs] + 1;
    if (kv > FusedPolicy::kMaxKv || mall == 0) continue;  // the exact solver takes the leaf / no rows (uniform over the block)
    const int* a = v.attrs + v.s_attr0[gs];
    if (writer && krow >= 0) {  // the values at the shift row, for the merge's re-shift (read here once instead of per entry there)
      double* ps = v.part_shift + part_i * static_cast<std::size_t>(v.coef_total) + v.s_attr0[gs] + gs;
      for (int j = lane; j < kv; j += 32) ps[j] = fused_value(feat, yv, ld, a, j, kv, krow);
    }
    double* out = v.part + part_i * static_cast<std::size_t>(v.stat_total) + v.s_stat0[gs];
    double* tw = tile + static_cast<std::size_t>(w) * FusedPolicy::kWideTile * wide_kv;
    static_assert(FusedPolicy::kNarrowKv == 5 && FusedPolicy::kNarrowNs == 20, "the narrow cases below");
    if (mode == FusedPolicy::kSplitBlock) {
      if (kv <= FusedPolicy::kNarrowKv) {  // each warp its run's sums (shifted by krow) into the scratch, then added in warp order
        double* sw = scratch + w * FusedPolicy::kNarrowNs;
        if (kv == 1) fused_narrow<1>(feat, yv, ld, a, rows, m, r0, krow, sw, lane);
        else if (kv == 2) fused_narrow<2>(feat, yv, ld, a, rows, m, r0, krow, sw, lane);
        else if (kv == 3 || kMaxKv == 3) fused_narrow<3>(feat, yv, ld, a, rows, m, r0, krow, sw, lane);
        else if (kv == 4) fused_narrow<4>(feat, yv, ld, a, rows, m, r0, krow, sw, lane);
        else fused_narrow<5>(feat, yv, ld, a, rows, m, r0, krow, sw, lane);
        __syncthreads();
        const int nst = ls::n_stats(kv);
        if (w == 0 && lane < nst) {
          double t = scratch[lane];
          for (int q = 1; q < W; ++q) t += scratch[q * FusedPolicy::kNarrowNs + lane];
          out[lane] = t;
        }
        __syncthreads();  // (the scratch is reused by the next stat leaf)
      } else if (kMaxKv == 0) {  // wide: every warp all the rows, the warps splitting the sweeps over the sums
        fused_wide_any(feat, yv, ld, a, kv, all_rows, mall, r0, krow, out, tw, lane, w, W);
      }
      continue;
    }
    if (m == 0) continue;
    if (kv == 1) fused_narrow<1>(feat, yv, ld, a, rows, m, r0, krow, out, lane);
    else if (kv == 2) fused_narrow<2>(feat, yv, ld, a, rows, m, r0, krow, out, lane);
    else if (kv == 3 || kMaxKv == 3) fused_narrow<3>(feat, yv, ld, a, rows, m, r0, krow, out, lane);
    else if (kv == 4) fused_narrow<4>(feat, yv, ld, a, rows, m, r0, krow, out, lane);
    else if (kv == 5 || kMaxKv == FusedPolicy::kNarrowKv) fused_narrow<5>(feat, yv, ld, a, rows, m, r0, krow, out, lane);
    else if (kMaxKv == 0) fused_wide_any(feat, yv, ld, a, kv, rows, m, r0, krow, out, tw, lane);
  }

  if (kSmemLeaves) {
    __syncthreads();
    for (int i = tid; i < nl; i += blockDim.x) {
      if (cnt_s[i] == 0) continue;
      LeafOut& o = v.leaf_out[leaf0 + i];
      atomicAdd(&o.count, cnt_s[i]);
      atomicMin(&o.rnd, rnd_s[i]);
    }
  }
}

// Stat leaf gs's least squares (leafstats::solve_stats: the CPU's rank rule, ambiguous pivots
// flagged for the exact QR solver) or, for given coefficients, its SSE (sse_with_coef), from its
// merged statistics `st` of n rows and its values at the shift row `shift`; then its StatOut (rank,
// flag, SSE, and resid: a near-exact fit whose SSE lost digits to cancellation, for the residual
// pass) and its coefficients. work: kv x kv doubles, kept: k ints, cf: k + 1 doubles (the
// coefficients; copied to the output when they are not the output itself). One thread; inlined,
// so each caller's pointers keep their memory space (shared-memory work space: no generic accesses).
__device__ __forceinline__ void fused_solve_leaf(const FusedView& v, const ::gpudm::gmt::leafstats::SolveParams& sp, int gs, long long n,
                                                 const double* st, const double* shift, double* work, int* kept, double* cf) {
  namespace ls = ::gpudm::gmt::leafstats;
  StatOut& so = v.stat_out[gs];
  const int k = v.s_k[gs], kv = k + 1;
  double* coef = v.coef + v.s_attr0[gs] + gs;
  if (kv > FusedPolicy::kMaxKv) {  // the exact solver takes it
    so.flag = ls::kAmbiguous;
    so.rank = -1;
    so.sse = 0.0;
    so.resid = 0;
    return;
  }
  if (v.s_fit[gs]) {
    const ls::SolveOut r = ls::solve_stats(k, n, st, shift, sp, work, kept, cf);
    if (cf != coef)
      for (int j = 0; j <= k; ++j) coef[j] = cf[j];
    so.rank = r.rank;
    so.flag = r.flag;
    so.sse = r.sse;
  } else {
    const double* given = v.coef_in + v.s_attr0[gs] + gs;
    for (int j = 0; j <= k; ++j) coef[j] = given[j];
    so.rank = -1;
    so.flag = ls::kSolved;
    so.sse = ls::sse_with_coef(k, n, st, shift, coef);
  }
  so.resid = 0;
  if (so.flag == ls::kSolved && k > 0 && n > 0) {
    const double cyy = st[ls::stat_index(kv, kv, kv)] - st[ls::stat_index(0, kv, kv)] * st[ls::stat_index(0, kv, kv)] / static_cast<double>(n);
    so.resid = so.sse <= FusedPolicy::kResidualRatio * cyy ? 1 : 0;
  }
}

// Entry (i, j) of a stat vector (u = [1, v]) whose sums `src` of n rows are shifted by the values
// `pc` at their shift row, re-shifted to the values `p0` at another: sums of (w + dd), dd = pc - p0
// (leaf_stats.hpp's algebra).
__device__ __forceinline__ double fused_reshift(double x, int i, int j, const double* src, int kv, long long n, const double* pc,
                                                const double* p0) {
  namespace ls = ::gpudm::gmt::leafstats;
  const double dj = pc[j - 1] - p0[j - 1];
  if (i == 0) return x + static_cast<double>(n) * dj;
  const double di = pc[i - 1] - p0[i - 1];
  return x + (di * src[ls::stat_index(0, j, kv)] + dj * src[ls::stat_index(0, i, kv)] + static_cast<double>(n) * di * dj);
}

// A block per stat leaf at a time (kMergeBlock threads, or 128: GPUDM_GMT_MERGE_BLOCK; at most the
// blocks resident at once, each looping over the leaves), the merge's two levels (FusedGroups). Every sum
// is one thread's chain in a fixed order (no reduction tree), so its bits do not depend on which
// thread, block or rank forms it:
//  level 1 (levels & 1), per group g of this device's groups [g0, g1): its rows and first non-empty
//    partial (lanes of a warp a group, integers), then a thread per (run, 8 entries) adds the run's
//    partials in order and the group's runs in order, each re-shifted to the group's first partial's
//    shift row; the group's rows, shift row, values there and sums into its record (grec);
//  level 2 (levels & 2), from all G groups' records: a thread per entry adds the groups in group
//    order, each re-shifted to the first non-empty group's shift row (the leaf's first row).
// One process runs both in one launch; a rank of a rows split runs level 1, the ranks exchange the
// records, and every rank runs level 2 on all of them: the same records give the same bits.
// solve_here (GPUDM_GMT_MERGE_SOLVE, default 1; always with level 2 of a rows split): then the
// block's thread 0 solves the leaf (fused_solve_leaf), a leaf of at most kSolveSmemKv values from
// the merged sums and shift values kept in shared memory, a wider one in the global work space;
// otherwise fused_solve_kernel does, after this kernel. The same sums and the same solve either
// way, so the same bits.
// Two blocks an SM (128 registers): the merge is latency-bound, and at 6fb43c0 ptxas gave it 166
// registers (one block an SM), which cost Elnino / Pol +0.037 / +0.026 ms an iteration
// (perf-notes-mpi, nineteenth session).
__global__ void __launch_bounds__(FusedPolicy::kMergeBlock, 2) fused_merge_kernel(const FusedView* __restrict__ vp, DatasetView d,
                                                                              ::gpudm::gmt::leafstats::SolveParams sp, int solve_here,
                                                                              int levels) {
  namespace ls = ::gpudm::gmt::leafstats;
  (void)d;
  constexpr int W = FusedPolicy::kWarps;
  constexpr int SK = FusedPolicy::kSolveSmemKv;
  __shared__ double s_st[(SK + 1) * (SK + 2) / 2 - 1];  // the merged sums of a leaf of <= SK values
  __shared__ double s_work[FusedPolicy::kSolveStride];  // its Gram, shift values and coefficients
  __shared__ int s_kept[SK];
  __shared__ int s_first[FusedGroups::kGroups];         // level 1: a group's first non-empty partial
  __shared__ long long s_k[FusedGroups::kGroups];       // and its shift row
  __shared__ int s_run0[FusedGroups::kGroups + 1];      // level 1: the device's groups' first runs (FusedGroups::runs)
  __shared__ int s_c0[FusedGroups::kGroups + 1];        // and first chunks (of this device's, FusedGroups::chunk_begin - chunk0)
  __shared__ unsigned long long s_ln[FusedGroups::kGroups];  // level 1: a group's rows of the leaf
  __shared__ int s_gf;                                  // level 2: the first non-empty group
  __shared__ long long s_n;                             // and the leaf's rows
  constexpr int SNS = (SK + 1) * (SK + 2) / 2 - 1;      // level 2 of a leaf of <= SK values: its records staged here
  __shared__ long long s_gn[FusedGroups::kGroups], s_gk[FusedGroups::kGroups];
  __shared__ double s_gsh[FusedGroups::kGroups * SK], s_gsum[FusedGroups::kGroups * SNS];
  const FusedView& v = *vp;
  const int tid = static_cast<int>(threadIdx.x), TB = static_cast<int>(blockDim.x);
  // The grid is fixed when the graph is captured (at most the blocks resident at once, launch_all):
  // a block past this call's stat leaves ends here, before any barrier (block-uniform).
  if (static_cast<int>(blockIdx.x) >= v.S) return;
  const long long rec = FusedGroups::record(v.S, v.coef_total, v.stat_total);
  const int ngl = v.g1 - v.g0;  // this device's groups (<= kGroups: a lane each)
  if (tid < 32) {  // warp 0: the groups' first chunks, and their first runs by an inclusive scan (integers)
    const int q = tid;
    int c0 = 0, c1 = 0;
    if (q < ngl) {
      c0 = FusedGroups::chunk_begin(v.g0 + q, v.G, v.chunks_all) - v.chunk0;
      c1 = FusedGroups::chunk_begin(v.g0 + q + 1, v.G, v.chunks_all) - v.chunk0;
    }
    int r = q < ngl ? FusedGroups::runs_of(c1 - c0) : 0;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int up = __shfl_up_sync(0xFFFFFFFFu, r, o);
      if (q >= o) r += up;
    }
    if (q < ngl) {
      s_c0[q] = c0;
      s_run0[q + 1] = r;
      if (q == ngl - 1) s_c0[ngl] = c1;
    }
    if (q == 0) s_run0[0] = 0;
  }
  __syncthreads();
  for (int gs = blockIdx.x; gs < v.S; gs += gridDim.x) {
    const int k = v.s_k[gs], kv = k + 1;
    const int nst = ls::n_stats(kv);
    const std::size_t shift_at = static_cast<std::size_t>(v.s_attr0[gs] + gs);
    const bool sums = kv <= FusedPolicy::kMaxKv;  // (wider: the exact solver takes the leaf; rows and shift row only)
    if (levels & 1) {
      // tpg lanes of one warp per group (a power of two <= 32): a group's rows and first non-empty
      // partial, each lane over every tpg-th partial, then shuffles within the lanes (integers: the
      // same in any order; every lane of the warps in play shuffles)
      {
        int tpg = 32;
        while (tpg > 1 && tpg * ngl > TB) tpg >>= 1;
        const int q = tid / tpg, sub = tid - q * tpg;
        if (tid < (ngl * tpg + 31) / 32 * 32) {
          long long n = 0;
          int first = 0x7FFFFFFF;
          if (q < ngl) {
            const int c0 = s_c0[q] * W, np = s_c0[q + 1] * W - c0;
            for (int i0 = sub; i0 < np; i0 += 4 * tpg) {  // 4 loads in flight a lane
              int nc[4];
#pragma unroll
              for (int u = 0; u < 4; ++u) {
                const int i = i0 + u * tpg;
                nc[u] = i < np ? v.part_n[static_cast<std::size_t>(c0 + i) * v.S + gs] : 0;
              }
#pragma unroll
              for (int u = 0; u < 4; ++u) {
                n += nc[u];
                if (nc[u] > 0 && c0 + i0 + u * tpg < first) first = c0 + i0 + u * tpg;
              }
            }
          }
          for (int o = tpg / 2; o > 0; o >>= 1) {
            n += __shfl_xor_sync(0xFFFFFFFFu, n, o);
            const int f = __shfl_xor_sync(0xFFFFFFFFu, first, o);
            first = f < first ? f : first;
          }
          if (q < ngl && sub == 0) {
            s_ln[q] = static_cast<unsigned long long>(n);
            s_first[q] = first;
          }
        }
      }
      __syncthreads();
      for (int q = tid; q < ngl; q += TB) {  // a thread per group: its record's rows, shift row and values there
        const int g = v.g0 + q;
        double* r = v.grec + static_cast<long long>(g) * rec;
        const int p1 = s_c0[q + 1] * W;
        const int first = s_first[q] < p1 ? s_first[q] : p1;
        const long long n = static_cast<long long>(s_ln[q]);
        const long long kg = n > 0 ? v.part_k[static_cast<std::size_t>(first) * v.S + gs] : -1;
        FusedGroups::n(r, v.S)[gs] = n;
        FusedGroups::k(r, v.S)[gs] = kg;
        s_first[q] = first;
        s_k[q] = kg;
      }
      __syncthreads();
      if (sums) {
        for (int t = tid; t < ngl * kv; t += TB) {  // a thread per (group, value): the values at its shift row into its record
          const int q = t / kv, j = t - q * kv;
          if (s_first[q] >= s_c0[q + 1] * W) continue;  // (no rows)
          FusedGroups::shift(v.grec + static_cast<long long>(v.g0 + q) * rec, v.S)[shift_at + j] =
              v.part_shift[static_cast<std::size_t>(s_first[q]) * static_cast<std::size_t>(v.coef_total) + shift_at + j];
        }
        // 1a: a thread per (run of kRunParts partials, block of E entries): the run's partials in
        // order, re-shifted to the group's first partial's shift row (E independent chains: E loads
        // in flight a step)
        constexpr int E = 8;
        const int RT = s_run0[ngl], EB = (nst + E - 1) / E;
        for (int t = tid; t < RT * EB; t += TB) {
          const int rr = t % RT, e0 = t / RT * E;
          int q = 0;
          while (s_run0[q + 1] <= rr) ++q;
          const int g = v.g0 + q;
          const int first = s_first[q];
          const int gp1 = s_c0[q + 1] * W;
          if (first >= gp1) continue;  // (the group has no rows of the leaf)
          const int p0 = s_c0[q] * W + (rr - s_run0[q]) * FusedGroups::kRunParts;
          const int p1 = p0 + FusedGroups::kRunParts < gp1 ? p0 + FusedGroups::kRunParts : gp1;
          const long long kg = s_k[q];
          const double* psf = v.part_shift + static_cast<std::size_t>(first) * static_cast<std::size_t>(v.coef_total) + shift_at;
          int ei[E], ej[E];
          double acc[E];
#pragma unroll
          for (int u = 0; u < E; ++u) {
            ei[u] = -1;
            ej[u] = 0;
            acc[u] = 0.0;
            if (e0 + u < nst) fused_entry(e0 + u, kv, &ei[u], &ej[u]);
          }
          for (int c = p0; c < p1; ++c) {
            const std::size_t pc = static_cast<std::size_t>(c) * v.S + gs;
            const int nc = v.part_n[pc];
            if (nc == 0) continue;
            const double* src = v.part + static_cast<std::size_t>(c) * static_cast<std::size_t>(v.stat_total) + v.s_stat0[gs];
            const bool shifted = v.part_k[pc] != kg;
            const double* psc = v.part_shift + static_cast<std::size_t>(c) * static_cast<std::size_t>(v.coef_total) + shift_at;
#pragma unroll
            for (int u = 0; u < E; ++u) {
              if (ei[u] < 0) continue;
              double x = src[e0 + u];
              if (shifted) x = fused_reshift(x, ei[u], ej[u], src, kv, nc, psc, psf);
              acc[u] += x;
            }
          }
          // a group of one run writes its record here: 1b's 0.0 + acc is acc's bits (acc began at
          // 0.0, so it is never -0.0); a longer group's runs go through the run sums
          double* out = s_run0[q + 1] - s_run0[q] == 1
                            ? FusedGroups::sums(v.grec + static_cast<long long>(g) * rec, v.S, v.coef_total) + v.s_stat0[gs]
                            : v.grun + static_cast<std::size_t>(rr) * static_cast<std::size_t>(v.stat_total) + v.s_stat0[gs];
#pragma unroll
          for (int u = 0; u < E; ++u)
            if (e0 + u < nst) out[e0 + u] = acc[u];
        }
        if (RT > ngl) {  // (block-uniform: some group has more than one run)
          __syncthreads();
          // 1b: a thread per (group of more than one run, entry): the group's runs in order
          for (int t = tid; t < ngl * nst; t += TB) {
            const int q = t % ngl, e = t / ngl;
            const int g = v.g0 + q;
            if (s_run0[q + 1] - s_run0[q] == 1) continue;  // (written in 1a)
            if (s_first[q] >= s_c0[q + 1] * W) continue;  // (no rows)
            double acc = 0.0;
            for (int rr = s_run0[q]; rr < s_run0[q + 1]; ++rr)
              acc += v.grun[static_cast<std::size_t>(rr) * static_cast<std::size_t>(v.stat_total) + v.s_stat0[gs] + e];
            FusedGroups::sums(v.grec + static_cast<long long>(g) * rec, v.S, v.coef_total)[v.s_stat0[gs] + e] = acc;
          }
        }
      }
      if (!(levels & 2)) {
        __syncthreads();  // (s_first / s_k are written again for the next leaf)
        continue;
      }
      __syncthreads();  // the block's records of this leaf are seen by level 2
    }
    // level 2: a leaf of <= SK values reads the G records from shared memory (staged by every
    // thread at once: one round trip), a wider one from the records; then its rows and first
    // non-empty group
    const bool local = kv <= SK;
    for (int t = tid; t < v.G * 2; t += TB) {
      const double* r = v.grec + static_cast<long long>(t >> 1) * rec;
      if (t & 1) s_gk[t >> 1] = FusedGroups::k(const_cast<double*>(r), v.S)[gs];
      else s_gn[t >> 1] = FusedGroups::n(const_cast<double*>(r), v.S)[gs];
    }
    if (local)
      for (int t = tid; t < v.G * (kv + nst); t += TB) {
        const int g = t / (kv + nst), e = t - g * (kv + nst);
        double* r = v.grec + static_cast<long long>(g) * rec;
        if (e < kv) s_gsh[g * SK + e] = FusedGroups::shift(r, v.S)[shift_at + e];
        else s_gsum[g * SNS + e - kv] = FusedGroups::sums(r, v.S, v.coef_total)[v.s_stat0[gs] + e - kv];
      }
    __syncthreads();
    if (tid < 32) {  // warp 0, a lane per group: the first non-empty group and the leaf's rows (integers)
      static_assert(FusedGroups::kGroups <= 32, "a lane per group");
      long long n = tid < v.G ? s_gn[tid] : 0;
      const unsigned nz = __ballot_sync(0xFFFFFFFFu, n > 0);
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) n += __shfl_xor_sync(0xFFFFFFFFu, n, o);
      if (tid == 0) {
        s_gf = nz ? __ffs(static_cast<int>(nz)) - 1 : v.G;
        s_n = n;
      }
    }
    __syncthreads();
    const int gf = s_gf;
    const long long n = s_n;
    // group g's sums and values at its shift row (shared or the record)
    auto gsum = [&](int g) -> const double* {
      return local ? s_gsum + g * SNS : FusedGroups::sums(v.grec + static_cast<long long>(g) * rec, v.S, v.coef_total) + v.s_stat0[gs];
    };
    auto gshift = [&](int g) -> const double* {
      return local ? s_gsh + g * SK : FusedGroups::shift(v.grec + static_cast<long long>(g) * rec, v.S) + shift_at;
    };
    StatOut& so = v.stat_out[gs];
    if (tid == 0) {
      so.n = n;
      so.krow = n > 0 ? static_cast<int>(s_gk[gf]) : -1;
    }
    if (solve_here && sums) {  // the values at the shift row (the leaf's first row), one thread each
      double* shift = local ? s_work + kv * kv : v.work + v.s_work0[gs] + static_cast<long long>(kv) * kv;
      for (int j = tid; j < kv; j += TB) shift[j] = n > 0 ? gshift(gf)[j] : 0.0;
    }
    if (n > 0 && sums) {
      const long long k0 = s_gk[gf];
      const double* ps0 = gshift(gf);
      double* dst = v.stats + v.s_stat0[gs];
      for (int e = tid; e < nst; e += TB) {  // a thread per entry: the groups in order
        int i = 0, j = 0;
        fused_entry(e, kv, &i, &j);
        double acc = 0.0;
        for (int g = gf; g < v.G; ++g) {
          const long long ng = s_gn[g];
          if (ng == 0) continue;
          const double* src = gsum(g);
          double x = src[e];
          if (s_gk[g] != k0) x = fused_reshift(x, i, j, src, kv, ng, gshift(g), ps0);
          acc += x;
        }
        dst[e] = acc;
        if (solve_here && local) s_st[e] = acc;
      }
    }
    __syncthreads();  // the block sees the sums and the shift values (and s_gf / s_n are written again for the next leaf)
    if (solve_here) {
      if (tid == 0) {
        if (local) fused_solve_leaf(v, sp, gs, n, s_st, s_work + kv * kv, s_work, s_kept, s_work + kv * kv + kv);
        else fused_solve_leaf(v, sp, gs, n, v.stats + v.s_stat0[gs], v.work + v.s_work0[gs] + static_cast<long long>(kv) * kv,
                              v.work + v.s_work0[gs], v.work_i + v.s_attr0[gs], v.coef + v.s_attr0[gs] + gs);
      }
      __syncthreads();  // (the shared work space is written again for the next leaf)
    }
  }
}

// Thread per stat leaf: the least-squares solve (or the SSE of given coefficients). A leaf of at
// most smem_kv values (FusedPolicy::kSolveSmemKv, or 0: GPUDM_GMT_SOLVE_SMEM=0) works in the block's
// shared memory: the solve is a chain of dependent loads and stores of its Gram (~400 for 10
// values), each a round trip to L2 in the global work space (the loads after the stores miss L1;
// 1x H200, Elnino: ~60 us a call for ~960 leaves). The same solve_stats either way, so the same bits.
__global__ void __launch_bounds__(FusedPolicy::kAuxBlock) fused_solve_kernel(const FusedView* __restrict__ vp, DatasetView d,
                                                                            ::gpudm::gmt::leafstats::SolveParams sp, int smem_kv) {
  namespace ls = ::gpudm::gmt::leafstats;
  __shared__ double s_work[FusedPolicy::kSolveBlock * FusedPolicy::kSolveStride];
  __shared__ int s_kept[FusedPolicy::kSolveBlock * FusedPolicy::kSolveSmemKv];
  const FusedView& v = *vp;
  const bool smem_ok = smem_kv > 0 && blockDim.x <= FusedPolicy::kSolveBlock;  // (uniform over the launch)
  for (int gs = blockIdx.x * blockDim.x + threadIdx.x; gs < v.S; gs += gridDim.x * blockDim.x) {
    const int k = v.s_k[gs], kv = k + 1;
    const long long n = v.stat_out[gs].n;
    const double* st = v.stats + v.s_stat0[gs];
    const bool local = smem_ok && kv <= smem_kv && kv <= FusedPolicy::kSolveSmemKv;
    const int* a = v.attrs + v.s_attr0[gs];
    if (local) {  // (its own call, so the compiler sees shared-memory pointers: no generic accesses)
      double* w = s_work + threadIdx.x * FusedPolicy::kSolveStride;
      double* shift = w + static_cast<std::size_t>(kv) * kv;
      // (krow - row_base: this device's row; one process only — a rows split always solves in the merge, FastPath's constructor)
      for (int j = 0; j < kv; ++j) shift[j] = n > 0 ? fused_value(d.features, d.targets, v.ld, a, j, kv, v.stat_out[gs].krow - v.row_base) : 0.0;
      fused_solve_leaf(v, sp, gs, n, st, shift, w, s_kept + threadIdx.x * FusedPolicy::kSolveSmemKv, shift + kv);
    } else {
      double* work = v.work + v.s_work0[gs];
      double* shift = work + static_cast<std::size_t>(kv) * kv;
      if (kv <= FusedPolicy::kMaxKv)
        for (int j = 0; j < kv; ++j) shift[j] = n > 0 ? fused_value(d.features, d.targets, v.ld, a, j, kv, v.stat_out[gs].krow - v.row_base) : 0.0;
      fused_solve_leaf(v, sp, gs, n, st, shift, work, v.work_i + v.s_attr0[gs], v.coef + v.s_attr0[gs] + gs);
    }
  }
}

// The residual pass: grid (tree, chunk) as the statistics pass; blocks of trees without a marked
// leaf return at once. Warp w takes the same rows as in the statistics pass, 32 at a time in
// order (routed kRouteRows x 32 at once); each marked leaf's squared residuals of the step are added by a fixed xor tree and then
// into the warp's slot w of the leaf's chunk partials (part, free again after the merge: a marked
// leaf has k >= 1, so n_stats(kv) >= 5 > kWarps slots). One writer per slot, rows in order:
// deterministic.
__global__ void __launch_bounds__(FusedPolicy::kBlock) fused_residual_pass_kernel(const FusedView* __restrict__ vp, DatasetView d) {
  constexpr int W = FusedPolicy::kWarps;
  static_assert(W < 5, "the residual slots of a chunk's partials");
  const FusedView& v = *vp;
  const int t = blockIdx.x;
  if (t >= v.B || static_cast<int>(blockIdx.y) >= v.chunks) return;
  const int stat0 = v.t_stat0[t], ns = v.t_stat0[t + 1] - stat0;
  const int tid = threadIdx.x, w = tid / 32, lane = tid % 32;
  double* part = v.part + static_cast<std::size_t>(blockIdx.y) * W * static_cast<std::size_t>(v.stat_total);  // (the chunk's first partial)
  int any = 0;
  for (int si = tid; si < ns; si += blockDim.x)
    if (v.stat_out[stat0 + si].resid) {
      any = 1;
      for (int q = 0; q < W; ++q) part[v.s_stat0[stat0 + si] + q] = 0.0;
    }
  if (!__syncthreads_or(any)) return;
  const long long r0 = static_cast<long long>(blockIdx.y) * v.chunk_rows;
  const long long r1 = r0 + v.chunk_rows < v.rows ? r0 + v.chunk_rows : v.rows;
  const PackedNode* nodes = v.nodes + v.t_node0[t];
  const int leaf0 = v.t_leaf0[t];
  const long long ld = v.ld;
  const long long span = (r1 - r0 + W - 1) / W;
  const long long wr0 = r0 + w * span < r1 ? r0 + w * span : r1;
  const long long wr1 = wr0 + span < r1 ? wr0 + span : r1;
  // R rows a lane routed at once (the stats pass's interleaved walks: R load chains in flight, not
  // one), then the R steps of 32 rows in order, as one step at a time: the same sums.
  constexpr int R = FusedPolicy::kRouteRows;
  for (long long base0 = wr0; base0 < wr1; base0 += 32 * R) {
    long long rws[R];
    bool ok[R];
    int lls[R];
    fused_route_lanes<R>(nodes, d.features, static_cast<int>(ld), base0, wr1, lane, rws, ok, lls);
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const long long row = rws[q];
      int gs = -1;
      double e2 = 0.0;
      if (ok[q]) {
        const int ll = lls[q];
        gs = v.l_stat[leaf0 + ll];
        if (gs >= 0 && v.stat_out[gs].resid) {
          const int k = v.s_k[gs];
          const int* a = v.attrs + v.s_attr0[gs];
          const double* c = v.coef + v.s_attr0[gs] + gs;
          double pred = c[0];
          for (int j = 0; j < k; ++j) pred += c[1 + j] * static_cast<double>(__ldg(d.features + static_cast<long long>(a[j]) * ld + row));
          const double e = static_cast<double>(__ldg(d.targets + row)) - pred;
          e2 = e * e;
        } else {
          gs = -1;
        }
      }
      unsigned todo = __ballot_sync(0xFFFFFFFFu, gs >= 0);
      while (todo) {  // one marked leaf of this step at a time, lowest lane's first
        const int g = __shfl_sync(0xFFFFFFFFu, gs, __ffs(todo) - 1);
        double x = gs == g ? e2 : 0.0;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xFFFFFFFFu, x, o);
        if (lane == 0) part[v.s_stat0[g] + w] += x;
        todo &= ~__ballot_sync(0xFFFFFFFFu, gs == g);
      }
    }
  }
}

// Warp per marked stat leaf: its SSE in two levels (FusedGroups), each sum one lane's chain in a
// fixed order. Level 1 (levels & 1): lane g (a group of this device: G <= 32) adds its chunks'
// slots in chunk order (a chunk's in warp order) into gres (group, leaf). Level 2 (levels & 2):
// lane 0 adds the G groups' values in group order (a rank of a rows split does this on the host,
// FastPath::launch_split: the same additions in the same order).
__global__ void fused_residual_merge_kernel(const FusedView* __restrict__ vp, int levels) {
  static_assert(FusedGroups::kGroups <= 32, "a lane per group");
  const FusedView& v = *vp;
  const int lane = threadIdx.x % 32;
  const int warps = gridDim.x * blockDim.x / 32;
  for (int gs = (blockIdx.x * blockDim.x + threadIdx.x) / 32; gs < v.S; gs += warps) {
    if (!v.stat_out[gs].resid) continue;
    if ((levels & 1) && lane >= v.g0 && lane < v.g1) {
      const int g = lane;
      const int c0 = FusedGroups::chunk_begin(g, v.G, v.chunks_all) - v.chunk0;
      const int c1 = FusedGroups::chunk_begin(g + 1, v.G, v.chunks_all) - v.chunk0;
      double acc = 0.0;
      for (int c = c0; c < c1; ++c) {  // (a chunk without the leaf's rows has zero slots: the pass zeroed them)
        const double* slot = v.part + static_cast<std::size_t>(c) * FusedPolicy::kWarps * static_cast<std::size_t>(v.stat_total) + v.s_stat0[gs];
#pragma unroll
        for (int q = 0; q < FusedPolicy::kWarps; ++q) acc += slot[q];
      }
      v.gres[static_cast<std::size_t>(g) * v.S + gs] = acc;
    }
    __syncwarp();
    if ((levels & 2) && lane == 0) {
      double sse = 0.0;
      for (int g = 0; g < v.G; ++g) sse += v.gres[static_cast<std::size_t>(g) * v.S + gs];
      v.stat_out[gs].sse = sse;
    }
  }
}

// The exact solver's row list: rows of one leaf of a packed tree, in row order.
struct RoutesTo {
  const PackedNode* nodes;
  const float* feat;
  long long ld;
  int leaf;
  __device__ bool operator()(int row) const { return fused_route(nodes, feat, ld, row) == leaf; }
};

// [1, x_a..., y] of the listed rows, column-major (ld m), in double.
__global__ void fused_gather_kernel(DatasetView d, const int* __restrict__ rows, long long m, const int* __restrict__ attrs, int k,
                                    double* __restrict__ mat) {
  const long long total = m * (k + 2);
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = e / m, i = e - c * m;
    const std::size_t row = static_cast<std::size_t>(rows[i]);
    double x;
    if (c == 0) x = 1.0;
    else if (c <= k) x = static_cast<double>(d.features[static_cast<std::size_t>(attrs[c - 1]) * d.padded_rows + row]);
    else x = static_cast<double>(d.targets[row]);
    mat[e] = x;
  }
}

// One block: the residual sum of squares of the gathered matrix with coefficients `coef` (k + 1),
// threads strided over rows, a fixed tree (deterministic).
__global__ void fused_residual_kernel(const double* __restrict__ mat, long long m, int k, const double* __restrict__ coef,
                                      double* __restrict__ out) {
  __shared__ double part[FusedPolicy::kAuxBlock];
  double s = 0.0;
  for (long long i = threadIdx.x; i < m; i += blockDim.x) {
    double pred = 0.0;
    for (int c = 0; c <= k; ++c) pred += coef[c] * mat[static_cast<long long>(c) * m + i];
    const double e = mat[static_cast<long long>(k + 1) * m + i] - pred;
    s += e * e;
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (static_cast<int>(threadIdx.x) < h) part[threadIdx.x] += part[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = part[0];
}

}  // namespace gpudm::backend::cuda::gmt_cuda
