#pragma once
// ModelTreeEvaluator: the backend interface of the GMT family (CUDA-free). The EA hands a whole
// generation's modified individuals (compact trees, tree.hpp) to evaluate() in one call. Every
// backend runs the paper's six procedures and records each as a PhaseTimer phase:
//   redistribute    rows -> leaves (route every training row through the tree)
//   separate        group row ids by leaf (stable counting sort; CUB radix sort on the GPU)
//   reorganize      per-leaf matrices [1, model attributes, y] of the affected leaves
//   calc_models     Householder QR least squares in every affected leaf
//   estimate_errors per-chunk partial SSE/SAE and dipole candidates per leaf
//   reduction       merge the partials, propagate errors and dipoles up to the root
// plus "transfers" (moving the trees in and the results out; host copies on CPU backends) and
// "repair" (the repair rule applied from the routing counts, repair.hpp). The GPU fast path
// fuses redistribute .. estimate_errors into one statistics pass (backends/cuda/gmt/).
// The EA itself records "cpu_ea".
//
// One call evaluates each tree *after* the repair rule (repair.hpp): nodes with a child under
// `repair.min_rows` rows are repaired (decided from the routing counts, without evaluating the
// tree first), then every node gets its statistics and every refit leaf its model, written into
// the tree (Tree::set_fit drops the attributes the rank rule dropped). So an individual is
// evaluated once per generation whatever its repairs (evaluating, repairing and evaluating again
// cost up to 8 evaluations).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/core/backend.hpp"
#include "algorithms/core/comm.hpp"
#include "algorithms/core/dataset.hpp"
#include "algorithms/core/host_workers.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/gmt/repair.hpp"
#include "algorithms/gmt/tree.hpp"

namespace gpudm {
namespace gmt {

// Numerical policy shared by every backend so that their results agree.
struct EvalOptions {
  // Rows per fixed chunk of the data-parallel passes. Partial sums are kept per chunk and merged
  // in chunk order, so results do not depend on the number of threads.
  int chunk_rows = 16384;
  // Rows per TSQR block of a leaf (a leaf's QR is the QR of its blocks' stacked R factors); a
  // block holds rows of one chunk only (the leaf's rows of each chunk in blocks of this many).
  int qr_block_rows = 8192;
  // Rank rule: a column whose remaining norm during the Householder sweep is <= rank_tol times
  // its original norm (or exactly zero) is dropped: its coefficient is 0 and it does not count.
  double rank_tol = 1e-9;
  // The leaf rule (leafstats::max_leaf_params): a leaf with n rows keeps fewer than
  // n / rows_per_param model parameters (at least the intercept), the intercept first, then the
  // attributes in order; the rest are dropped as by the rank rule, and the EA does not add an
  // attribute to a model at its limit. 1 is the GMT papers' rule (more rows than parameters);
  // 0 turns it off: a 5-row leaf can then fit 4 attributes exactly (SSE 0), which BIC rewards and
  // which predicts wildly off its rows (results/h200/gmt_leafrule_probe.md).
  double rows_per_param = 1.0;
  int threads = 0;  // OpenMP backend: threads (0 = OpenMP default)
  // OpenMP backend: what the threads share out. kRows: the fixed row chunks of each individual
  // (and the TSQR blocks and leaves), one individual after the other (the paper's OpenMP GMT);
  // kIndividuals: the generation's individuals, each evaluated in order by one thread with its own
  // work buffers; kAuto: individuals when the data has fewer row chunks than threads, else rows.
  // Every mode runs the same per-individual arithmetic, so results are identical.
  enum class OmpMode { kAuto, kRows, kIndividuals };
  OmpMode omp_mode = OmpMode::kAuto;
  // An MPI run's split (one process: ignored). kRows: each rank a block of whole row
  // chunks of every tree, the leaf counts, small leaves' rows, TSQR R factors and error partials
  // combined (the sequential and OpenMP backends: EvalWork::set_ranks; the CUDA fast path: each
  // GPU a block of whole merge groups, the groups' statistics combined: split_rows); kIndividuals: each rank a
  // block of every call's trees on all rows, the evaluated trees gathered (sharded_evaluator.hpp:
  // any backend); kAuto: rows on the CPU backends when the data has at least one row chunk a
  // rank, else individuals. Every split gives one process's run bit for bit.
  enum class RankSplit { kAuto, kRows, kIndividuals };
  RankSplit rank_split = RankSplit::kAuto;

