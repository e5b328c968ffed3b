#include "backends/cuda/gmt/launch.cuh"

#include <algorithm>
#include <string>

#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/kernels_faithful.cuh"
#include "backends/cuda/gmt/policy.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

namespace {
void check_shape(int blocks, int threads) {
  if (blocks < 1 || threads < 1 || threads > 1024)
    throw ::gpudm::Error("gmt/cuda: launch shape " + std::to_string(blocks) + " x " + std::to_string(threads) +
                         " outside [1, 2^31) x [1, 1024]");
}
unsigned aux_grid(long long work, int block) {
  long long g = (work + block - 1) / block;
  g = std::max<long long>(1, std::min<long long>(g, 65535));
  return static_cast<unsigned>(g);
}
}  // namespace

// ---------------------------------------------------------------------------------------------
void faithful_grid(std::size_t rows, int* blocks, int* threads) {
  // Sec. 5.3: 4-8 samples per thread; 64x32 for sets 1-5 (15-23K rows), 128x64 for 6-8 (41K),
  // 128x128 for 9-12 (67-68K) and Armchair100K, 256x128 for Elnino (178K), 256x256 otherwise.
  if (rows < 30000) *blocks = 64, *threads = 32;
  else if (rows < 60000) *blocks = 128, *threads = 64;
  else if (rows < 150000) *blocks = 128, *threads = 128;
  else if (rows < 300000) *blocks = 256, *threads = 128;
  else *blocks = FaithfulPolicy::kDefaultBlocks, *threads = FaithfulPolicy::kDefaultThreads;
}

void launch_faithful_redistribute(const DatasetView& d, const BatchView* bv, int* leaf_of, int* counts, int blocks,
                                  int threads, cudaStream_t s) {
  check_shape(blocks, threads);
  faithful_redistribute_kernel<<<blocks, threads, 0, s>>>(d, bv, leaf_of, counts);
  GPUDM_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_faithful_reorganize(const DatasetView& d, const BatchView* bv, const int* sorted_leaf, const int* sorted_row,
                                const long long* leaf_begin, const int* leaf_count, const long long* mat_off, T* mat,
                                int blocks, int threads, cudaStream_t s) {
  check_shape(blocks, threads);
  faithful_reorganize_kernel<T><<<blocks, threads, 0, s>>>(d, bv, sorted_leaf, sorted_row, leaf_begin, leaf_count, mat_off, mat);
  GPUDM_CUDA_CHECK_LAUNCH();
}
template void launch_faithful_reorganize<float>(const DatasetView&, const BatchView*, const int*, const int*, const long long*,
                                                const int*, const long long*, float*, int, int, cudaStream_t);
template void launch_faithful_reorganize<double>(const DatasetView&, const BatchView*, const int*, const int*, const long long*,
                                                 const int*, const long long*, double*, int, int, cudaStream_t);

bool faithful_tables_fit_shared(int n_nodes) {
  return static_cast<std::size_t>(n_nodes) * FaithfulPolicy::kNodeEntryBytes <= FaithfulPolicy::kSharedTableBytes;
}

void launch_faithful_estimate_errors(const DatasetView& d, const BatchView* bv, const int* sorted_leaf, const int* sorted_row,
                                     NodeTables part, int n_nodes, int blocks, int threads, cudaStream_t s) {
  check_shape(blocks, threads);
  if (faithful_tables_fit_shared(n_nodes)) {
    const std::size_t smem = static_cast<std::size_t>(n_nodes) * FaithfulPolicy::kNodeEntryBytes;
    faithful_estimate_errors_kernel<true><<<blocks, threads, smem, s>>>(d, bv, sorted_leaf, sorted_row, part);
  } else {
    faithful_estimate_errors_kernel<false><<<blocks, threads, 0, s>>>(d, bv, sorted_leaf, sorted_row, part);
  }
  GPUDM_CUDA_CHECK_LAUNCH();
}

void launch_faithful_reduction(const BatchView* bv, int blocks, NodeTables part, const int* counts, NodeAcc* scratch, NodeOut* out,
                               cudaStream_t s) {
  faithful_reduction_kernel<<<1, FaithfulPolicy::kReduceThreads, 0, s>>>(bv, blocks, part, counts, scratch, out);
  GPUDM_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_column_norms(const T* mat, long long m, int cols, double* out, cudaStream_t s) {
  if (cols < 1) return;
  column_norms_kernel<T><<<std::min(cols, 1024), FaithfulPolicy::kAuxThreads, 0, s>>>(mat, m, cols, out);
  GPUDM_CUDA_CHECK_LAUNCH();
}
template void launch_column_norms<float>(const float*, long long, int, double*, cudaStream_t);
template void launch_column_norms<double>(const double*, long long, int, double*, cudaStream_t);

template <class T>
void launch_select_columns(const T* src, long long m, const ColumnList& cols, T* dst, cudaStream_t s) {
  if (cols.n < 1 || m < 1) return;
  select_columns_kernel<T><<<aux_grid(m * cols.n, FaithfulPolicy::kAuxThreads), FaithfulPolicy::kAuxThreads, 0, s>>>(src, m, cols, dst);
  GPUDM_CUDA_CHECK_LAUNCH();
}
template void launch_select_columns<float>(const float*, long long, const ColumnList&, float*, cudaStream_t);
template void launch_select_columns<double>(const double*, long long, const ColumnList&, double*, cudaStream_t);

template <class T>
void launch_extract(const T* src, long long stride, int k, double* dst, cudaStream_t s) {
  if (k < 1) return;
  extract_kernel<T><<<aux_grid(k, FaithfulPolicy::kAuxThreads), FaithfulPolicy::kAuxThreads, 0, s>>>(src, stride, k, dst);
  GPUDM_CUDA_CHECK_LAUNCH();
}
template void launch_extract<float>(const float*, long long, int, double*, cudaStream_t);
template void launch_extract<double>(const double*, long long, int, double*, cudaStream_t);

}  // namespace gpudm::backend::cuda::gmt_cuda
