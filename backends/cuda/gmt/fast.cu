// The fast path's evaluator side: its lifecycle, a call's steps and describe(). Per evaluator call:
//   flattening   pack the batch's compact trees as they are (node arrays, leaf models; no 2^depth
//                slots) into one pinned buffer
//   transfers    one upload
//   graph        init -> fused statistics pass [redistribute] -> merge -> solve [calc_models]
//   transfers    one download (leaf counts and dipole keys, the stat leaves' statistics, models,
//                SSE, flags, stray rows); one synchronisation
//   repair       the repair rule from the counts (repair.hpp); a repaired leaf's statistics are
//                its original leaf's plus the moved rows (at most min_rows - 1 per small side),
//                solved on the host with the same leafstats::solve_stats; results into the trees,
//                and a tree's counts / errors / dipoles propagated to its root (in the same task)
//   reduction    the propagation for the trees whose leaves the exact solver fitted (after it)
// (Two halves of a call in flight, the host packing and finishing one while the device ran the
// other, were measured slower: the halves' kernels and host steps cost more than the overlap hid;
// docs/perf-notes-gmt.md.)
// Rare cases leave this path: leaves the statistics cannot decide (ambiguous pivots, models of
// more than FusedPolicy::kMaxKv values) are solved again by the exact QR solver (ExactLeaf), and a
// tree whose repair needs statistics the pass did not take (a collapsed subtree, a clean leaf that
// changed) is evaluated again in a second call with every leaf's statistics.
#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "algorithms/core/host_workers.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gmt/eval_steps.hpp"
#include "algorithms/core/error.hpp"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/fast_detail.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

namespace ls = ::gpudm::gmt::leafstats;
using ::gpudm::gmt::Tree;
using ::gpudm::gmt::TreeNode;
using namespace fast_detail;

FastPath::FastPath(const Context& c) : c_(c), h_(std::make_unique<Host>()), exact_(c), exact_batch_(c, exact_) {
  GPUDM_REQUIRE(c_.pool != nullptr, "gmt/cuda: the fast path needs the host pool (internal error)");
  GPUDM_REQUIRE(c_.host != nullptr && c_.host->rows() < 0x7FFFFFFFull && static_cast<long long>(c_.data.padded_rows) < 0x7FFFFFFFll,
                "gmt/cuda: the fast path takes fewer than 2^31 rows");
  // This device's rows (RowBlock::of: the evaluator uploaded them)
  const RowBlock& rb = c_.block;
  GPUDM_REQUIRE(rb.rows == static_cast<long long>(c_.data.rows) && rb.chunk_rows > 0,
                "gmt/cuda: the device holds " + std::to_string(c_.data.rows) + " rows, its block " + std::to_string(rb.rows) + " (internal error)");
  chunk_rows_ = rb.chunk_rows;
  chunks_ = rb.chunks;
  split_ = c_.split();
  for (int g = rb.g0; g < rb.g1; ++g) runs_ += FusedGroups::runs(g, rb.G, rb.chunks_all);
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  using E = ::gpudm::gmt::EvalOptions;
  // How the stats pass shares a stat leaf's rows among a block's warps (each way sums in its own
  // fixed order)
  stat_split_ = o.fast_stat_split == E::StatSplit::kWarps  ? FusedPolicy::kSplitWarps
                : o.fast_stat_split == E::StatSplit::kLeaf ? FusedPolicy::kSplitLeaf
                                                           : FusedPolicy::kSplitAuto;
  // The stats pass's grid chunk-fastest when the training data fits in half the L2 (a tree's chunks
  // then read from L2 in any order, so the heaviest tree's blocks can all go first); otherwise
  // tree-fastest (a chunk's rows shared in L2 by the trees run together). The same bits either way.
  const double data_bytes = static_cast<double>(c_.data.padded_rows) * static_cast<double>(c_.data.cols + 1) * sizeof(float);
  chunk_major_ = o.fast_stats_grid == E::StatsGrid::kAuto ? data_bytes <= 0.5 * static_cast<double>(c_.props->l2_bytes)
                                                          : o.fast_stats_grid == E::StatsGrid::kChunk;
  // The merge's grid: at most the blocks resident at once (its blocks loop over the stat leaves),
  // not the launch shape's capacity: blocks past a call's leaves would each be scheduled for
  // nothing; fast_merge_grid caps it lower (the same bits for any grid).
  merge_grid_max_ = std::max(1, merge_blocks_per_sm()) * std::max(1, c_.props->sm_count);
  if (o.fast_merge_grid > 0) merge_grid_max_ = std::min(merge_grid_max_, o.fast_merge_grid);
  const int kv = static_cast<int>(c_.data.cols) + 1;
  wide_kv_ = kv > FusedPolicy::kNarrowKv ? std::min(kv, FusedPolicy::kMaxKv) : 0;
#if defined(GPUDM_CUDA_DEBUG_SYNC)
  graphs_on_ = false;
  graph_note_ = "off: GPUDM_CUDA_DEBUG_SYNC synchronises after every launch";
#else
  graphs_on_ = o.cuda_graphs;
  graph_note_ = graphs_on_ ? "on" : "off (cuda_graphs = false)";
#endif
}