  // ---- CUDA backend only (backends/cuda/gmt/evaluator.cu states its tolerances) ----
  // kFast (default): a generation's trees in one fused statistics pass (per-leaf sufficient
  // statistics in FP64, batched solves, one graph, one sync). kFaithful: the paper's six
  // procedures per individual (CUB radix sort, cuSOLVER geqrf/ormqr, cuBLAS trsm per leaf).
  enum class GpuPath { kFast, kFaithful };
  GpuPath gpu_path = GpuPath::kFast;
  // Faithful path: least squares in float (the paper) or double (the CPU evaluators).
  enum class GpuPrecision { kDouble, kFloat };
  GpuPrecision gpu_precision = GpuPrecision::kDouble;
  // Faithful path: blocks x threads of redistribute / reorganize / estimate_errors (0 = the
  // paper's Sec. 5.3 settings by training rows: 64x32 ... 256x256).
  int gpu_blocks = 0, gpu_threads = 0;
  // Exact leaf solver (CUDA faithful path's calc_models, the fast path's fallback): leaves of
  // more rows take Q^T y from geqrf of [A | y] instead of ormqr, as a leaf whose ormqr workspace
  // query fails always does (backends/cuda/gmt/leaf_solver.cu). Not a config param (it would change
  // every run's identity); tests set it to 1 to check the fallback on every leaf.
  long long ormqr_max_rows = 0x7FFFFFFFLL;
  // Fast path: the leaves its statistics cannot decide are solved together, one block per leaf
  // (backends/cuda/gmt/exact_batch.cuh), when they hold at most this many rows; larger (or wider)
  // ones one at a time by the cuSOLVER solver. Not a config param (the answers are the same rank
  // rule either way); tests set it to 0 to compare the two.
  long long exact_batch_max_rows = 1LL << 18;
  // Fast path: a pivot of the centred Gram at or below fast_pivot_guard x its column's centred
  // norm^2 (near-dependent columns, ill-conditioned leaves) sends the leaf to the exact QR solver.
  double fast_pivot_guard = 1e-6;
  // Fast path: replay the generation's kernels as one CUDA graph (launch overhead of small data).
  bool cuda_graphs = true;
  // Fast path: how the statistics pass shares a stat leaf's rows of a chunk among a block's warps.
  // kAuto (default): per (chunk, leaf), a leaf of FusedPolicy::kSplitMinRows rows or more split
  // into a run per warp, a smaller one taken whole by one warp; kWarps / kLeaf force one of the two
  // for every leaf. Each way sums in its own fixed order, so trees may differ between them within
  // the stated tolerance (and are bit-identical run to run in each).
  enum class StatSplit { kAuto, kWarps, kLeaf };
  StatSplit fast_stat_split = StatSplit::kAuto;
  // Fast path: the statistics pass's grid chunk-fastest (kChunk: every chunk of the heaviest tree
  // first) or tree-fastest (kTree: a chunk's rows shared in L2 by the trees run together); kAuto:
  // chunk-fastest when the training data fits in half the L2. The same bits either way.
  enum class StatsGrid { kAuto, kChunk, kTree };
  StatsGrid fast_stats_grid = StatsGrid::kAuto;
  // Fast path: the merge kernel's grid at most this many blocks, each looping over the stat leaves
  // (0 = the blocks resident at once). The same bits for any grid (tests use a few blocks).
  int fast_merge_grid = 0;
  // CUDA backend: host threads of the evaluator's pool (the EA's operators, the fast path's
  // per-tree finish), the caller's included; 0 = min(16, the machine's hardware threads). A step
  // wakes as many as its trees' nodes ask for (threads_for_nodes). Results do not depend on it.
  int host_threads = 0;
  // CUDA backend: how long an idle pool worker polls for the next step before it sleeps, in
  // microseconds (0 = sleep at once). A sleeping worker wakes too late to help a 0.2-1 ms step.
  int host_spin_us = 1000;
  // Usable device memory in bytes (0 = what the device has free); a test lowers it to check
  // the out-of-memory message.
  double device_memory_limit = 0.0;
};

// One call's input: the trees (repaired and evaluated in place), one salt per tree (the dipole
// draw, tree.hpp dipole_key), the repair rule.
struct EvalBatch {
  std::vector<Tree*> trees;
  std::vector<std::uint64_t> salts;
  RepairSpec repair;
  // The SSE in a clean leaf's stats (dirty == 0 with coefficients) is that of an evaluation of the
  // same rows and model: a backend may keep it instead of summing it again (the GPU fast path
  // does; the CPU backends sum every leaf, which gives the same value bit for bit). The EA sets
  // it; a caller with hand-made coefficients leaves it false.
  bool clean_sse_known = false;
  // Optional (the EA's fitness): a backend may call (*after_tree)(i) on its host threads as soon as
  // tree i's results are final, then set after_tree_done[i] = 1 (the caller's array, size()
  // entries, zeroed); the caller runs it for the other trees after evaluate(). The call writes only
  // what belongs to tree i (the tree itself included). The GPU fast path calls it from the task
  // that finishes the tree (one step of the host threads less per call); a backend that splits or
  // copies the batch passes neither on.
  const std::function<void(std::size_t)>* after_tree = nullptr;
  std::uint8_t* after_tree_done = nullptr;
  std::size_t size() const { return trees.size(); }
};

// What the last evaluate() did (counters for describe() and the family's metrics).
struct EvalCounters {
  std::int64_t calls = 0, trees = 0, repaired_trees = 0, repairs = 0;
  std::int64_t second_passes = 0;  // trees evaluated again because a repair needed statistics the pass skipped
};

// The lifecycle of backend.hpp: configure(EvalOptions), prepare(training set) once (uploads and
// layouts; the dataset must outlive the evaluator's use), then evaluate() per generation.
class ModelTreeEvaluator : public BackendOf<EvalOptions> {
 public:
  virtual void evaluate(const EvalBatch& batch, PhaseTimer& timer) = 0;
  // Relative difference of a tree's SSE from the reference backend's that this backend
  // guarantees (the family's validation): the CPU backends share the reference's arithmetic.
  virtual double sse_tolerance() const { return 1e-9; }
  // Host threads the EA may use for its own per-individual work (operators, copies) while this
  // backend evaluates nothing: none on the CPU backends (the sequential baseline stays one thread,
  // the OpenMP one keeps its cores for the evaluation); the GPU backend's host pool (the one its
  // own host steps use: the host_threads option, made at prepare()). The EA's results do not
  // depend on it (every individual's operators draw from their own stream).
  virtual HostWorkers* host_pool() { return nullptr; }
  // An MPI run's rows split: from now on this evaluator works on its rank's block of the
  // rows of every tree and combines with the other ranks through `comm` (every rank ends each call
  // with one process's trees). Call before prepare(). False: this backend does not split rows
  // (the caller splits individuals instead).
  virtual bool split_rows(Comm& comm) {
    (void)comm;
    return false;
  }
  const EvalCounters& counters() const { return counters_; }

 protected:
  // One evaluated tree into the counters (the CPU backends, from evaluate_tree's outcome).
  void count_tree(const RepairOutcome& r) {
    ++counters_.trees;
    counters_.repaired_trees += r.repairs > 0 ? 1 : 0;
    counters_.repairs += r.repairs;
  }
  EvalCounters counters_;
};

// A batch of one tree (tests, validation): salt given, no repair.
inline EvalBatch single(Tree& t, std::uint64_t salt, RepairSpec repair = {}) {
  EvalBatch b;
  b.trees = {&t};
  b.salts = {salt};
  b.repair = repair;
  return b;
}

}  // namespace gmt
}  // namespace gpudm
