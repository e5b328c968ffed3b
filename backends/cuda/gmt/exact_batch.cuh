#pragma once
// The fast path's exact solver for a whole call's flagged leaves at once: a
// routing kernel over (row block, leaf) marks each leaf's rows in a bit mask (its tree routed by
// the whole grid), then one block per leaf reads its mask in row order (a block-wide scan), gathers
// [1, x_a..., y] in double, runs the CPU's rank rule (eval_steps.cpp least_squares_rank_rule: one
// Householder pass, a column is dropped when its remaining norm is <= rank_tol x its original norm
// or the row / parameter limit is reached) and sums the residuals' squares in a fixed order. One
// launch, one download and one synchronisation for every flagged leaf of the call, instead of a
// selection, a cuSOLVER QR and three synchronisations per leaf (ExactLeaf, kept for leaves wider
// or larger than this kernel takes). Deterministic: fixed block size, fixed reduction trees.
#include <cub/block/block_scan.cuh>

#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/gmt/fused_device.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

struct ExactBatchPolicy {
  static constexpr int kBlock = 256;
  static constexpr int kRoute = 4;      // rows routed per thread and step
  static constexpr int kMaxCols = 130;  // [1, x..., y]: models of up to 128 attributes
  static constexpr int kRouteBlockRows = kBlock * kRoute;  // rows a block of the routing kernel marks
};

// Words of a leaf's row mask (bit i of word w: row 32 w + i).
inline long long exact_mask_words(long long rows) { return (rows + 31) / 32; }

// One leaf of the batch. Its tree's nodes start at nodes[node0] (tree-local child indices, leaf
// ordinals as the fast path packs them); its matrix at mat[mat0] (m x (k + 2), column-major, ld
// m), its row list at rows[row0].
struct ExactJob {
  long long m = 0;           // rows the statistics pass counted
  long long mat0 = 0, row0 = 0;
  long long max_params = 0;  // the rank rule's parameter limit (rows_per_param)
  int node0 = 0, leaf = 0;
  int k = 0, attr0 = 0;      // model attributes attrs[attr0 .. attr0 + k)
};

namespace exact_detail {
// Sum of one value per thread, fixed tree; every thread gets the result.
__device__ __forceinline__ double block_sum(double v, double* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int h = ExactBatchPolicy::kBlock / 2; h > 0; h >>= 1) {
    if (static_cast<int>(threadIdx.x) < h) sh[threadIdx.x] += sh[threadIdx.x + h];
    __syncthreads();
  }
  const double s = sh[0];
  __syncthreads();
  return s;
}
}  // namespace exact_detail

// Grid (row blocks, jobs): job j's row mask, mask[j * words ...]. Warp w of block b routes rows
// b * kRouteBlockRows + 32 kRoute w + 32 q + lane, q < kRoute (kRoute walks interleaved per
// lane); a ballot per q is one word.
__global__ void __launch_bounds__(ExactBatchPolicy::kBlock)
    exact_route_kernel(DatasetView d, const PackedNode* __restrict__ nodes, const ExactJob* __restrict__ jobs,
                       unsigned* __restrict__ mask, long long words) {
  constexpr int R = ExactBatchPolicy::kRoute;
  const int node0 = jobs[blockIdx.y].node0, target = jobs[blockIdx.y].leaf;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const long long n = static_cast<long long>(d.rows);
  const long long base = static_cast<long long>(blockIdx.x) * ExactBatchPolicy::kRouteBlockRows + static_cast<long long>(warp) * 32 * R;
  long long row[R];
  bool valid[R];
  int leaf[R];
  fused_route_lanes<R>(nodes + node0, d.features, static_cast<int>(d.padded_rows), base, n, lane, row, valid, leaf);
#pragma unroll
  for (int q = 0; q < R; ++q) {
    const unsigned b = __ballot_sync(0xFFFFFFFFu, valid[q] && leaf[q] == target);
    const long long w = (base + 32 * q) / 32;
    if (lane == 0 && w < words) mask[static_cast<long long>(blockIdx.y) * words + w] = b;
  }
}

