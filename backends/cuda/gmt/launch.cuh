#pragma once
// Launchers of the GMT kernels: shapes from the policies, launch on a stream, check the launch.
// Pointers are device pointers.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "backends/cuda/common/dataset.cuh"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/gmt/args.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

// ---- faithful path ----
// The paper's Sec. 5.3 grid for a training set of `rows` rows (64x32 ... 256x256).
void faithful_grid(std::size_t rows, int* blocks, int* threads);
void launch_faithful_redistribute(const DatasetView& d, const BatchView* bv, int* leaf_of, int* counts, int blocks,
                                  int threads, cudaStream_t s);
template <class T>
void launch_faithful_reorganize(const DatasetView& d, const BatchView* bv, const int* sorted_leaf, const int* sorted_row,
                                const long long* leaf_begin, const int* leaf_count, const long long* mat_off, T* mat,
                                int blocks, int threads, cudaStream_t s);
// Shared-memory node tables when the tree fits the paper's 48 KB, else global (`part`,
// initialised by the caller).
bool faithful_tables_fit_shared(int n_nodes);
void launch_faithful_estimate_errors(const DatasetView& d, const BatchView* bv, const int* sorted_leaf, const int* sorted_row,
                                     NodeTables part, int n_nodes, int blocks, int threads, cudaStream_t s);
void launch_faithful_reduction(const BatchView* bv, int blocks, NodeTables part, const int* counts, const long long* leaf_begin,
                               const int* sorted_row, NodeAcc* scratch, NodeOut* out, cudaStream_t s);
template <class T>
void launch_column_norms(const T* mat, long long m, int cols, double* out, cudaStream_t s);
template <class T>
void launch_select_columns(const T* src, long long m, const ColumnList& cols, T* dst, cudaStream_t s);
template <class T>
void launch_extract(const T* src, long long stride, int k, double* dst, cudaStream_t s);
void launch_gather_leaf(const DatasetView& d, const BatchView* bv, int gl, const int* rows, long long m, double* mat,
                        cudaStream_t s);

// ---- fast path ----
struct FastLaunch {
  int nb = 1;                 // rows kernels' blocks
  long long chunk = 0, sub = 0;
  int gram_blocks = 1, solve_blocks = 1;
  int wmax = 2;               // widest model of the batched solver (<= kMaxWidth)
  std::size_t solve_smem = 0, errors_smem = 0;
  bool dmma = false;
};
// Shapes for a dataset (rows, attributes) on a device; sets the kernels' shared-memory limits.
FastLaunch plan_fast(const DatasetView& d, const DeviceProps& props, bool dmma);
void launch_fast_count(const FastArgs& a, const FastLaunch& p, cudaStream_t s);
void launch_fast_scan(const FastArgs& a, const FastLaunch& p, cudaStream_t s);
void launch_fast_plan(const FastArgs& a, const FastLaunch& p, cudaStream_t s);
void launch_fast_scatter(const FastArgs& a, const FastLaunch& p, cudaStream_t s);
void launch_fast_gram(const FastArgs& a, const FastLaunch& p, cudaStream_t s);
void launch_fast_solve(const FastArgs& a, const FastLaunch& p, cudaStream_t s);
void launch_fast_errors(const FastArgs& a, const FastLaunch& p, cudaStream_t s);
void launch_fast_kth(const FastArgs& a, const FastLaunch& p, cudaStream_t s);
void launch_fast_reduce(const FastArgs& a, const FastLaunch& p, cudaStream_t s);
// Packed 4x4 tiles of the Gram of a model of width w (1 + attributes + y).
int gram_tiles(int w);

}  // namespace gpudm::backend::cuda::gmt_cuda