FastPath::~FastPath() {
  drop_graph(0);
  drop_graph(1);
}

void FastPath::evaluate(const ::gpudm::gmt::EvalBatch& batch, ::gpudm::PhaseTimer& timer, ::gpudm::gmt::EvalCounters& counters) {
  if (batch.size() == 0) return;
  GPUDM_REQUIRE(batch.salts.size() == batch.trees.size(), "gmt: one salt per tree");
  const cudaStream_t s = c_.stream;
  ++calls_;
  trees_ += static_cast<long long>(batch.size());
  const std::size_t B = batch.size();
  // Per tree of the call: the exact solver's leaves, counts, finished or not.
  std::vector<std::vector<int>> exact(B);
  std::vector<FinishCounts> cnt(B);
  std::vector<char> done(B, 0);
  PhaseMarks& direct = direct_;
  direct.clear();
  // An exception thrown while work is queued must not leave the device reading the pinned buffers
  // and device arrays this evaluator then reuses or frees: on the way out the stream is waited for.
  struct WaitOnThrow {
    cudaStream_t s;
    bool& in_flight;
    ~WaitOnThrow() {
      if (in_flight && std::uncaught_exceptions() > 0) {
        cudaStreamSynchronize(s);  // (no check: an error here must not replace the one in flight)
        in_flight = false;
      }
    }
  } wait_on_throw{s, in_flight_};
  {
    auto sc = timer.scope("flattening");
    pack(batch);  // (sizes the buffers: ensure_capacity)
    write_view();
  }
  stat_leaves_ += h_->S;
  if (split_) {
    launch_split(direct, timer);  // (its waits and combines inside)
  } else {
    // Host clock of the call's steps that no phase times (reported by describe(): where a run's
    // time outside its phases goes): the launches' API calls, the waits for the device, the phase
    // events' read-back.
    const ::gpudm::Stopwatch launch;
    launch_batch(direct);
    host_launch_s_ += launch.seconds();
  }
  ::gpudm::Stopwatch clock;
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  host_wait_s_ += clock.seconds();
  in_flight_ = false;
  clock.reset();
  direct.flush(timer);
  if (graphs_on_) {
    try {
      for (int p = 0; p < (split_ ? 2 : 1); ++p) {  // each graph's phases on their own: a failure keeps those before it
        PhaseTimer phases;
        marks_[p].flush(phases);
        timer.merge(phases);
      }
    } catch (const ::gpudm::Error& e) {
      drop_graphs(std::string("off: graph phase timing failed (") + e.what() + ")");
    }
  }
  host_flush_s_ += clock.seconds();
  attach_outputs();
  for (int i = 0; i < h_->S; ++i) resid_leaves_ += h_->stat_out[i].resid != 0 ? 1 : 0;
  // The call's trees on the host threads: repairs, results into the trees, and for a tree without
  // leaves for the exact solver its counts / errors / dipoles propagated to the root (the
  // reduction, in the same task; the other trees' follow the exact solver), then the caller's
  // per-tree step (EvalBatch::after_tree: the EA's fitness) for a tree that is final. (The
  // caller's step in its own host step after the call was slower.)
  {
    auto sc = timer.scope("repair");
    // (on the pool even for small trees: a tree's finish costs far more than its node count says
    // — its small leaves' recorded rows, host solves — and running it serially doubled Armchair
    // 1M's `repair` and tripled Elevators')
    // (the step's threads scale with its nodes; the largest trees are claimed first)
    const std::size_t nodes =
        ::gpudm::largest_first(order_, B, [&](std::size_t t) { return static_cast<std::size_t>(batch.trees[t]->size()); });
    ::gpudm::parallel_for_work(*c_.pool, B, nodes, [&](std::size_t t) {
      done[t] = finish_tree(batch, *h_, static_cast<int>(t), exact[t], cnt[t]) ? 1 : 0;  // (propagates when exact[t] is empty)
      if (done[t] && exact[t].empty() && batch.after_tree != nullptr) {
        (*batch.after_tree)(t);
        batch.after_tree_done[t] = 1;
      }
    }, order_.data());
  }
  for (const FinishCounts& c : cnt) {
    counters.repairs += c.repairs;
    counters.repaired_trees += c.repaired_trees;
    host_solves_ += c.host_solves;
    clean_mismatches_ += c.clean_mismatches;
  }
  // The trees this call could not finish and the exact solver's leaves, in tree order.
  std::vector<std::size_t> again;
  std::vector<ExactBatch::Leaf> flagged;
  for (std::size_t t = 0; t < B; ++t) {
    if (!done[t]) {
      again.push_back(t);
      continue;
    }
    Tree& T = *batch.trees[t];
    for (int node : exact[t]) flagged.push_back({&T, node, T.node(node).stats.count});
  }
  if (!flagged.empty()) {
    // Host clock: the upload, the batched launch (or the per-leaf cuSOLVER path), the download
    // and the synchronisation, all of which the device-event phases do not see.
    auto sc = timer.scope("exact_solver");
    exact_batch_.solve(flagged);
    exact_leaves_ += static_cast<long long>(flagged.size());
  }
  if (!flagged.empty()) {  // the trees whose leaves the exact solver just fitted
    auto sc = timer.scope("reduction");
    std::size_t nodes = 0;
    for (const Tree* T : batch.trees) nodes += static_cast<std::size_t>(T->size());
    ::gpudm::parallel_for_work(*c_.pool, B, nodes, [&](std::size_t t) {
      if (done[t] && !exact[t].empty()) ::gpudm::gmt::propagate_stats(*batch.trees[t], *c_.host, batch.salts[t]);
    });
  }
  counters.trees += static_cast<std::int64_t>(B) - static_cast<std::int64_t>(again.size());
  if (!again.empty()) {
    // The trees this pass could not finish, again with every leaf's statistics (their repairs, if
    // any were applied, are final: the repaired tree needs none).
    ::gpudm::gmt::EvalBatch b2;
    b2.repair = batch.repair;
    b2.clean_sse_known = false;
    for (std::size_t t : again) {
      b2.trees.push_back(batch.trees[t]);
      b2.salts.push_back(batch.salts[t]);
    }
    second_passes_ += static_cast<long long>(again.size());
    counters.second_passes += static_cast<std::int64_t>(again.size());
    evaluate(b2, timer, counters);
  }
}

