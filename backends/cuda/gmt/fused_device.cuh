#pragma once
// The fast path's device functions shared by its kernels (fused_types.cuh has the overview): the
// routing of rows through a packed tree, a row's values, the narrow and wide sums of a leaf's rows.
#include <cstdint>

#include <cuda/atomic>

#include "backends/cuda/gmt/fused_types.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

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

}  // namespace gpudm::backend::cuda::gmt_cuda
