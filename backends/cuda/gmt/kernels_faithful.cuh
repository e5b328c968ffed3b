#pragma once
// Kernels of the faithful path (the paper's Listing 2), one individual (batch of one tree) at a
// time. Every data-parallel kernel uses the paper's two-level decomposition: block k owns the
// contiguous rows [k n / G, (k + 1) n / G) and its threads stride through them by blockDim
// (Listing 2 drops the n mod (G T) remainder rows; these ranges cover every row).
#include <cstdint>

#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/gmt/args.cuh"
#include "algorithms/gmt/leaf_stats.hpp"
#include "backends/cuda/gmt/policy.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

__device__ __forceinline__ void block_range(std::size_t n, std::size_t* r0, std::size_t* r1) {
  *r0 = static_cast<std::size_t>(blockIdx.x) * n / gridDim.x;
  *r1 = static_cast<std::size_t>(blockIdx.x + 1) * n / gridDim.x;
}

// redistribute: the leaf slot of every row, and rows per leaf (global atomics as the paper).
__global__ void faithful_redistribute_kernel(DatasetView d, const BatchView* bv, int* __restrict__ leaf_of,
                                             int* __restrict__ counts) {
  const BatchView& v = *bv;
  const int off = v.t_node_off[0];
  std::size_t r0, r1;
  block_range(d.rows, &r0, &r1);
  for (std::size_t r = r0 + threadIdx.x; r < r1; r += blockDim.x) {
    const int node = route_row(v.n_attr + off, v.n_thr + off, d.features, d.padded_rows, r);
    const int slot = v.n_slot[off + node];
    leaf_of[r] = slot;
    atomicAdd(counts + slot, 1);
  }
}

// reorganize: rows of the affected leaves copied, in sorted (leaf, row) order, into one
// column-major matrix per leaf: [1, model attributes..., y] (m rows, leading dimension m).
template <class T>
__global__ void faithful_reorganize_kernel(DatasetView d, const BatchView* bv, const int* __restrict__ sorted_leaf,
                                           const int* __restrict__ sorted_row, const long long* __restrict__ leaf_begin,
                                           const int* __restrict__ leaf_count, const long long* __restrict__ mat_off,
                                           T* __restrict__ mat) {
  const BatchView& v = *bv;
  std::size_t p0, p1;
  block_range(d.rows, &p0, &p1);
  for (std::size_t p = p0 + threadIdx.x; p < p1; p += blockDim.x) {
    const int l = sorted_leaf[p];
    const long long off = mat_off[l];
    if (off < 0) continue;  // leaf keeps its model
    const long long m = leaf_count[l];
    const long long i = static_cast<long long>(p) - leaf_begin[l];
    const std::size_t row = static_cast<std::size_t>(sorted_row[p]);
    const int moff = v.l_moff[l], na = v.l_nattr[l];
    T* a = mat + off;
    a[i] = T(1);
    for (int k = 1; k <= na; ++k)
      a[static_cast<long long>(k) * m + i] = static_cast<T>(d.features[static_cast<std::size_t>(v.m_attr[moff + k]) * d.padded_rows + row]);
    a[static_cast<long long>(na + 1) * m + i] = static_cast<T>(d.targets[row]);
  }
}

// Euclidean norm of each of `cols` columns (block per column, double accumulation).
template <class T>
__global__ void column_norms_kernel(const T* __restrict__ a, long long m, int cols, double* __restrict__ out) {
  __shared__ double part[FaithfulPolicy::kAuxThreads];
  for (int c = blockIdx.x; c < cols; c += gridDim.x) {
    const T* col = a + static_cast<long long>(c) * m;
    double s = 0.0;
    for (long long i = threadIdx.x; i < m; i += blockDim.x) {
      const double x = static_cast<double>(col[i]);
      s += x * x;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
      if (static_cast<int>(threadIdx.x) < h) part[threadIdx.x] += part[threadIdx.x + h];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[c] = sqrt(part[0]);
    __syncthreads();
  }
}

// dst[:, i] = src[:, cols.idx[i]] (m rows each): the candidate columns of a least-squares step.
template <class T>
__global__ void select_columns_kernel(const T* __restrict__ src, long long m, ColumnList cols, T* __restrict__ dst) {
  const long long total = m * cols.n;
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = e / m, i = e - c * m;
    dst[e] = src[static_cast<long long>(cols.idx[c]) * m + i];
  }
}

// dst[i] = src[i * stride] in double, i < k (R's diagonal: stride m + 1; a solution: stride 1).
template <class T>
__global__ void extract_kernel(const T* __restrict__ src, long long stride, int k, double* __restrict__ dst) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < k; i += gridDim.x * blockDim.x)
    dst[i] = static_cast<double>(src[static_cast<long long>(i) * stride]);
}

