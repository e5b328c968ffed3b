#include "backends/cuda/gmt/leaf_solver.cuh"

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/launch.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

namespace {
// cuSOLVER / cuBLAS by element type.
cusolverStatus_t geqrf_size(cusolverDnHandle_t h, int m, int n, float* a, int lda, int* lw) {
  return cusolverDnSgeqrf_bufferSize(h, m, n, a, lda, lw);
}
cusolverStatus_t geqrf_size(cusolverDnHandle_t h, int m, int n, double* a, int lda, int* lw) {
  return cusolverDnDgeqrf_bufferSize(h, m, n, a, lda, lw);
}
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, float* a, int lda, float* tau, float* w, int lw, int* info) {
  return cusolverDnSgeqrf(h, m, n, a, lda, tau, w, lw, info);
}
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, double* a, int lda, double* tau, double* w, int lw, int* info) {
  return cusolverDnDgeqrf(h, m, n, a, lda, tau, w, lw, info);
}
cusolverStatus_t ormqr_size(cusolverDnHandle_t h, int m, int k, const float* a, const float* tau, const float* c, int* lw) {
  return cusolverDnSormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, k, a, m, tau, c, m, lw);
}
cusolverStatus_t ormqr_size(cusolverDnHandle_t h, int m, int k, const double* a, const double* tau, const double* c, int* lw) {
  return cusolverDnDormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, k, a, m, tau, c, m, lw);
}
cusolverStatus_t ormqr(cusolverDnHandle_t h, int m, int k, const float* a, const float* tau, float* c, float* w, int lw, int* info) {
  return cusolverDnSormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, k, a, m, tau, c, m, w, lw, info);
}
cusolverStatus_t ormqr(cusolverDnHandle_t h, int m, int k, const double* a, const double* tau, double* c, double* w, int lw,
                       int* info) {
  return cusolverDnDormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, k, a, m, tau, c, m, w, lw, info);
}
cublasStatus_t trsm(cublasHandle_t h, int k, const float* r, int ldr, float* b, int ldb) {
  const float one = 1.0f;
  return cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, k, 1, &one, r, ldr, b, ldb);
}
cublasStatus_t trsm(cublasHandle_t h, int k, const double* r, int ldr, double* b, int ldb) {
  const double one = 1.0;
  return cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, k, 1, &one, r, ldr, b, ldb);
}
template <class T>
void grow(DeviceBuffer<T>& b, std::size_t n) {
  if (b.size() < n) b = DeviceBuffer<T>(n + n / 2);
}
template <class T>
void grow(PinnedBuffer<T>& b, std::size_t n) {
  if (b.size() < n) b = PinnedBuffer<T>(n + n / 2 + 16);
}
}  // namespace

LeafSolver::LeafSolver(cudaStream_t stream) : stream_(stream) {
  cusolverDnHandle_t s = nullptr;
  GPUDM_CUSOLVER_CHECK(cusolverDnCreate(&s));
  solver_ = s;
  cublasHandle_t b = nullptr;
  const cublasStatus_t st = cublasCreate(&b);
  if (st != CUBLAS_STATUS_SUCCESS) {
    cusolverDnDestroy(solver_);
    GPUDM_CUBLAS_CHECK(st);
  }
  blas_ = b;
  GPUDM_CUSOLVER_CHECK(cusolverDnSetStream(solver_, stream_));
  GPUDM_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
  GPUDM_CUBLAS_CHECK(cublasSetPointerMode(blas_, CUBLAS_POINTER_MODE_HOST));
  info_ = DeviceBuffer<int>(2);
  h_info_ = PinnedBuffer<int>(2);
}

