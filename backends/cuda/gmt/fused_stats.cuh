#pragma once
// The fast path's init and statistics kernels (fused_types.cuh has the overview). Included by
// fast_launch.cu only: a kernel is defined in one translation unit.
#include "backends/cuda/gmt/fused_device.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

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
// kMinBlocks: resident blocks per SM the registers are capped for (0: the compiler's choice). The
// every-width variant with shared-memory leaf atomics runs capped for 5 (FusedPolicy::kWideMinBlocks:
// 96 registers, 12 bytes spilled, against 128 registers and 4 blocks uncapped; capped for 6, 80
// registers and 148 bytes spilled, was slower: docs/perf-notes-gmt.md). The same arithmetic, so the
// same bits.
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
  // a warp per stat leaf) or the w-th of W equal runs in row order (warps mode); per run the keys
  // (atomics) and, for a leaf under the repair limit in the chunk, its rows; the sums into partial
  // (chunk, w) shifted by the run's first row (warps mode) or into partial (chunk, 0) shifted by the
  // chunk's first row of the leaf (leaf mode; auto: per leaf, warps mode at kSplitMinRows rows or
  // more, else leaf mode).
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
    const long long krow = runs ? (m > 0 ? r0 + rows[0] : -1) : (mall > 0 ? r0 + all_rows[0] : -1);
    if (lane == 0) {
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
    if (kv > FusedPolicy::kMaxKv || mall == 0) continue;  // the exact solver takes the leaf / no rows
    const int* a = v.attrs + v.s_attr0[gs];
    if (krow >= 0) {  // the values at the shift row, for the merge's re-shift (read here once instead of per entry there)
      double* ps = v.part_shift + part_i * static_cast<std::size_t>(v.coef_total) + v.s_attr0[gs] + gs;
      for (int j = lane; j < kv; j += 32) ps[j] = fused_value(feat, yv, ld, a, j, kv, krow);
    }
    double* out = v.part + part_i * static_cast<std::size_t>(v.stat_total) + v.s_stat0[gs];
    double* tw = tile + static_cast<std::size_t>(w) * FusedPolicy::kWideTile * wide_kv;
    static_assert(FusedPolicy::kNarrowKv == 5, "the narrow cases below");
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

}  // namespace gpudm::backend::cuda::gmt_cuda
