#pragma once
// Kernels of the fast path: a whole generation's batch in one launch sequence. The rows kernels
// (count, scatter, errors, k-th row) share one geometry: block k owns rows [k chunk, (k+1) chunk)
// and each of its 8 warps a contiguous sub-chunk of `sub` rows, walked 32 rows at a time, trees
// inside (rows outer, trees inner: the data is read once per pass for every tree). Per
// (sub-chunk, leaf) counts make every row list ascending and every sum order fixed, so the
// results do not depend on scheduling (deterministic_over: everything but the device).
//
//   count    rows per (sub-chunk, leaf)                         [redistribute]
//   scan     per leaf: totals, exclusive offsets over sub-chunks,
//            where the leaf's (hash mod count)-th row lies       [separate]
//   plan     row-list offsets of affected leaves, Gram work items [separate]
//   scatter  row ids of affected leaves, ascending per leaf       [separate]
//   gram     per work item (<= kSegRows rows of one leaf): Gram of [1, x - x_K, y - y_K]
//            (shifted by the leaf's first row K), FP64 or DMMA    [calc_models]
//   solve    per affected leaf: merge the items, centre, pivot in column order with the CPU's
//            rank rule, back substitution; ambiguous pivots -> exact QR on the host's order
//                                                                 [calc_models]
//   errors   per (block, leaf): SSE, SAE (per-thread sums merged in thread order), lowest and
//            highest target keys                                  [estimate_errors]
//   kth      the leaves' random rows                              [reduction]
//   reduce   merge blocks, propagate to the root                  [reduction]
#include <cstdint>

#include <cub/block/block_scan.cuh>

#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/gmt/args.cuh"
#include "backends/cuda/gmt/policy.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

__device__ __forceinline__ void warp_rows(const FastArgs& a, int warp, long long* r0, long long* r1) {
  const long long n = static_cast<long long>(a.d.rows);
  long long s = static_cast<long long>(blockIdx.x) * a.chunk + static_cast<long long>(warp) * a.sub;
  long long e = s + a.sub;
  if (s > n) s = n;
  if (e > n) e = n;
  *r0 = s;
  *r1 = e;
}
__device__ __forceinline__ long long sub_rows_begin(const FastArgs& a, int s) {
  return static_cast<long long>(s / FastPolicy::kWarps) * a.chunk + static_cast<long long>(s % FastPolicy::kWarps) * a.sub;
}
__device__ __forceinline__ unsigned lanemask_lt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}
// Packed index of the 4x4 tile (p, q), p <= q, of an nb x nb block upper triangle.
__host__ __device__ __forceinline__ int tile_index(int p, int q, int nb) { return p * nb - p * (p - 1) / 2 + (q - p); }
__device__ __forceinline__ void tile_pq(int t, int nb, int* p, int* q) {
  int r = 0;
  while (t >= nb - r) {
    t -= nb - r;
    ++r;
  }
  *p = r;
  *q = r + t;
}

// Leaf slot of row r in tree b of the batch (route_row on the tree's slice of the node arrays).
__device__ __forceinline__ int leaf_slot_of(const BatchView& v, const DatasetView& d, int b, long long r) {
  const int off = v.t_node_off[b];
  return v.n_slot[off + route_row(v.n_attr + off, v.n_thr + off, d.features, d.padded_rows, static_cast<std::size_t>(r))];
}

// ---- count --------------------------------------------------------------------------------
__global__ void __launch_bounds__(FastPolicy::kBlock) fast_count_kernel(FastArgs a) {
  const BatchView& v = *a.bv;
  const int L = v.L, B = v.B;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int* my = a.cnt + static_cast<long long>(blockIdx.x * FastPolicy::kWarps + warp) * L;
  for (int i = lane; i < L; i += 32) my[i] = 0;
  __syncwarp();
  long long r0, r1;
  warp_rows(a, warp, &r0, &r1);
  for (long long base = r0; base < r1; base += 32) {
    const long long r = base + lane;
    const bool valid = r < r1;
    for (int b = 0; b < B; ++b) {
      int key = -1;
      if (valid) key = v.t_leaf_off[b] + leaf_slot_of(v, a.d, b, r);
      const unsigned peers = __match_any_sync(0xffffffffu, key);
      if (valid && lane == __ffs(peers) - 1) my[key] += __popc(peers);
      __syncwarp();
    }
  }
}