LeafSolver::~LeafSolver() {
  if (blas_) {
    const cublasStatus_t st = cublasDestroy(blas_);
    if (st != CUBLAS_STATUS_SUCCESS) log_cuda_error(cudaErrorUnknown, "cublasDestroy", __FILE__, __LINE__);
  }
  if (solver_) {
    const cusolverStatus_t st = cusolverDnDestroy(solver_);
    if (st != CUSOLVER_STATUS_SUCCESS) log_cuda_error(cudaErrorUnknown, "cusolverDnDestroy", __FILE__, __LINE__);
  }
}

template <>
float* LeafSolver::work_matrix<float>(std::size_t n) {
  grow(wf_, n);
  return wf_.data();
}
template <>
double* LeafSolver::work_matrix<double>(std::size_t n) {
  grow(wd_, n);
  return wd_.data();
}
template <>
float* LeafSolver::workspace<float>(std::size_t n) {
  grow(wsf_, std::max<std::size_t>(n, 1));
  return wsf_.data();
}
template <>
double* LeafSolver::workspace<double>(std::size_t n) {
  grow(wsd_, std::max<std::size_t>(n, 1));
  return wsd_.data();
}

template <class T>
int LeafSolver::solve(const T* mat, long long m, int ncand, double rank_tol, long long max_params, double* coef) {
  if (m < 1 || ncand < 1) throw ::gpudm::Error("gmt/cuda: least squares of an empty leaf");
  if (m > 0x7FFFFFFFLL) throw ::gpudm::Error("gmt/cuda: a leaf of more than 2^31 rows");
  if (ncand > ColumnList::kMax)
    throw ::gpudm::Error("gmt/cuda: a leaf model of " + std::to_string(ncand - 1) + " attributes; the exact solver takes " +
                         std::to_string(ColumnList::kMax - 1));
  const int mi = static_cast<int>(m);
  grow(norms_, static_cast<std::size_t>(ncand) + 1);
  grow(h_norms_, static_cast<std::size_t>(ncand));
  grow(h_diag_, static_cast<std::size_t>(ncand));
  grow(h_beta_, static_cast<std::size_t>(ncand));
  launch_column_norms<T>(mat, m, ncand, norms_.data(), stream_);
  norms_.download_async(h_norms_.data(), static_cast<std::size_t>(ncand), stream_);
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(stream_));

  std::vector<char> dropped(static_cast<std::size_t>(ncand), 0);
  const long long limit = std::min<long long>(m, std::max<long long>(1, max_params));
  ColumnList keep{};
  T* tau = nullptr;
  T* w = nullptr;
  for (;;) {
    keep.n = 0;
    for (int j = 0; j < ncand && keep.n < limit; ++j)
      if (!dropped[static_cast<std::size_t>(j)]) keep.idx[keep.n++] = j;
    const int k = keep.n;
    // Work matrix: the k candidate columns, then y (copied in before ormqr), then tau.
    // (k + 1 tau slots: the fallback below factorises k + 1 columns.)
    w = work_matrix<T>(static_cast<std::size_t>(m) * static_cast<std::size_t>(k + 1) + static_cast<std::size_t>(k) + 1);
    tau = w + static_cast<std::size_t>(m) * static_cast<std::size_t>(k + 1);
    launch_select_columns<T>(mat, m, keep, w, stream_);
    int lw = 0;
    GPUDM_CUSOLVER_CHECK(geqrf_size(solver_, mi, k, w, mi, &lw));
    T* ws = workspace<T>(static_cast<std::size_t>(lw));
    GPUDM_CUSOLVER_CHECK(geqrf(solver_, mi, k, w, mi, tau, ws, lw, info_.data()));
    ++calls_;
    launch_extract<T>(w, m + 1, k, norms_.data() + 0, stream_);  // R's diagonal (norms are on the host already)
    norms_.download_async(h_diag_.data(), static_cast<std::size_t>(k), stream_);
    info_.download_async(h_info_.data(), 1, stream_);
    GPUDM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (h_info_[0] != 0)
      throw ::gpudm::Error("gmt/cuda: cusolverDn geqrf reported info " + std::to_string(h_info_[0]) + " for a " +
                           std::to_string(m) + " x " + std::to_string(k) + " leaf");
    int first = -1;
    for (int i = 0; i < k; ++i) {
      const double d = std::fabs(h_diag_[static_cast<std::size_t>(i)]);
      const double orig = h_norms_[static_cast<std::size_t>(keep.idx[i])];
      if (d == 0.0 || d <= rank_tol * orig) {
        first = i;
        break;
      }
    }
    if (first < 0) break;
    dropped[static_cast<std::size_t>(keep.idx[first])] = 1;
  }
  const int k = keep.n;
  T* y = w + static_cast<std::size_t>(m) * static_cast<std::size_t>(k);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(y, mat + static_cast<std::size_t>(m) * static_cast<std::size_t>(ncand), sizeof(T) * static_cast<std::size_t>(m),
                                   cudaMemcpyDeviceToDevice, stream_));
  // Q^T y: one ormqr call, as the paper (Listing 2). cuSOLVER's ormqr has only the 32-bit API,
  // and its workspace query returned CUSOLVER_STATUS_INVALID_VALUE for a 10M-row leaf (Armchair
  // 10M on the H100, k <= 3: it overflows with the rows, so no split of the reflectors helps; CUDA.jl
  // hit the same, JuliaGPU/CUDA.jl#3234). There Q^T y comes from geqrf instead: the unpivoted
  // Householder QR of [A | y] applies H(0), ..., H(k-1) to the column y exactly as ormqr applies
  // them, and leaves R's first k columns as the QR of A alone, so R(0:k, k) = Q^T y (the first k
  // entries that trsm reads) and the kept columns do not change. The columns are selected again,
  // since A's geqrf overwrote them.
  int lw = 0;
  const cusolverStatus_t q = mi > ormqr_max_rows_ ? CUSOLVER_STATUS_INVALID_VALUE
                                                  : ormqr_size(solver_, mi, k, w, tau, y, &lw);
  if (q == CUSOLVER_STATUS_INVALID_VALUE) {
    launch_select_columns<T>(mat, m, keep, w, stream_);
    GPUDM_CUSOLVER_CHECK(geqrf_size(solver_, mi, k + 1, w, mi, &lw));
    T* ws = workspace<T>(static_cast<std::size_t>(lw));
    GPUDM_CUSOLVER_CHECK(geqrf(solver_, mi, k + 1, w, mi, tau, ws, lw, info_.data() + 1));
    ++calls_;
    ++qty_by_geqrf_;
  } else {
    GPUDM_CUSOLVER_CHECK(q);
    T* ws = workspace<T>(static_cast<std::size_t>(lw));
    GPUDM_CUSOLVER_CHECK(ormqr(solver_, mi, k, w, tau, y, ws, lw, info_.data() + 1));
  }
  GPUDM_CUBLAS_CHECK(trsm(blas_, k, w, mi, y, mi));
  launch_extract<T>(y, 1, k, norms_.data(), stream_);
  norms_.download_async(h_beta_.data(), static_cast<std::size_t>(k), stream_);
  info_.download_async(h_info_.data(), 2, stream_);
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (h_info_[1] != 0)
    throw ::gpudm::Error(std::string("gmt/cuda: cusolverDn ") + (q == CUSOLVER_STATUS_INVALID_VALUE ? "geqrf of [A | y]" : "ormqr") +
                         " reported info " + std::to_string(h_info_[1]));
  std::fill(coef, coef + ncand, 0.0);
  for (int i = 0; i < k; ++i) coef[keep.idx[i]] = h_beta_[static_cast<std::size_t>(i)];
  return k;
}

template int LeafSolver::solve<float>(const float*, long long, int, double, long long, double*);
template int LeafSolver::solve<double>(const double*, long long, int, double, long long, double*);

}  // namespace gpudm::backend::cuda::gmt_cuda
