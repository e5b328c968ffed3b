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
void launch_faithful_reduction(const BatchView* bv, int blocks, NodeTables part, const int* counts, NodeAcc* scratch, NodeOut* out,
                               cudaStream_t s);
template <class T>
void launch_column_norms(const T* mat, long long m, int cols, double* out, cudaStream_t s);
template <class T>
void launch_select_columns(const T* src, long long m, const ColumnList& cols, T* dst, cudaStream_t s);
template <class T>
void launch_extract(const T* src, long long stride, int k, double* dst, cudaStream_t s);
}  // namespace gpudm::backend::cuda::gmt_cuda