// Outputs per job j: coef[j * ld .. + k + 1) (intercept first, 0 for dropped columns), rank[j],
// sse[j], found[j] (rows routed to the leaf: must equal m). `mask`: exact_route_kernel's.
// mode (a rows split over MPI ranks; one process: kSolve):
//   kSolve   the leaf's rows from the mask, gathered, solved, the residuals summed;
//   kGather  only the rows from this device's mask gathered: the matrix of found[j] rows (ld
//            found[j]) at mat0, for the ranks to exchange;
//   kGiven   the matrix at mat0 is given (the ranks' rows stacked in rank order, ld m: the rows in
//            row order, as kSolve gathers them) and `given` holds a copy of it: solved, the residuals
//            summed from the copy. The same values and operations as kSolve, so the same bits.
struct ExactMode {
  static constexpr int kSolve = 0, kGather = 1, kGiven = 2;
};
__global__ void __launch_bounds__(ExactBatchPolicy::kBlock)
    exact_batch_kernel(DatasetView d, const ExactJob* __restrict__ jobs, const unsigned* __restrict__ mask, long long words,
                       const int* __restrict__ attrs, int* __restrict__ rows, double* __restrict__ mat, double rank_tol,
                       double* __restrict__ coef, int ld, int* __restrict__ rank, double* __restrict__ sse,
                       long long* __restrict__ found, int mode = ExactMode::kSolve, const double* __restrict__ given = nullptr) {
  using Scan = cub::BlockScan<int, ExactBatchPolicy::kBlock>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ double red[ExactBatchPolicy::kBlock];
  __shared__ double orig[ExactBatchPolicy::kMaxCols], fac[ExactBatchPolicy::kMaxCols], beta[ExactBatchPolicy::kMaxCols];
  __shared__ long long piv[ExactBatchPolicy::kMaxCols];
  __shared__ int s_keep;
  __shared__ double s_alpha, s_vnorm2;
  const ExactJob J = jobs[blockIdx.x];
  const int tid = static_cast<int>(threadIdx.x);
  const long long m = J.m;
  const int k = J.k, p = k + 1, nc = p + 1;
  const int* a = attrs + J.attr0;
  int* rw = rows + J.row0;
  double* A = mat + J.mat0;
  const long long ldf = static_cast<long long>(d.padded_rows);

  // 1. The leaf's rows in row order from its mask: a word per thread and step, a block-wide scan
  //    of the words' bit counts, each word's rows written in bit order.
  const unsigned* jm = mask + static_cast<long long>(blockIdx.x) * words;
  long long base = mode == ExactMode::kGiven ? m : 0;
  for (long long w0 = 0; mode != ExactMode::kGiven && w0 < words; w0 += ExactBatchPolicy::kBlock) {
    const long long w = w0 + tid;
    unsigned bits = w < words ? jm[w] : 0u;
    int pos = 0, total = 0;
    Scan(scan).ExclusiveSum(__popc(bits), pos, total);
    while (bits != 0u) {
      const int b = __ffs(static_cast<int>(bits)) - 1;
      bits &= bits - 1u;
      if (base + pos < m) rw[base + pos] = static_cast<int>(w * 32 + b);
      ++pos;
    }
    base += total;
    __syncthreads();  // (scan's storage is reused)
  }
  if (tid == 0) found[blockIdx.x] = base;
  if (mode == ExactMode::kGather) {  // this device's rows of the leaf, ld mr (found[] keeps base: more than m is the host's error to report)
    const long long mr = base < m ? base : m;
    for (long long e = tid; e < mr * nc; e += blockDim.x) {
      const long long c = e / mr, i = e - c * mr;
      const long long row = rw[i];
      A[e] = c == 0 ? 1.0 : c <= k ? static_cast<double>(d.features[static_cast<long long>(a[c - 1]) * ldf + row]) : static_cast<double>(d.targets[row]);
    }
    return;
  }
  if (base != m || m == 0) {  // a count the pass did not give (the host reports it), or an empty leaf
    for (int c = tid; c < p; c += blockDim.x) coef[static_cast<long long>(blockIdx.x) * ld + c] = 0.0;
    if (tid == 0) {
      rank[blockIdx.x] = 0;
      sse[blockIdx.x] = 0.0;
    }
    return;
  }
  // 2. [1, x_a..., y] in double, column-major.
  for (long long e = tid; mode == ExactMode::kSolve && e < m * nc; e += blockDim.x) {
    const long long c = e / m, i = e - c * m;
    const long long row = rw[i];
    double x;
    if (c == 0) x = 1.0;
    else if (c <= k) x = static_cast<double>(d.features[static_cast<long long>(a[c - 1]) * ldf + row]);
    else x = static_cast<double>(d.targets[row]);
    A[e] = x;
  }
  __syncthreads();
  // 3. The rank rule (least_squares_rank_rule's order of operations per column).
  for (int j = 0; j < p; ++j) {
    const double* col = A + static_cast<long long>(j) * m;
    double s = 0.0;
    for (long long i = tid; i < m; i += blockDim.x) s += col[i] * col[i];
    s = exact_detail::block_sum(s, red);
    if (tid == 0) orig[j] = sqrt(s);
  }
  long long r = 0;
  const int nwarps = ExactBatchPolicy::kBlock / 32, warp = tid / 32, lane = tid % 32;
  for (int j = 0; j < p; ++j) {
    double* col = A + static_cast<long long>(j) * m;
    double s = 0.0;
    for (long long i = r + tid; i < m; i += blockDim.x) s += col[i] * col[i];
    const double norm2 = exact_detail::block_sum(s, red);
    if (tid == 0) {
      const double norm = sqrt(norm2);
      const bool keep = !(r >= m || r >= J.max_params || norm == 0.0 || norm <= rank_tol * orig[j]);
      s_keep = keep ? 1 : 0;
      piv[j] = -1;
      if (keep) {
        const double x0 = col[r];
        const double alpha = x0 > 0 ? -norm : norm;
        const double v0 = x0 - alpha;
        s_alpha = alpha;
        s_vnorm2 = norm2 - x0 * x0 + v0 * v0;
        col[r] = v0;
      }
    }
    __syncthreads();
    if (!s_keep) continue;
    const double vnorm2 = s_vnorm2;
    for (int c = j + 1 + warp; c < nc; c += nwarps) {  // a warp per column: d = v . c (lanes strided, xor tree)
      const double* ck = A + static_cast<long long>(c) * m;
      double dsum = 0.0;
      for (long long i = r + lane; i < m; i += 32) dsum += col[i] * ck[i];
      for (int o = 16; o > 0; o >>= 1) dsum += __shfl_xor_sync(0xffffffffu, dsum, o);
      if (lane == 0) fac[c] = 2.0 * dsum / vnorm2;
    }
    __syncthreads();
    for (int c = j + 1; c < nc; ++c) {
      double* ck = A + static_cast<long long>(c) * m;
      const double f = fac[c];
      for (long long i = r + tid; i < m; i += blockDim.x) ck[i] -= f * col[i];
    }
    __syncthreads();
    if (tid == 0) {
      col[r] = s_alpha;
      piv[j] = r;
    }
    ++r;
    __syncthreads();
  }
  // 4. Back substitution (one thread: at most kMaxCols columns).
  if (tid == 0) {
    const double* y = A + static_cast<long long>(p) * m;
    for (int j = p - 1; j >= 0; --j) {
      const long long pr = piv[j];
      if (pr < 0) {
        beta[j] = 0.0;
        continue;
      }
      double acc = y[pr];
      for (int c = j + 1; c < p; ++c)
        if (piv[c] >= 0) acc -= A[static_cast<long long>(c) * m + pr] * beta[c];
      beta[j] = acc / A[static_cast<long long>(j) * m + pr];
    }
    rank[blockIdx.x] = static_cast<int>(r);
  }
  __syncthreads();
  for (int c = tid; c < p; c += blockDim.x) coef[static_cast<long long>(blockIdx.x) * ld + c] = beta[c];
  // 5. The SSE from the residuals of the original values (as ExactLeaf: 1 x c0 first, then the
  //    attributes in order).
  double e2 = 0.0;
  const double* O = mode == ExactMode::kGiven ? given + J.mat0 : nullptr;
  for (long long i = tid; i < m; i += blockDim.x) {
    const long long row = O ? i : rw[i];
    double pred = 0.0;
    pred += beta[0] * 1.0;
    for (int c = 1; c <= k; ++c)
      pred += beta[c] * (O ? O[static_cast<long long>(c) * m + i] : static_cast<double>(d.features[static_cast<long long>(a[c - 1]) * ldf + row]));
    const double e = (O ? O[static_cast<long long>(k + 1) * m + i] : static_cast<double>(d.targets[row])) - pred;
    e2 += e * e;
  }
  e2 = exact_detail::block_sum(e2, red);
  if (tid == 0) sse[blockIdx.x] = e2;
}

// ---- the one-leaf exact solver's kernels (ExactLeaf) ----

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