// ---- scan: one thread per leaf --------------------------------------------------------------
__global__ void fast_scan_kernel(FastArgs a) {
  const BatchView& v = *a.bv;
  const int L = v.L;
  const int ns = a.nb * FastPolicy::kWarps;
  for (int gl = blockIdx.x * blockDim.x + threadIdx.x; gl < L; gl += gridDim.x * blockDim.x) {
    long long tot = 0;
    for (int s = 0; s < ns; ++s) tot += a.cnt[static_cast<long long>(s) * L + gl];
    a.total[gl] = static_cast<int>(tot);
    long long k = -1;
    if (tot > 0) {
      const int b = v.l_tree[gl];
      k = static_cast<long long>(node_hash(v.t_salt[b], static_cast<unsigned long long>(v.l_node[gl])) %
                                 static_cast<unsigned long long>(tot));
    }
    int ksub = -1, kloc = -1;
    long long run = 0;
    for (int s = 0; s < ns; ++s) {
      int* c = a.cnt + static_cast<long long>(s) * L + gl;
      const int n = *c;
      *c = static_cast<int>(run);
      if (k >= run && k < run + n) {
        ksub = s;
        kloc = static_cast<int>(k - run);
      }
      run += n;
    }
    a.kth_sub[gl] = ksub;
    a.kth_local[gl] = kloc;
  }
}

// ---- plan: one block of kPlanThreads --------------------------------------------------------
constexpr int kPlanThreads = 1024;
__global__ void __launch_bounds__(kPlanThreads) fast_plan_kernel(FastArgs a) {
  using Scan = cub::BlockScan<long long, kPlanThreads>;
  __shared__ typename Scan::TempStorage temp;
  const BatchView& v = *a.bv;
  const int L = v.L;
  long long carry_list = 0, carry_seg = 0;
  for (int t0 = 0; t0 < L; t0 += kPlanThreads) {
    const int gl = t0 + static_cast<int>(threadIdx.x);
    const bool valid = gl < L;
    const long long tot = valid ? a.total[gl] : 0;
    const bool fit = valid && v.l_refit[gl] && tot > 0;
    const long long len = fit ? tot : 0;
    const long long nseg = (fit && v.l_nattr[gl] + 2 <= a.wmax) ? (tot + FastPolicy::kSegRows - 1) / FastPolicy::kSegRows : 0;
    long long ex_len, agg_len, ex_seg, agg_seg;
    Scan(temp).ExclusiveSum(len, ex_len, agg_len);
    __syncthreads();
    Scan(temp).ExclusiveSum(nseg, ex_seg, agg_seg);
    __syncthreads();
    if (valid) {
      a.list_begin[gl] = carry_list + ex_len;
      a.seg_begin[gl] = static_cast<int>(carry_seg + ex_seg);
      for (long long j = 0; j < nseg; ++j) {
        const long long item = carry_seg + ex_seg + j;
        if (item < a.items_cap) {
          a.seg_leaf[item] = gl;
          a.seg_idx[item] = static_cast<int>(j);
        }
      }
    }
    carry_list += agg_len;
    carry_seg += agg_seg;
  }
  if (threadIdx.x == 0) {
    const bool over = carry_seg > a.items_cap || carry_list > a.list_cap;
    a.scalars[0] = static_cast<int>(carry_seg < a.items_cap ? carry_seg : a.items_cap);
    a.scalars[1] = 0;
    a.scalars[2] = over ? 1 : 0;
  }
}

// ---- scatter --------------------------------------------------------------------------------
__global__ void __launch_bounds__(FastPolicy::kBlock) fast_scatter_kernel(FastArgs a) {
  const BatchView& v = *a.bv;
  const int L = v.L, B = v.B;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int* my = a.cnt + static_cast<long long>(blockIdx.x * FastPolicy::kWarps + warp) * L;
  const unsigned lt = lanemask_lt();
  long long r0, r1;
  warp_rows(a, warp, &r0, &r1);
  for (long long base = r0; base < r1; base += 32) {
    const long long r = base + lane;
    const bool valid = r < r1;
    for (int b = 0; b < B; ++b) {
      int key = -1;
      if (valid) {
        const int gl = v.t_leaf_off[b] + leaf_slot_of(v, a.d, b, r);
        if (v.l_refit[gl]) key = gl;
      }
      const unsigned peers = __match_any_sync(0xffffffffu, key);
      const int leader = __ffs(peers) - 1;
      int start = 0;
      if (key >= 0 && lane == leader) {
        start = my[key];
        my[key] = start + __popc(peers);
      }
      start = __shfl_sync(0xffffffffu, start, leader);
      if (key >= 0) {
        const long long pos = a.list_begin[key] + start + __popc(peers & lt);
        if (pos < a.list_cap) a.list[pos] = static_cast<int>(r);
      }
      __syncwarp();
    }
  }
}

