#pragma once
// Least squares of one leaf with cuSOLVER geqrf + ormqr (Q^T y) and cuBLAS trsm, as the paper's
// calc_models (Listing 2), with the CPU evaluators' rank rule (eval_steps.cpp,
// least_squares_rank_rule): columns in order, the intercept first; a column is dropped when as
// many columns as rows (or max_params) are kept already, or when its part orthogonal to the kept
// columns before it has norm 0 or <= rank_tol x its own norm. An unpivoted QR of the candidate
// columns gives exactly that remainder as |R_ii| for every column up to the first one the rule
// drops; that column is removed and the QR repeated, so the kept columns are the CPU's.
// Q^T y is one ormqr call; where cuSOLVER's 32-bit ormqr workspace query fails (tall leaves: 10M
// rows) it is taken from geqrf of [A | y] instead (leaf_solver.cu says why that is the same).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/cuda/common/buffer.cuh"

struct cusolverDnContext;
struct cublasContext;

namespace gpudm::backend::cuda::gmt_cuda {

class LeafSolver {
 public:
  explicit LeafSolver(cudaStream_t stream);
  ~LeafSolver();
  LeafSolver(const LeafSolver&) = delete;
  LeafSolver& operator=(const LeafSolver&) = delete;

  // `mat`: m x (ncand + 1) column-major (ld m) on the device: ncand candidate columns (column 0
  // the intercept), then y; not modified. Writes ncand coefficients to `coef` (0 for dropped
  // columns) and returns the rank. T = float (the paper) or double.
  template <class T>
  int solve(const T* mat, long long m, int ncand, double rank_tol, long long max_params, double* coef);

  int calls() const { return calls_; }        // geqrf calls so far (QR repeats included)
  void reset_calls() { calls_ = 0; }
  // Leaves of more rows take Q^T y from geqrf of [A | y] without asking ormqr (tests force the
  // fallback with 1; by default only a failed ormqr workspace query does).
  void set_ormqr_max_rows(long long rows) { ormqr_max_rows_ = std::max<long long>(1, rows); }
  long long qty_by_geqrf() const { return qty_by_geqrf_; }  // leaves that took the fallback so far

 private:
  template <class T>
  T* work_matrix(std::size_t n);
  template <class T>
  T* workspace(std::size_t n);

  cudaStream_t stream_;
  cusolverDnContext* solver_ = nullptr;
  cublasContext* blas_ = nullptr;
  DeviceBuffer<double> wd_, wsd_, taud_;
  DeviceBuffer<float> wf_, wsf_, tauf_;
  DeviceBuffer<double> norms_;
  DeviceBuffer<int> info_;
  PinnedBuffer<double> h_norms_, h_diag_, h_beta_;
  PinnedBuffer<int> h_info_;
  int calls_ = 0;
  long long ormqr_max_rows_ = 0x7FFFFFFFLL;
  long long qty_by_geqrf_ = 0;
};

}  // namespace gpudm::backend::cuda::gmt_cuda
