// The fast path's launches: the kernels' grids and variants (the launch policy), the call's
// graph (captured when the capacities change) or its direct launches, the upload and download.
// The only translation unit that includes the fused kernels.
#include <algorithm>
#include <string>

#include "algorithms/core/error.hpp"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/fast_detail.cuh"
#include "backends/cuda/gmt/fused_merge.cuh"
#include "backends/cuda/gmt/fused_stats.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

namespace ls = ::gpudm::gmt::leafstats;

void FastPath::drop_graph(int slot) {
  if (exec_[slot]) GPUDM_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_[slot]));
  exec_[slot] = nullptr;
  graph_epoch_[slot] = -1;
}

int FastPath::launch_wide_kv() const { return cap_kv_ > FusedPolicy::kNarrowKv ? wide_kv_ : 0; }

// The launch policy. The stats pass: a block of FusedPolicy::kBlock threads per (tree, chunk); its
// variant by the widest model so far (<= 3 values, <= kNarrowKv, every width) and by where the
// per-leaf atomics live (shared memory up to kSmemLeaves leaves, else global); the every-width
// variant with shared-memory atomics capped for kWideMinBlocks blocks an SM. The merge: blocks of
// kMergeBlock threads, at most the blocks resident at once. The residual pass: the stats pass's grid.
constexpr int kWide = FusedPolicy::kWideMinBlocks;

std::vector<const void*> FastPath::stats_kernels() {
  return {reinterpret_cast<const void*>(fused_stats_kernel<true, 3>), reinterpret_cast<const void*>(fused_stats_kernel<true, FusedPolicy::kNarrowKv>),
          reinterpret_cast<const void*>(fused_stats_kernel<true, 0, kWide>), reinterpret_cast<const void*>(fused_stats_kernel<false, 3>),
          reinterpret_cast<const void*>(fused_stats_kernel<false, FusedPolicy::kNarrowKv>), reinterpret_cast<const void*>(fused_stats_kernel<false, 0>)};
}

int FastPath::merge_blocks_per_sm() {
  int per_sm = 0;
  GPUDM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_merge_kernel, FusedPolicy::kMergeBlock, 0));
  return per_sm;
}

void FastPath::launch_all(PhaseMarks& marks, bool capture, int part) {
  const cudaStream_t s = c_.stream;
  const auto* vp = reinterpret_cast<const FusedView*>(d_in_.data());
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  const int aux = FusedPolicy::kAuxBlock;
  const dim3 grid(static_cast<unsigned>(std::max(1, cap_B_)), static_cast<unsigned>(chunks_));  // (the residual pass's)
  const int warps_per_block = aux / 32;
  ls::SolveParams sp;
  sp.rank_tol = o.rank_tol;
  sp.pivot_guard = o.fast_pivot_guard;
  sp.rows_per_param = o.rows_per_param;
  if (part != kPartB) {  // (a rows split's second part starts at the merge's level 2 on every group's record)
    marks.begin("redistribute", s, capture);
    fused_init_kernel<<<std::max(1, std::min(1024, (std::max(cap_L_, cap_S_) + aux - 1) / aux)), aux, 0, s>>>(vp);
    GPUDM_CUDA_CHECK(cudaGetLastError());
    // the stats pass: chunk-fastest (every chunk of the heaviest tree first) or tree-fastest
    const dim3 sgrid = chunk_major_ ? dim3(static_cast<unsigned>(chunks_), static_cast<unsigned>(std::max(1, cap_B_))) : grid;
    const int wkv = launch_wide_kv();
    const int var = cap_kv_ <= 3 ? 0 : cap_kv_ <= FusedPolicy::kNarrowKv ? 1 : 2;
    switch (var + (smem_leaves_ ? 0 : 3)) {
      case 0: fused_stats_kernel<true, 3><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv); break;
      case 1: fused_stats_kernel<true, FusedPolicy::kNarrowKv><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv); break;
      case 2: fused_stats_kernel<true, 0, kWide><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv); break;
      case 3: fused_stats_kernel<false, 3><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv); break;
      case 4: fused_stats_kernel<false, FusedPolicy::kNarrowKv><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv); break;
      default: fused_stats_kernel<false, 0><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv); break;
    }
    GPUDM_CUDA_CHECK(cudaGetLastError());
    marks.end(s, capture);
  }
  marks.begin("calc_models", s, capture);
  const int merge_grid = std::max(1, std::min(cap_S_, merge_grid_max_));  // (its blocks loop over the stat leaves)
  if (part == kPartA) {  // a rows split's first part ends with the merge's level 1 (the ranks then exchange the groups' records)
    fused_merge_kernel<<<merge_grid, FusedPolicy::kMergeBlock, 0, s>>>(vp, c_.data, sp, 1);
    GPUDM_CUDA_CHECK(cudaGetLastError());
    marks.end(s, capture);
    return;
  }
  // the merge and the solve (levels 1 and 2; a rows split's part B: level 2), the residuals
  const bool part_b = part == kPartB;
  fused_merge_kernel<<<merge_grid, FusedPolicy::kMergeBlock, 0, s>>>(vp, c_.data, sp, part_b ? 2 : 3);
  GPUDM_CUDA_CHECK(cudaGetLastError());
  marks.end(s, capture);
  // SSE of near-exact fits from their residuals (blocks of other trees return at once)
  marks.begin("estimate_errors", s, capture);
  fused_residual_pass_kernel<<<grid, FusedPolicy::kBlock, 0, s>>>(vp, c_.data);
  GPUDM_CUDA_CHECK(cudaGetLastError());
  // (part B: level 1 of the residual sums; the ranks then exchange them when a leaf needs them)
  fused_residual_merge_kernel<<<std::max(1, (cap_S_ + warps_per_block - 1) / warps_per_block), aux, 0, s>>>(vp, part_b ? 1 : 3);
  GPUDM_CUDA_CHECK(cudaGetLastError());
  marks.end(s, capture);