// ---- gram -----------------------------------------------------------------------------------
struct GramItem {
  int gl, na, moff, w, nb;
  long long p0, p1;  // positions in the row list
  int k_row;         // the leaf's first row: the shift
};
__device__ __forceinline__ GramItem gram_item(const FastArgs& a, int item) {
  const BatchView& v = *a.bv;
  GramItem g;
  g.gl = a.seg_leaf[item];
  const int s = a.seg_idx[item];
  g.na = v.l_nattr[g.gl];
  g.moff = v.l_moff[g.gl];
  g.w = g.na + 2;
  g.nb = (g.w + 3) / 4;
  const long long lb = a.list_begin[g.gl], tot = a.total[g.gl];
  g.p0 = lb + static_cast<long long>(s) * FastPolicy::kSegRows;
  const long long e = static_cast<long long>(s + 1) * FastPolicy::kSegRows;
  g.p1 = lb + (e < tot ? e : tot);
  g.k_row = a.list[lb];
  return g;
}
// Column c of a row of the leaf matrix: 1 | x_attr - x_attr(K) | y - y(K) | 0 (padding).
__device__ __forceinline__ double gram_value(const FastArgs& a, const int* s_attr, const double* s_shift, int na, int c,
                                             std::size_t row) {
  if (c == 0) return 1.0;
  if (c <= na) return static_cast<double>(a.d.features[static_cast<std::size_t>(s_attr[c]) * a.d.padded_rows + row]) - s_shift[c];
  if (c == na + 1) return static_cast<double>(a.d.targets[row]) - s_shift[c];
  return 0.0;
}
__device__ __forceinline__ void gram_load_shift(const FastArgs& a, const GramItem& g, int* s_attr, double* s_shift) {
  const BatchView& v = *a.bv;
  for (int c = threadIdx.x; c <= g.na + 1; c += blockDim.x) {
    const std::size_t k = static_cast<std::size_t>(g.k_row);
    if (c == 0) {
      s_attr[0] = -1;
      s_shift[0] = 0.0;
    } else if (c <= g.na) {
      const int at = v.m_attr[g.moff + c];
      s_attr[c] = at;
      s_shift[c] = static_cast<double>(a.d.features[static_cast<std::size_t>(at) * a.d.padded_rows + k]);
    } else {
      s_attr[c] = -1;
      s_shift[c] = static_cast<double>(a.d.targets[k]);
    }
  }
}

