#include "backends/cuda/gmt/launch.cuh"

#include <algorithm>
#include <string>

#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/kernels_faithful.cuh"
#include "backends/cuda/gmt/kernels_fast.cuh"
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

void launch_faithful_reduction(const BatchView* bv, int blocks, NodeTables part, const int* counts, const long long* leaf_begin,
                               const int* sorted_row, NodeAcc* scratch, NodeOut* out, cudaStream_t s) {
  faithful_reduction_kernel<<<1, FaithfulPolicy::kReduceThreads, 0, s>>>(bv, blocks, part, counts, leaf_begin, sorted_row,
                                                                          scratch, out);
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

void launch_gather_leaf(const DatasetView& d, const BatchView* bv, int gl, const int* rows, long long m, double* mat,
                        cudaStream_t s) {
  if (m < 1) return;
  // m x (attributes + 2) entries; the attribute count is on the device, so size for the widest.
  const long long work = m * static_cast<long long>(d.cols + 2);
  gather_leaf_kernel<<<aux_grid(work, FaithfulPolicy::kAuxThreads), FaithfulPolicy::kAuxThreads, 0, s>>>(d, bv, gl, rows, m, mat);
  GPUDM_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------------
int gram_tiles(int w) {
  const int nb = (w + 3) / 4;
  return nb * (nb + 1) / 2;
}

FastLaunch plan_fast(const DatasetView& d, const DeviceProps& props, bool dmma) {
  FastLaunch p;
  const int sms = std::max(1, props.sm_count);
  const long long n = static_cast<long long>(d.rows);
  const long long per_block_min = static_cast<long long>(FastPolicy::kBlock) * FastPolicy::kMinRowsPerThread;
  long long nb = (n + per_block_min - 1) / per_block_min;
  nb = std::max<long long>(1, std::min<long long>(nb, static_cast<long long>(FastPolicy::kMaxBlocksPerSm) * sms));
  long long chunk = (n + nb - 1) / nb;
  chunk = (chunk + FastPolicy::kBlock - 1) / FastPolicy::kBlock * FastPolicy::kBlock;  // whole 32-row tiles per warp
  if (chunk < FastPolicy::kBlock) chunk = FastPolicy::kBlock;
  nb = (n + chunk - 1) / chunk;
  if (nb < 1) nb = 1;
  if (n > 0x7FFFFFFFLL) throw ::gpudm::Error("gmt/cuda: more than 2^31 training rows");
  p.nb = static_cast<int>(nb);
  p.chunk = chunk;
  p.sub = chunk / FastPolicy::kWarps;
  p.gram_blocks = FastPolicy::kGramBlocksPerSm * sms;
  p.solve_blocks = FastPolicy::kSolveBlocksPerSm * sms;
  p.wmax = std::min<int>(static_cast<int>(d.cols) + 2, FastPolicy::kMaxWidth);
  p.solve_smem = static_cast<std::size_t>(p.wmax) * static_cast<std::size_t>(p.wmax) * sizeof(double);
  p.errors_smem = fast_errors_smem_bytes();
  p.dmma = dmma;
  if (dmma && props.cc_major < 8)
    throw ::gpudm::Error("gmt/cuda: gram_engine dmma needs FP64 tensor cores (compute capability 8.0+), the device is " +
                         std::to_string(props.cc_major) + "." + std::to_string(props.cc_minor));
  if (p.solve_smem + 8 * 1024 > props.smem_per_block_optin || p.errors_smem + 1024 > props.smem_per_block_optin)
    throw ::gpudm::Error("gmt/cuda: the fast path needs " + std::to_string(std::max(p.solve_smem, p.errors_smem)) +
                         " bytes of shared memory per block; the device allows " + std::to_string(props.smem_per_block_optin));
  GPUDM_CUDA_CHECK(cudaFuncSetAttribute(fast_solve_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(p.solve_smem)));
  GPUDM_CUDA_CHECK(cudaFuncSetAttribute(fast_errors_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(p.errors_smem)));
  return p;
}

void launch_fast_count(const FastArgs& a, const FastLaunch& p, cudaStream_t s) {
  fast_count_kernel<<<p.nb, FastPolicy::kBlock, 0, s>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}
void launch_fast_scan(const FastArgs& a, const FastLaunch&, cudaStream_t s) {
  fast_scan_kernel<<<FastPolicy::kAuxBlocks, FastPolicy::kAuxBlock, 0, s>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}
void launch_fast_plan(const FastArgs& a, const FastLaunch&, cudaStream_t s) {
  fast_plan_kernel<<<1, kPlanThreads, 0, s>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}
void launch_fast_scatter(const FastArgs& a, const FastLaunch& p, cudaStream_t s) {
  fast_scatter_kernel<<<p.nb, FastPolicy::kBlock, 0, s>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}
void launch_fast_gram(const FastArgs& a, const FastLaunch& p, cudaStream_t s) {
  if (p.dmma) fast_gram_dmma_kernel<<<p.gram_blocks, FastPolicy::kGramBlock, 0, s>>>(a);
  else fast_gram_fp64_kernel<<<p.gram_blocks, FastPolicy::kGramBlock, 0, s>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}
void launch_fast_solve(const FastArgs& a, const FastLaunch& p, cudaStream_t s) {
  fast_solve_kernel<<<p.solve_blocks, FastPolicy::kSolveBlock, p.solve_smem, s>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}
void launch_fast_errors(const FastArgs& a, const FastLaunch& p, cudaStream_t s) {
  fast_errors_kernel<<<p.nb, FastPolicy::kBlock, p.errors_smem, s>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}
void launch_fast_kth(const FastArgs& a, const FastLaunch&, cudaStream_t s) {
  fast_kth_kernel<<<FastPolicy::kAuxBlocks, FastPolicy::kAuxBlock, 0, s>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}
void launch_fast_reduce(const FastArgs& a, const FastLaunch&, cudaStream_t s) {
  fast_reduce_kernel<<<FastPolicy::kAuxBlocks, FastPolicy::kAuxBlock, 0, s>>>(a);
  GPUDM_CUDA_CHECK_LAUNCH();
}

}  // namespace gpudm::backend::cuda::gmt_cuda