nlohmann::ordered_json FastPath::describe() const {
  nlohmann::ordered_json j;
  j["path"] = "fast";
  j["design"] = "one fused statistics pass per call (fused_stats.cuh, fused_merge.cuh): leaf sums in FP64, fixed-order merge, batched solve";
  j["chunk_rows"] = chunk_rows_;
  j["chunks"] = chunks_;
  j["merge_groups"] = c_.block.G;  // FusedGroups: the merge's two levels
  if (split_) {
    j["rank_split"] = "rows";
    j["ranks"] = c_.comm->size();
    j["rank_groups"] = nlohmann::ordered_json::array({c_.block.g0, c_.block.g1});
    j["rank_chunks"] = nlohmann::ordered_json::array({c_.block.chunk0, c_.block.chunk0 + c_.block.chunks});
    j["rank_rows"] = nlohmann::ordered_json::array({c_.block.row0, c_.block.row0 + c_.block.rows});
    j["combine_calls"] = combine_calls_;
    j["combine_bytes"] = combine_bytes_;
    j["combine_seconds"] = combine_s_;
  }
  j["block"] = FusedPolicy::kBlock;
  j["narrow_models_up_to_values"] = FusedPolicy::kNarrowKv;
  j["stats_kernel_variant"] = cap_kv_ <= 3 ? "models of <= 3 values" : cap_kv_ <= FusedPolicy::kNarrowKv ? "narrow models only" : "every width";
  j["route_rows_per_lane"] = FusedPolicy::kRouteRows;
  j["stats_registers"] = "capped for " + std::to_string(FusedPolicy::kWideMinBlocks) +
                         " blocks an SM in the every-width variant with shared-memory leaf atomics; the compiler's in the others";
  j["solve"] = "in the merge's block: leaves of up to " + std::to_string(FusedPolicy::kSolveSmemKv) + " values in shared memory";
  j["merge_block"] = FusedPolicy::kMergeBlock;
  j["merge_grid_max"] = merge_grid_max_;
  j["stats_grid"] = chunk_major_ ? "chunk-fastest, heaviest tree first" : "tree-fastest, heaviest tree first in each chunk";
  j["stat_split"] = stat_split_ == FusedPolicy::kSplitLeaf ? "leaf" : stat_split_ == FusedPolicy::kSplitWarps ? "warps" : "auto";
  j["stat_split_min_rows"] = FusedPolicy::kSplitMinRows;
  j["shared_memory_bytes"] = smem_;
  j["leaf_atomics"] = smem_leaves_ ? "shared" : "global";
  j["cuda_graphs"] = graph_note_;
  j["graph_captures"] = captures_;
  j["calls"] = calls_;
  j["trees"] = trees_;
  j["stat_leaves"] = stat_leaves_;
  j["host_solves_after_repair"] = host_solves_;
  j["exact_solver_leaves"] = exact_leaves_;
  j["residual_pass_leaves"] = resid_leaves_;  // near-exact fits whose SSE was summed from the residuals
  j["exact_solver_batched_leaves"] = exact_batch_.batched();
  j["exact_solver_batch_launches"] = exact_batch_.launches();
  j["second_passes"] = second_passes_;
  // (host clock, seconds over the run: outside every phase)
  j["host_launch_seconds"] = host_launch_s_;  // upload, graph launch and download calls (queued, not waited for)
  j["host_wait_seconds"] = host_wait_s_;      // waiting for the device (its phases, and the gaps around them)
  j["host_phase_events_seconds"] = host_flush_s_;  // reading the phases' device events back
  j["clean_leaf_mismatches"] = clean_mismatches_;
  return j;
}

}  // namespace gpudm::backend::cuda::gmt_cuda