// estimate_errors: every row (in the sorted order, as Listing 2) adds its model error to its
// leaf's entry of the block's node table; the table lives in shared memory when the tree fits
// the paper's 48 KB (kShared), else in the block's slice of global memory (initialised by the
// host: zeros, kNoLo, kNoHi). The block's table ends in `part` (block-major, n_nodes each).
template <bool kShared>
__global__ void faithful_estimate_errors_kernel(DatasetView d, const BatchView* bv, const int* __restrict__ sorted_leaf,
                                                const int* __restrict__ sorted_row, NodeTables part) {
  extern __shared__ unsigned long long faithful_smem[];
  const BatchView& v = *bv;
  const int nn = v.t_n_nodes[0];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * static_cast<std::size_t>(nn);
  NodeTables t;
  const unsigned long long salt = v.t_salt[0];
  if (kShared) {
    t.lo = faithful_smem;
    t.hi = t.lo + nn;
    t.rnd = t.hi + nn;
    t.sse = reinterpret_cast<double*>(t.rnd + nn);
    t.sae = t.sse + nn;
    for (int i = threadIdx.x; i < nn; i += blockDim.x) {
      t.lo[i] = kNoLo;
      t.hi[i] = kNoHi;
      t.rnd[i] = kNoLo;
      t.sse[i] = 0.0;
      t.sae[i] = 0.0;
    }
    __syncthreads();
  } else {
    t.sse = part.sse + base;
    t.sae = part.sae + base;
    t.lo = part.lo + base;
    t.hi = part.hi + base;
    t.rnd = part.rnd + base;
  }
  std::size_t p0, p1;
  block_range(d.rows, &p0, &p1);
  for (std::size_t p = p0 + threadIdx.x; p < p1; p += blockDim.x) {
    const int l = sorted_leaf[p];
    const std::size_t row = static_cast<std::size_t>(sorted_row[p]);
    const int node = v.l_node[l];
    const double pred = predict_row(v, v.l_moff[l], v.l_nattr[l], d.features, d.padded_rows, row);
    const float y = d.targets[row];
    const double e = static_cast<double>(y) - pred;
    atomicAdd(t.sse + node, e * e);
    atomicAdd(t.sae + node, fabs(e));
    atomicMin(t.lo + node, lo_key(y, static_cast<unsigned int>(row)));
    atomicMax(t.hi + node, hi_key(y, static_cast<unsigned int>(row)));
    atomicMin(t.rnd + node, ::gpudm::gmt::leafstats::dipole_key(salt, static_cast<unsigned long long>(row)));
  }
  if (kShared) {
    __syncthreads();
    for (int i = threadIdx.x; i < nn; i += blockDim.x) {
      part.sse[base + i] = t.sse[i];
      part.sae[base + i] = t.sae[i];
      part.lo[base + i] = t.lo[i];
      part.hi[base + i] = t.hi[i];
      part.rnd[base + i] = t.rnd[i];
    }
  }
}

// reduction<<<1, T>>>: merges the blocks' tables in block order, adds the counts, propagates
// to the root and writes the present nodes' statistics.
__global__ void faithful_reduction_kernel(const BatchView* bv, int blocks, NodeTables part, const int* __restrict__ counts,
                                          NodeAcc* __restrict__ scratch, NodeOut* __restrict__ out) {
  const BatchView& v = *bv;
  const int nn = v.t_n_nodes[0], nl = v.t_n_leaves[0];
  for (int l = threadIdx.x; l < nl; l += blockDim.x) {
    const int node = v.l_node[l];
    NodeAcc a;
    a.count = counts[l];
    a.sse = 0.0;
    a.sae = 0.0;
    a.lo = kNoLo;
    a.hi = kNoHi;
    a.rnd = kNoLo;
    for (int k = 0; k < blocks; ++k) {
      const std::size_t e = static_cast<std::size_t>(k) * static_cast<std::size_t>(nn) + static_cast<std::size_t>(node);
      a.sse += part.sse[e];
      a.sae += part.sae[e];
      a.lo = part.lo[e] < a.lo ? part.lo[e] : a.lo;
      a.hi = part.hi[e] > a.hi ? part.hi[e] : a.hi;
      a.rnd = part.rnd[e] < a.rnd ? part.rnd[e] : a.rnd;
    }
    scratch[node] = a;
  }
  __syncthreads();
  if (threadIdx.x == 0) propagate_tree(scratch, v.n_attr, v.p_node, v.t_n_present[0]);
  __syncthreads();
  for (int k = threadIdx.x; k < v.t_n_present[0]; k += blockDim.x) out[k] = to_out(scratch[v.p_node[k]]);
}

}  // namespace gpudm::backend::cuda::gmt_cuda