#if defined(GPUDM_CUDA_DEBUG_SYNC)
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
#endif
}

void FastPath::capture_graph(int part) {
  const int slot = slot_of(part);
  drop_graph(slot);
  const cudaStream_t s = c_.stream;
  PhaseMarks& marks = marks_[slot];
  marks.clear();
  GPUDM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  try {
    launch_all(marks, true, part);
  } catch (...) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(s, &g);  // leave capture mode whatever happened
    if (g) cudaGraphDestroy(g);
    (void)cudaGetLastError();
    throw;
  }
  cudaGraph_t g = nullptr;
  GPUDM_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  const cudaError_t e = cudaGraphInstantiate(&exec_[slot], g, 0);
  GPUDM_CUDA_CHECK_NOTHROW(cudaGraphDestroy(g));
  GPUDM_CUDA_CHECK(e);
  graph_epoch_[slot] = epoch_;
  ++captures_;
}

void FastPath::drop_graphs(const std::string& why) {
  drop_graph(0);
  drop_graph(1);
  graphs_on_ = false;
  graph_note_ = why;
}

// The graph of `part` (captured again when the capacities changed) or its direct launches: queued
// on the stream, nothing waited for.
void FastPath::run_part(int part, PhaseMarks& direct) {
  const cudaStream_t s = c_.stream;
  const int slot = slot_of(part);
  if (graphs_on_ && graph_epoch_[slot] != epoch_) {
    if (in_flight_) {  // (capture starts on an idle stream)
      GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
      in_flight_ = false;
    }
    try {
      capture_graph(part);
    } catch (const ::gpudm::Error& e) {
      drop_graphs(std::string("off: capture failed (") + e.what() + ")");
    }
  }
  if (graphs_on_) GPUDM_CUDA_CHECK(cudaGraphLaunch(exec_[slot], s));
  else launch_all(direct, false, part);
}

// Upload, the call's kernels, download: queued on the stream, nothing waited for.
void FastPath::launch_batch(PhaseMarks& direct) {
  const cudaStream_t s = c_.stream;
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(d_in_.data(), h_in_.data(), in_bytes_, cudaMemcpyHostToDevice, s));
  direct.end(s, false);
  run_part(kAll, direct);
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_out_.data(), d_out_.data(), out_bytes_, cudaMemcpyDeviceToHost, s));
  direct.end(s, false);
  in_flight_ = true;
}

}  // namespace gpudm::backend::cuda::gmt_cuda
