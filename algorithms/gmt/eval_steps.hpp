#pragma once
// The six evaluation procedures split into independent work items (chunks of rows, TSQR blocks,
// leaves) with fixed boundaries. The sequential backend runs the items in a loop, the OpenMP
// backend spreads them over threads; every partial result is merged in item order, so both
// produce bit-identical errors and models (and therefore identical EA runs for the same seed).
// Host-only code (CUDA-free); the CUDA backend implements the same procedures as kernels.
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/dataset.hpp"
#include "algorithms/core/phase_timer.hpp"
#include "algorithms/gmt/evaluator.hpp"
#include "algorithms/gmt/tree.hpp"

namespace gpudm {
namespace gmt {

class EvalWork {
 public:
  // Rows split over the ranks of an MPI run (nullptr or one rank: this process has every
  // row). Rank r works on the row chunks shard(n_chunks, r, ranks) (whole chunks, so every chunk's
  // partial results are the ones one process computes); after each step that works on chunks the
  // ranks' parts are put together (the combine_* steps below, collectives of `comm`), so every rank
  // holds what one process would, bit for bit. Every rank holds the whole training set (the repair
  // rule routes moved rows of any rank).
  void set_ranks(Comm* comm) { comm_ = comm != nullptr && comm->size() > 1 ? comm : nullptr; }
  bool split() const { return comm_ != nullptr; }

  // Binds one tree (its leaves in breadth-first order are the slots); sizes every buffer. Cheap
  // when called again with similar sizes.
  void begin(const Dataset& data, const Tree& tree, const EvalOptions& opt, std::uint64_t salt);

  // This rank's row chunks [chunk_begin, chunk_end) (every chunk in one process).
  int chunk_begin() const { return c_begin_; }
  int chunk_end() const { return c_end_; }
  Comm* comm() const { return comm_; }
  // The TSQR blocks this rank factors (reorganize_layout's tasks of its chunks), in task order.
  const std::vector<int>& own_qr_tasks() const { return own_tasks_; }
  // The combine steps' halves (combine_* below): this rank's part of this tree appended, rank r's
  // part read back from the gathered words.
  //   counts       after redistribute: every chunk's per-leaf counts (a sum: exact)
  //   small rows   after separate: the rows of every leaf under min_rows
  //   R factors    after qr_block: every TSQR block's R factor
  //   partials     after estimate_chunk: every chunk's error partials and dipole keys
  void put_counts(std::vector<std::uint64_t>& v) const;
  void take_counts(const std::uint64_t*& p);
  void put_small_rows(std::vector<std::uint32_t>& w, int min_rows) const;
  void take_small_rows(const std::vector<std::uint32_t>& all, std::size_t& at);
  void put_r_factors(std::vector<std::uint32_t>& w) const;
  void take_r_factors(const std::vector<std::uint32_t>& all, std::size_t& at, int r);
  void put_partials(std::vector<std::uint32_t>& w) const;
  void take_partials(const std::vector<std::uint32_t>& all, std::size_t& at, int r);

  int n_chunks() const { return n_chunks_; }
  int n_leaves() const { return n_leaves_; }

  // redistribute: leaf slot of every row of chunk c, and the chunk's per-leaf row counts.
  void redistribute_chunk(int c);
  // separate: per-leaf totals and per-(chunk, leaf) write offsets (cheap, one thread) ...
  void separate_offsets();
  // ... then a stable scatter of chunk c's row ids into their leaf buckets.
  void separate_chunk(int c);
  // After separate: the routing counts and the rows of the leaves under min_rows (repair.hpp).
  void routed_counts(int min_rows, RoutedCounts& out) const;
  // reorganize: lays out the affected leaves' matrices and TSQR blocks (one thread) ...
  void reorganize_layout();
  // ... then copies block t's rows into its leaf matrix, column-major [1, attrs..., y] in double.
  void reorganize_block(int t);
  // calc_models: Householder QR of block t (in place) -> its R factor ...
  void qr_block(int t);
  // ... then QR of leaf l's stacked R factors with the rank rule, back substitution.
  void solve_leaf(int l);
  // estimate_errors: chunk c's per-leaf SSE/SAE and the keys of the dipole rows.
  void estimate_chunk(int c);
  // reduction: merge the chunk partials of leaf l (in chunk order) ...
  void reduce_leaf(int l);
  // ... then write the leaves' statistics and models into the tree and propagate counts, errors
  // and dipoles to the root (one thread).
  void finish(Tree& tree);

 private:
  struct QrTask {
    int leaf;
    int chunk;                 // the row chunk its rows come from (a block never spans two)
    std::int64_t row0, rows;   // block rows within the leaf
    std::int64_t r_offset;     // where its R factor goes in rblocks_
    int r_rows;                // min(rows, width)
  };
  Comm* comm_ = nullptr;
  int c_begin_ = 0, c_end_ = 0;
  std::vector<int> own_tasks_;
  // Rank r's chunk range.
  std::pair<int, int> chunks_of(int r) const;
  const Dataset* data_ = nullptr;
  const Tree* tree_ = nullptr;
  EvalOptions opt_;
  std::uint64_t salt_ = 0;
  std::size_t n_ = 0;
  int n_chunks_ = 0, n_leaves_ = 0, cols_ = 0;