// FP64 CUDA cores: each thread owns up to kMaxTilesPerThread 4x4 tiles of the upper triangle
// (or, for narrow models, one tile and every RG-th row of the shared row tile).
__global__ void __launch_bounds__(FastPolicy::kGramBlock) fast_gram_fp64_kernel(FastArgs a) {
  __shared__ double tile[FastPolicy::kTileDoubles];
  __shared__ double s_shift[FastPolicy::kMaxWidth];
  __shared__ int s_attr[FastPolicy::kMaxWidth];
  const int n_items = a.scalars[0];
  const int tid = threadIdx.x, nt = blockDim.x;
  for (int item = blockIdx.x; item < n_items; item += gridDim.x) {
    const GramItem g = gram_item(a, item);
    const int nb = g.nb, T = nb * (nb + 1) / 2, wp = 4 * nb, ldt = wp + 1;
    const int TR = FastPolicy::kTileDoubles / ldt;
    const int rg = T >= nt ? 1 : nt / T;                  // row groups
    const int grp = T >= nt ? 0 : tid / T;
    const bool active = grp < rg;
    int tp[FastPolicy::kMaxTilesPerThread], tq[FastPolicy::kMaxTilesPerThread], tt[FastPolicy::kMaxTilesPerThread];
    int owned = 0;
    if (T >= nt) {
      for (int t = tid; t < T && owned < FastPolicy::kMaxTilesPerThread; t += nt) tt[owned++] = t;
    } else if (active) {
      tt[owned++] = tid % T;
    }
    for (int k = 0; k < owned; ++k) tile_pq(tt[k], nb, &tp[k], &tq[k]);
    double acc[FastPolicy::kMaxTilesPerThread][16];
#pragma unroll
    for (int k = 0; k < FastPolicy::kMaxTilesPerThread; ++k)
#pragma unroll
      for (int e = 0; e < 16; ++e) acc[k][e] = 0.0;
    gram_load_shift(a, g, s_attr, s_shift);
    __syncthreads();
    for (long long c0 = g.p0; c0 < g.p1; c0 += TR) {
      const int rows = static_cast<int>(g.p1 - c0 < TR ? g.p1 - c0 : TR);
      for (int e = tid; e < rows * wp; e += nt) {
        const int c = e / rows, i = e - c * rows;
        tile[i * ldt + c] = gram_value(a, s_attr, s_shift, g.na, c, static_cast<std::size_t>(a.list[c0 + i]));
      }
      __syncthreads();
#pragma unroll
      for (int k = 0; k < FastPolicy::kMaxTilesPerThread; ++k) {
        if (k >= owned) break;
        const int cp = 4 * tp[k], cq = 4 * tq[k];
        for (int i = grp; i < rows; i += rg) {
          const double* t = tile + i * ldt;
          const double x0 = t[cp], x1 = t[cp + 1], x2 = t[cp + 2], x3 = t[cp + 3];
          const double y0 = t[cq], y1 = t[cq + 1], y2 = t[cq + 2], y3 = t[cq + 3];
          acc[k][0] += x0 * y0; acc[k][1] += x0 * y1; acc[k][2] += x0 * y2; acc[k][3] += x0 * y3;
          acc[k][4] += x1 * y0; acc[k][5] += x1 * y1; acc[k][6] += x1 * y2; acc[k][7] += x1 * y3;
          acc[k][8] += x2 * y0; acc[k][9] += x2 * y1; acc[k][10] += x2 * y2; acc[k][11] += x2 * y3;
          acc[k][12] += x3 * y0; acc[k][13] += x3 * y1; acc[k][14] += x3 * y2; acc[k][15] += x3 * y3;
        }
      }
      __syncthreads();
    }
    double* out = a.gram + static_cast<long long>(item) * a.tiles_max * 16;
    if (rg == 1) {
      for (int k = 0; k < owned; ++k)
        for (int e = 0; e < 16; ++e) out[tt[k] * 16 + e] = acc[k][e];
    } else {
      // Row groups' partials merged in group order (the tile buffer holds rg x T x 16 <= nt x 16).
      if (active && owned == 1)
        for (int e = 0; e < 16; ++e) tile[(grp * T + tt[0]) * 16 + e] = acc[0][e];
      __syncthreads();
      for (int idx = tid; idx < T * 16; idx += nt) {
        double s = 0.0;
        for (int q = 0; q < rg; ++q) s += tile[q * T * 16 + idx];
        out[idx] = s;
      }
    }
    __syncthreads();  // the tile buffer is reused by the next item
  }
}

// FP64 tensor cores (mma.sync m8n8k4, sm_80+): each warp owns 8x8 tiles of the upper triangle.
constexpr int kDmmaMaxTilesPerWarp = 17;  // ceil(136 / 8): 16 x 16 tiles of a 128-wide model
__device__ __forceinline__ void dmma_m8n8k4(double& d0, double& d1, double a, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(d0), "+d"(d1)
               : "d"(a), "d"(b));
#else
  (void)d0; (void)d1; (void)a; (void)b;
  __trap();  // the host selects dmma only on sm_80+
