#pragma once
// Device helpers of the faithful path: routing a row through a flat tree, and 64-bit keys that
// order rows as the CPU's dipole search does (algorithms/gmt/leaf_stats.hpp has the same keys).
#include <cstdint>

#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/gmt/batch.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

// Left when x <= threshold, right otherwise (NaN fails <= and goes right), as the CPU.
// Returns the leaf's node index within the tree.
__device__ __forceinline__ int route_row(const int* __restrict__ attr, const float* __restrict__ thr,
                                         const float* __restrict__ features, std::size_t ld, std::size_t row) {
  int i = 0;
  int a = __ldg(attr + i);
  while (a >= 0) {
    const float x = __ldg(features + static_cast<std::size_t>(a) * ld + row);
    i = (x <= __ldg(thr + i)) ? 2 * i + 1 : 2 * i + 2;
    a = __ldg(attr + i);
  }
  return i;
}

// Float bits mapped so that unsigned order is numeric order (-0 counts as +0, as == does on the CPU).
__device__ __forceinline__ unsigned int orderable(float y) {
  if (y == 0.0f) y = 0.0f;
  const unsigned int u = __float_as_uint(y);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
// Lowest target first, ties to the smaller row: the minimum key is the CPU's dipole_lo.
__device__ __forceinline__ unsigned long long lo_key(float y, unsigned int row) {
  return (static_cast<unsigned long long>(orderable(y)) << 32) | row;
}
// Highest target first, ties to the smaller row: the maximum key is the CPU's dipole_hi.
__device__ __forceinline__ unsigned long long hi_key(float y, unsigned int row) {
  return (static_cast<unsigned long long>(orderable(y)) << 32) | (0xFFFFFFFFu - row);
}
constexpr unsigned long long kNoLo = ~0ull;  // no row (every real lo key is smaller)
constexpr unsigned long long kNoHi = 0ull;   // no row (every real hi key is larger)
__device__ __forceinline__ long long lo_row(unsigned long long k) {
  return k == kNoLo ? -1 : static_cast<long long>(k & 0xFFFFFFFFull);
}
__device__ __forceinline__ long long hi_row(unsigned long long k) {
  return k == kNoHi ? -1 : static_cast<long long>(0xFFFFFFFFull - (k & 0xFFFFFFFFull));
}

// Prediction of the leaf model at [moff, moff + na + 1) for a row: intercept, then the attributes
// in ascending order (the CPU's order), in double.
__device__ __forceinline__ double predict_row(const BatchView& v, int moff, int na, const float* __restrict__ features,
                                              std::size_t ld, std::size_t row) {
  double p = v.m_coef[moff];
  for (int k = 1; k <= na; ++k) {
    const int a = v.m_attr[moff + k];
    p += v.m_coef[moff + k] * static_cast<double>(__ldg(features + static_cast<std::size_t>(a) * ld + row));
  }
  return p;
}

// Upward propagation of one tree (the CPU's propagate_stats): `st` holds the tree's node statistics
// (counts, sums, lo/hi keys, dipole keys) indexed by node; leaves are filled. Internal nodes are
// visited from the deepest present node up. One thread.
struct NodeAcc {
  long long count;
  double sse, sae;
  unsigned long long lo, hi;
  unsigned long long rnd;  // minimum dipole key (tree.hpp)
};
__device__ inline void propagate_tree(NodeAcc* st, const int* attr, const int* present, int n_present) {
  for (int k = n_present - 1; k >= 0; --k) {
    const int i = present[k];
    if (attr[i] < 0) continue;  // leaf
    NodeAcc& p = st[i];
    const NodeAcc& a = st[2 * i + 1];
    const NodeAcc& b = st[2 * i + 2];
    p.count = a.count + b.count;
    p.sse = a.sse + b.sse;
    p.sae = a.sae + b.sae;
    p.lo = a.lo < b.lo ? a.lo : b.lo;
    p.hi = a.hi > b.hi ? a.hi : b.hi;
    p.rnd = a.rnd < b.rnd ? a.rnd : b.rnd;
  }
}

__device__ __forceinline__ NodeOut to_out(const NodeAcc& a) {
  NodeOut o;
  o.count = a.count;
  o.sse = a.sse;
  o.sae = a.sae;
  o.lo = lo_row(a.lo);
  o.hi = hi_row(a.hi);
  o.rnd = lo_row(a.rnd);
  return o;
}

}  // namespace gpudm::backend::cuda::gmt_cuda