  std::vector<std::int32_t> leaf_slot_;      // per node: leaf slot, -1 for internal nodes
  std::vector<std::int32_t> leaf_node_;      // per slot: node
  std::vector<std::uint8_t> refit_;          // per slot
  std::vector<std::int32_t> attr_begin_;     // per slot + 1: model attributes in attrs_
  std::vector<std::int32_t> attrs_;
  std::vector<double> coef_;                 // per slot: coef_begin_[slot], attributes + 1 values
  std::vector<std::int32_t> rank_;           // per slot
  std::vector<std::int32_t> leaf_of_;        // per row: leaf slot
  std::vector<std::int64_t> chunk_counts_;   // n_chunks x n_leaves: counts, then write offsets
  std::vector<std::int64_t> leaf_count_, leaf_begin_;
  std::vector<std::int64_t> order_;          // row ids grouped by leaf, ascending within a leaf
  std::vector<std::int64_t> mat_offset_;     // per leaf: offset of its matrix in mat_, -1 if none
  std::vector<double> mat_;
  std::vector<QrTask> tasks_;
  std::vector<int> leaf_task0_, leaf_ntasks_;
  std::vector<double> rblocks_;
  std::vector<double> part_sse_, part_sae_;
  std::vector<std::uint64_t> part_lo_, part_hi_, part_rnd_;
  std::vector<NodeStats> leaf_stats_;        // per slot, after reduce_leaf

  int attr_count(int slot) const { return attr_begin_[static_cast<std::size_t>(slot) + 1] - attr_begin_[static_cast<std::size_t>(slot)]; }
  const std::int32_t* attrs_of(int slot) const { return attrs_.data() + attr_begin_[static_cast<std::size_t>(slot)]; }
  double* coef_of(int slot) { return coef_.data() + attr_begin_[static_cast<std::size_t>(slot)] + slot; }
};

// Runs `body(i)` for i in [0, n): in order (sequential) or over threads (OpenMP). The backends'
// only difference.
using ForEach = std::function<void(int n, const std::function<void(int)>& body)>;
ForEach for_each_in_order();

// The combine steps of several trees' works (rows split; every work on the same ranks) in one
// collective each, their parts concatenated in tree order; each returns the bytes one rank received.
std::uint64_t combine_counts(const std::vector<EvalWork*>& ws);
std::uint64_t combine_small_rows(const std::vector<EvalWork*>& ws, int min_rows);
std::uint64_t combine_r_factors(const std::vector<EvalWork*>& ws);
std::uint64_t combine_partials(const std::vector<EvalWork*>& ws);
struct CombineAccount {
  long long calls = 0;
  std::uint64_t bytes = 0;
};

// One tree: routing, the repair rule (repair.hpp), then every procedure in order, each timed as
// its phase in `timer`; the statistics and models are written into the tree. `loop` runs the
// work items of a procedure (in order, or spread over threads). With the rows split over ranks
// (EvalWork::set_ranks), every rank calls it for the same tree: each works on its chunks and the
// combine steps (phase "combine") put the parts together.
RepairOutcome evaluate_tree(EvalWork& work, const Dataset& data, Tree& tree, std::uint64_t salt, const EvalOptions& opt,
                            const RepairSpec& repair, PhaseTimer& timer, const ForEach& loop);
// Several trees, each with its own work, phase by phase (every tree routed, then one combine of all
// their counts, ...): with the rows split over ranks 4 collectives for the group instead of 4 per
// tree. The same arithmetic per tree as evaluate_tree. `account` (optional) counts the combines.
std::vector<RepairOutcome> evaluate_trees(const std::vector<EvalWork*>& works, const Dataset& data, const std::vector<Tree*>& trees,
                                          const std::vector<std::uint64_t>& salts, const EvalOptions& opt, const RepairSpec& repair,
                                          PhaseTimer& timer, const ForEach& loop, CombineAccount* account = nullptr);

// Counts, errors and dipoles of the internal nodes from their leaves (children after parents).
void propagate_stats(Tree& tree, const Dataset& data, std::uint64_t salt);
// The same from the leaves' dipole keys (klo / khi / krn, indexed by node, leaves filled; the
// internal nodes' entries are written): for a caller that holds the keys already (the GPU path's
// finish: the device's keys, and its own for clean and repaired leaves), so no target is looked up
// and no row hashed again. The keys must be the ones propagate_stats would compute: lo_key /
// hi_key of the rows' targets, dipole_key under the evaluation's salt (kNoLoKey / kNoHiKey for
// none); device keys are, as long as the CUDA code keeps denormals (no -ftz / fast math: float_order
// must order the targets alike on both sides).
void propagate_stats_from_keys(Tree& tree, std::uint64_t* klo, std::uint64_t* khi, std::uint64_t* krn);

// Householder QR in place of the m x n column-major matrix A (leading dimension lda), no
// pivoting: on return the upper triangle of the first min(m, n) rows holds R.
void householder_qr(double* a, std::int64_t m, int n, std::int64_t lda);

// Least squares from a stacked matrix S = [X | y] (rows x (p+1), column-major, ld = rows; it is
// overwritten) with the rank rule of EvalOptions::rank_tol: dropped columns get coefficient 0.
// Writes p coefficients to coef, returns the rank; *sse receives the residual sum of squares.
// max_params: keep at most this many columns (EvalOptions::rows_per_param); later ones are dropped.
int least_squares_rank_rule(double* s, std::int64_t rows, int p, double rank_tol, double* coef, double* sse,
                            int max_params = std::numeric_limits<int>::max());

// Writes a refit leaf's result into the tree: attributes whose coefficient is exactly 0 were
// dropped by the rank rule and leave the model.
void set_leaf_fit(Tree& tree, int node, const double* coef, int rank);

}  // namespace gmt
}  // namespace gpudm