#endif
}
__global__ void __launch_bounds__(FastPolicy::kGramBlock) fast_gram_dmma_kernel(FastArgs a) {
  __shared__ double tile[FastPolicy::kTileDoubles];
  __shared__ double s_shift[FastPolicy::kMaxWidth];
  __shared__ int s_attr[FastPolicy::kMaxWidth];
  const int n_items = a.scalars[0];
  const int tid = threadIdx.x, nt = blockDim.x;
  const int warp = tid / 32, lane = tid % 32, nwarps = nt / 32;
  for (int item = blockIdx.x; item < n_items; item += gridDim.x) {
    const GramItem g = gram_item(a, item);
    const int nb8 = (g.w + 7) / 8, T8 = nb8 * (nb8 + 1) / 2, wp = 8 * nb8, ldt = wp + 1;
    const int TR = (FastPolicy::kTileDoubles / ldt) / 4 * 4;
    double acc[kDmmaMaxTilesPerWarp][2];
    int tP[kDmmaMaxTilesPerWarp], tQ[kDmmaMaxTilesPerWarp];
    int owned = 0;
    for (int t = warp; t < T8 && owned < kDmmaMaxTilesPerWarp; t += nwarps) {
      tile_pq(t, nb8, &tP[owned], &tQ[owned]);
      ++owned;
    }
#pragma unroll
    for (int k = 0; k < kDmmaMaxTilesPerWarp; ++k) acc[k][0] = acc[k][1] = 0.0;
    gram_load_shift(a, g, s_attr, s_shift);
    __syncthreads();
    for (long long c0 = g.p0; c0 < g.p1; c0 += TR) {
      const int rows = static_cast<int>(g.p1 - c0 < TR ? g.p1 - c0 : TR);
      const int rows4 = (rows + 3) / 4 * 4;  // zero rows pad the last k-step
      for (int e = tid; e < rows4 * wp; e += nt) {
        const int c = e / rows4, i = e - c * rows4;
        tile[i * ldt + c] = i < rows ? gram_value(a, s_attr, s_shift, g.na, c, static_cast<std::size_t>(a.list[c0 + i])) : 0.0;
      }
      __syncthreads();
      const int kr = lane % 4, m = lane / 4;
      for (int r = 0; r < rows4; r += 4) {
        const double* t = tile + (r + kr) * ldt;
#pragma unroll
        for (int k = 0; k < kDmmaMaxTilesPerWarp; ++k) {
          if (k >= owned) break;
          dmma_m8n8k4(acc[k][0], acc[k][1], t[8 * tP[k] + m], t[8 * tQ[k] + m]);
        }
      }
      __syncthreads();
    }
    // D[m][n] of tile (P, Q) is Gram[8P + lane/4][8Q + 2 (lane%4) + i]; written in the packed
    // 4x4-tile layout of the fp64 engine (nb = ceil(w / 4) tiles; padding tiles dropped).
    double* out = a.gram + static_cast<long long>(item) * a.tiles_max * 16;
    for (int k = 0; k < owned; ++k)
      for (int i = 0; i < 2; ++i) {
        const int R = 8 * tP[k] + lane / 4, C = 8 * tQ[k] + 2 * (lane % 4) + i;
        const int p4 = R / 4, q4 = C / 4;
        if (p4 >= g.nb || q4 >= g.nb || p4 > q4) continue;
        out[tile_index(p4, q4, g.nb) * 16 + (R % 4) * 4 + (C % 4)] = acc[k][i];
      }
    __syncthreads();
  }
}

