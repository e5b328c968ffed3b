#pragma once
// Kernel argument structs of the GMT kernels (passed by value; host code fills them).
#include <cstddef>

#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/gmt/batch.cuh"
#include "backends/cuda/gmt/device_common.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

// The candidate columns of a least-squares step (select_columns_kernel).
struct ColumnList {
  static constexpr int kMax = 512;
  int n;
  int idx[kMax];
};
// Per-block node table of estimate_errors: sums of squared and absolute errors, lowest- and
// highest-target keys (atomicMin / atomicMax on 64-bit keys: the CPU's dipole order).
struct NodeTables {
  double* sse;
  double* sae;
  unsigned long long* lo;
  unsigned long long* hi;
};

// Everything the fast kernels read besides the batch; fixed between generations unless a
// buffer grows (then the graphs are captured again).
struct FastArgs {
  DatasetView d;
  const BatchView* bv;
  int nb;              // blocks of the rows kernels (x 8 warps = sub-chunks)
  long long chunk;     // rows per block (multiple of 256)
  long long sub;       // rows per warp (chunk / 8)
  int* cnt;            // [sub-chunks x L]: counts, then offsets, then running positions
  int* total;          // [L] rows per leaf
  int* kth_sub;        // [L] sub-chunk holding the leaf's random row
  int* kth_local;      // [L] its index among the leaf's rows of that sub-chunk
  long long* list_begin;  // [L] start of the leaf's rows in `list` (affected leaves)
  int* seg_begin;      // [L] first Gram work item of the leaf
  int* seg_leaf;       // [items_cap] leaf of a work item
  int* seg_idx;        // [items_cap] segment index within the leaf
  long long items_cap;
  int* list;           // [list_cap] row ids, ascending per leaf
  long long list_cap;
  double* gram;        // [items_cap x tiles_max x 16] partial Grams (packed 4x4 tiles)
  int tiles_max;
  int* rank;           // [L]
  int* amb;            // [L] leaves for the exact solver
  int* scalars;        // [0] work items, [1] ambiguous leaves, [2] capacity overflow
  double* psse;        // [nb x L]
  double* psae;
  unsigned long long* plo;
  unsigned long long* phi;
  long long* rnd;      // [L]
  NodeAcc* scratch;    // [total nodes]
  NodeOut* out;        // [total present nodes]
  double rank_tol, rows_per_param, pivot_guard;
  int wmax;            // widest model the solver takes (shared memory sized for it)
};

}  // namespace gpudm::backend::cuda::gmt_cuda