// ---- solve: one block per affected leaf (block-stride) ---------------------------------------
__global__ void __launch_bounds__(FastPolicy::kSolveBlock) fast_solve_kernel(FastArgs a) {
  extern __shared__ double fast_solve_smem[];
  __shared__ double s_orig2[FastPolicy::kMaxWidth], s_cdiag[FastPolicy::kMaxWidth], s_beta[FastPolicy::kMaxWidth];
  __shared__ int s_keep[FastPolicy::kMaxWidth];
  __shared__ int s_state;  // 0 keep, 1 drop, 2 ambiguous
  __shared__ int s_kept;
  const BatchView& v = *a.bv;
  const int L = v.L;
  const int tid = threadIdx.x, nt = blockDim.x;
  double* G = fast_solve_smem;  // w x w, row-major
  for (int gl = blockIdx.x; gl < L; gl += gridDim.x) {
    if (!v.l_refit[gl]) {
      if (tid == 0) a.rank[gl] = -1;
      continue;
    }
    const long long tot = a.total[gl];
    if (tot == 0) {
      if (tid == 0) a.rank[gl] = 0;  // coefficients stay 0 (packed so)
      continue;
    }
    const int na = v.l_nattr[gl], w = na + 2, moff = v.l_moff[gl];
    if (w > a.wmax) {  // wider than the batched solver takes: exact solver
      if (tid == 0) a.amb[atomicAdd(a.scalars + 1, 1)] = gl;
      continue;
    }
    const int nb = (w + 3) / 4, T = nb * (nb + 1) / 2;
    const int sb = a.seg_begin[gl];
    const int ns = static_cast<int>((tot + FastPolicy::kSegRows - 1) / FastPolicy::kSegRows);
    if (sb + ns > a.items_cap || a.list_begin[gl] >= a.list_cap) continue;  // overflow: the host reports it
    for (int idx = tid; idx < T * 16; idx += nt) {
      double s = 0.0;
      for (int j = 0; j < ns; ++j) s += a.gram[(static_cast<long long>(sb) + j) * a.tiles_max * 16 + idx];
      int p, q;
      tile_pq(idx / 16, nb, &p, &q);
      const int R = 4 * p + (idx % 16) / 4, C = 4 * q + idx % 4;
      if (R < w && C < w && R <= C) {
        G[R * w + C] = s;
        G[C * w + R] = s;
      }
    }
    __syncthreads();
    const double n = G[0];
    const int krow = a.list[a.list_begin[gl]];
    // Uncentred column norms^2 (the CPU's rank-rule reference), then centre the Gram.
    for (int j = 1 + tid; j <= na; j += nt) {
      const double K = static_cast<double>(a.d.features[static_cast<std::size_t>(v.m_attr[moff + j]) * a.d.padded_rows +
                                                        static_cast<std::size_t>(krow)]);
      const double s = G[j];  // sum of (x - K)
      s_orig2[j] = G[j * w + j] + 2.0 * K * s + n * K * K;
    }
    __syncthreads();
    for (int idx = tid; idx < (w - 1) * (w - 1); idx += nt) {
      const int r = 1 + idx / (w - 1), c = 1 + idx % (w - 1);
      G[r * w + c] -= G[r] * G[c] / n;
    }
    __syncthreads();
    for (int j = 1 + tid; j <= na; j += nt) s_cdiag[j] = G[j * w + j];
    if (tid == 0) s_kept = 1;  // the intercept (m >= 1 rows)
    __syncthreads();
    long long max_params = 0x7FFFFFFFLL;
    if (a.rows_per_param > 0) {
      const double mp = floor(static_cast<double>(tot) / a.rows_per_param);
      max_params = mp < 1.0 ? 1 : static_cast<long long>(mp);
    }
    bool ambiguous = false;
    for (int j = 1; j <= na; ++j) {
      if (tid == 0) {
        const double d = G[j * w + j];
        int st;
        if (s_kept >= tot || s_kept >= max_params) st = 1;          // as many columns as rows / the guard
        else if (d == 0.0 && s_cdiag[j] == 0.0) st = 1;             // constant in the leaf: exactly dependent
        else if (isnan(d)) st = 0;                                  // NaN inputs: the CPU keeps the column
        else if (d > a.pivot_guard * s_cdiag[j] && d > FastPolicy::kRankMargin * a.rank_tol * a.rank_tol * s_orig2[j]) st = 0;
        else st = 2;                                                // within rounding of a decision
        s_state = st;
        s_keep[j] = st == 0;
        if (st == 0) ++s_kept;
      }
      __syncthreads();
      const int st = s_state;
      if (st == 2) {
        ambiguous = true;
        break;
      }
      if (st == 0) {
        const double d = G[j * w + j];
        const int m = w - 1 - j;  // trailing columns (attributes after j, then y)
        for (int idx = tid; idx < m * m; idx += nt) {
          const int r = j + 1 + idx / m, c = j + 1 + idx % m;
          G[r * w + c] -= G[r * w + j] * G[j * w + c] / d;
        }
      }
      __syncthreads();
    }
    if (ambiguous) {
      if (tid == 0) a.amb[atomicAdd(a.scalars + 1, 1)] = gl;
      __syncthreads();
      continue;
    }
    if (tid == 0) {
      // Back substitution on the pivot rows (row j holds its values from the step that pivoted it).
      const int y = w - 1;
      for (int j = na; j >= 1; --j) {
        if (!s_keep[j]) {
          s_beta[j] = 0.0;
          continue;
        }
        double acc = G[j * w + y];
        for (int k = j + 1; k <= na; ++k)
          if (s_keep[k]) acc -= G[j * w + k] * s_beta[k];
        s_beta[j] = acc / G[j * w + j];
      }
      // Intercept from the means: mean = K + sum(x - K) / n.
      const double ky = static_cast<double>(a.d.targets[static_cast<std::size_t>(krow)]);
      double c0 = ky + G[y] / n;
      for (int j = 1; j <= na; ++j) {
        if (!s_keep[j]) continue;
        const double K = static_cast<double>(a.d.features[static_cast<std::size_t>(v.m_attr[moff + j]) * a.d.padded_rows +
                                                          static_cast<std::size_t>(krow)]);
        c0 -= s_beta[j] * (K + G[j] / n);
      }
      v.m_coef[moff] = c0;
      for (int j = 1; j <= na; ++j) v.m_coef[moff + j] = s_beta[j];
      a.rank[gl] = s_kept;
    }
    __syncthreads();
  }
}

// ---- errors ---------------------------------------------------------------------------------
// Per group of leaves (<= kErrKeys keys): each thread sums its rows' errors per key privately
// (shared memory, [key][thread]); lowest/highest target keys by warp reductions per leaf; the
// group's per-block values are merged in a fixed order (butterfly within a warp, then warps in
// order), so the sums do not depend on scheduling.
constexpr std::size_t fast_errors_smem_bytes() {
  return static_cast<std::size_t>(FastPolicy::kErrKeys) *
         (2 * FastPolicy::kBlock * sizeof(double) + 2 * FastPolicy::kWarps * sizeof(unsigned long long) +
          2 * FastPolicy::kWarps * sizeof(double));
}
__global__ void __launch_bounds__(FastPolicy::kBlock) fast_errors_kernel(FastArgs a) {
  extern __shared__ double fast_err_smem[];
  constexpr int K = FastPolicy::kErrKeys, NT = FastPolicy::kBlock, W = FastPolicy::kWarps;
  double* s_sse = fast_err_smem;                  // [K][NT]
  double* s_sae = s_sse + K * NT;                 // [K][NT]
  double* s_w2 = s_sae + K * NT;                  // [W][K] warp sums
  double* s_w1 = s_w2 + W * K;                    // [W][K]
  unsigned long long* s_lo = reinterpret_cast<unsigned long long*>(s_w1 + W * K);  // [W][K]
  unsigned long long* s_hi = s_lo + W * K;                                         // [W][K]
  const BatchView& v = *a.bv;
  const int L = v.L;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  long long r0, r1;
  warp_rows(a, warp, &r0, &r1);
  for (int g = 0; g < v.n_groups; ++g) {
    const int e0 = v.g_begin[g], e1 = v.g_begin[g + 1];
    for (int k = 0; k < K; ++k) {
      s_sse[k * NT + tid] = 0.0;
      s_sae[k * NT + tid] = 0.0;
    }
    for (int k = lane; k < K; k += 32) {
      s_lo[warp * K + k] = kNoLo;
      s_hi[warp * K + k] = kNoHi;
    }
    __syncwarp();
    for (long long base = r0; base < r1; base += 32) {
      const long long r = base + lane;
      const bool valid = r < r1;
      const float y = valid ? a.d.targets[r] : 0.0f;
      const unsigned long long lk = valid ? lo_key(y, static_cast<unsigned int>(r)) : kNoLo;
      const unsigned long long hk = valid ? hi_key(y, static_cast<unsigned int>(r)) : kNoHi;
      for (int e = e0; e < e1; ++e) {
        const int b = v.ge_tree[e], lo = v.ge_lo[e], hi = v.ge_hi[e];
        int key = -1;
        if (valid) {
          const int slot = leaf_slot_of(v, a.d, b, r);
          if (slot >= lo && slot < hi) {
            key = v.ge_key0[e] + slot - lo;
            const int gl = v.t_leaf_off[b] + slot;
            const double err = static_cast<double>(y) - predict_row(v, v.l_moff[gl], v.l_nattr[gl], a.d.features, a.d.padded_rows,
                                                                    static_cast<std::size_t>(r));
            s_sse[key * NT + tid] += err * err;
            s_sae[key * NT + tid] += fabs(err);
          }
        }
        const unsigned peers = __match_any_sync(0xffffffffu, key);
        // 64-bit min / max over the leaf's lanes: high words first, then the low words of the
        // lanes that hold the extreme high word.
        const unsigned lo_h = __reduce_min_sync(peers, static_cast<unsigned>(lk >> 32));
        const unsigned lo_l = __reduce_min_sync(peers, static_cast<unsigned>(lk >> 32) == lo_h ? static_cast<unsigned>(lk) : 0xFFFFFFFFu);
        const unsigned hi_h = __reduce_max_sync(peers, static_cast<unsigned>(hk >> 32));
        const unsigned hi_l = __reduce_max_sync(peers, static_cast<unsigned>(hk >> 32) == hi_h ? static_cast<unsigned>(hk) : 0u);
        if (key >= 0 && lane == __ffs(peers) - 1) {
          const unsigned long long mn = (static_cast<unsigned long long>(lo_h) << 32) | lo_l;
          const unsigned long long mx = (static_cast<unsigned long long>(hi_h) << 32) | hi_l;
          unsigned long long* pl = s_lo + warp * K + key;
          unsigned long long* ph = s_hi + warp * K + key;
          if (mn < *pl) *pl = mn;
          if (mx > *ph) *ph = mx;
        }
        __syncwarp();
      }
    }
    __syncthreads();
    // Thread partials -> warp sums (fixed butterfly) -> block sums (warps in order).
    for (int k = 0; k < K; ++k) {
      double s2 = s_sse[k * NT + tid], s1 = s_sae[k * NT + tid];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) {
        s2 += __shfl_xor_sync(0xffffffffu, s2, o);
        s1 += __shfl_xor_sync(0xffffffffu, s1, o);
      }
      if (lane == 0) {
        s_w2[warp * K + k] = s2;
        s_w1[warp * K + k] = s1;
      }
    }
    __syncthreads();
    for (int e = e0; e < e1; ++e) {
      const int b = v.ge_tree[e], lo = v.ge_lo[e], hi = v.ge_hi[e], k0 = v.ge_key0[e];
      for (int slot = lo + tid; slot < hi; slot += NT) {
        const int key = k0 + slot - lo;
        double s2 = 0.0, s1 = 0.0;
        unsigned long long mn = kNoLo, mx = kNoHi;
        for (int q = 0; q < W; ++q) {
          s2 += s_w2[q * K + key];
          s1 += s_w1[q * K + key];
          mn = s_lo[q * K + key] < mn ? s_lo[q * K + key] : mn;
          mx = s_hi[q * K + key] > mx ? s_hi[q * K + key] : mx;
        }
        const long long idx = static_cast<long long>(blockIdx.x) * L + v.t_leaf_off[b] + slot;
        a.psse[idx] = s2;
        a.psae[idx] = s1;
        a.plo[idx] = mn;
        a.phi[idx] = mx;
      }
    }
    __syncthreads();
  }
}

// ---- kth: one warp per leaf finds its (hash mod count)-th row in ascending order -------------
__global__ void fast_kth_kernel(FastArgs a) {
  const BatchView& v = *a.bv;
  const int L = v.L;
  const int lane = threadIdx.x % 32;
  const int warps = gridDim.x * blockDim.x / 32;
  const unsigned lt = lanemask_lt();
  for (int gl = (blockIdx.x * blockDim.x + threadIdx.x) / 32; gl < L; gl += warps) {
    long long found = -1;
    const int s = a.kth_sub[gl];
    if (s >= 0 && a.total[gl] > 0) {
      int j = a.kth_local[gl];
      const int b = v.l_tree[gl];
      const int slot = gl - v.t_leaf_off[b];
      const long long n = static_cast<long long>(a.d.rows);
      long long r0 = sub_rows_begin(a, s), r1 = r0 + a.sub;
      if (r0 > n) r0 = n;
      if (r1 > n) r1 = n;
      for (long long base = r0; base < r1; base += 32) {
        const long long r = base + lane;
        bool match = false;
        if (r < r1) match = leaf_slot_of(v, a.d, b, r) == slot;
        const unsigned bal = __ballot_sync(0xffffffffu, match);
        const int c = __popc(bal);
        if (j < c) {
          const bool me = match && __popc(bal & lt) == j;
          const unsigned who = __ballot_sync(0xffffffffu, me);
          found = base + (__ffs(who) - 1);
          break;
        }
        j -= c;
      }
    }
    if (lane == 0) a.rnd[gl] = found;
  }
}

// ---- reduce: one block per tree (block-stride) ------------------------------------------------
__global__ void fast_reduce_kernel(FastArgs a) {
  const BatchView& v = *a.bv;
  const int L = v.L;
  for (int b = blockIdx.x; b < v.B; b += gridDim.x) {
    const int off = v.t_node_off[b], lo = v.t_leaf_off[b], nl = v.t_n_leaves[b];
    NodeAcc* st = a.scratch + off;
    for (int l = threadIdx.x; l < nl; l += blockDim.x) {
      const int gl = lo + l;
      NodeAcc acc;
      acc.count = a.total[gl];
      acc.sse = 0.0;
      acc.sae = 0.0;
      acc.lo = kNoLo;
      acc.hi = kNoHi;
      for (int k = 0; k < a.nb; ++k) {
        const long long idx = static_cast<long long>(k) * L + gl;
        acc.sse += a.psse[idx];
        acc.sae += a.psae[idx];
        acc.lo = a.plo[idx] < acc.lo ? a.plo[idx] : acc.lo;
        acc.hi = a.phi[idx] > acc.hi ? a.phi[idx] : acc.hi;
      }
      acc.rnd = a.rnd[gl];
      st[v.l_node[gl]] = acc;
    }
    __syncthreads();
    const int p0 = v.t_present_off[b], np = v.t_n_present[b];
    if (threadIdx.x == 0) propagate_tree(st, v.n_attr + off, v.p_node + p0, np, v.t_salt[b]);
    __syncthreads();
    for (int k = threadIdx.x; k < np; k += blockDim.x) a.out[p0 + k] = to_out(st[v.p_node[p0 + k]]);
    __syncthreads();
  }
}

}  // namespace gpudm::backend::cuda::gmt_cuda
