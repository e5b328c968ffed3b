// The fast path's host side (issue 23). Per evaluator call:
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
// With GPUDM_GMT_PIPELINE=1 a call of FastPath::kPipelineMinTrees or more trees runs as two halves
// in flight: the pack of the second half runs while the device works on the first, the finish
// (`repair`) of the first while the device works on the second (the phases' times then overlap).
// Off by default: measured slower (docs/perf-notes-gmt.md).
// Rare cases leave this path: leaves the statistics cannot decide (ambiguous pivots, models of
// more than FusedPolicy::kMaxKv values) are solved again by the exact QR solver (ExactLeaf), and a
// tree whose repair needs statistics the pass did not take (a collapsed subtree, a clean leaf that
// changed) is evaluated again in a second call with every leaf's statistics.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>

#include "algorithms/core/error.hpp"
#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gmt/eval_steps.hpp"
#include "algorithms/gmt/leaf_stats.hpp"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/exact_batch.cuh"
#include "backends/cuda/gmt/fused.cuh"
#include "backends/cuda/gmt/paths.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

namespace ls = ::gpudm::gmt::leafstats;
using ::gpudm::gmt::Tree;
using ::gpudm::gmt::TreeNode;

struct FastPath::Host {
  int B = 0, L = 0, S = 0, A = 0;
  int max_nl = 0, max_ns = 0, max_kv = 0;
  int stray_cap = 0;
  long long stat_total = 0, work_total = 0;
  int coef_total = 0;
  std::vector<int> t_node0, t_leaf0, t_stat0;
  std::vector<unsigned long long> t_salt;
  std::vector<int> t_order;  // the trees by estimated stats work, heaviest first
  std::size_t n_nodes = 0;  // packed nodes (written by pack straight into the pinned upload buffer)
  std::vector<int> l_stat, l_node;  // per leaf: stat leaf or -1; the tree's node
  std::vector<int> s_leaf, s_k, s_fit, s_attr0;
  std::vector<long long> s_stat0, s_work0;
  std::vector<int> attrs;
  std::vector<double> coef_in;
  // One tree's stat leaves as its task in the one-pass pack found them (offsets within the tree;
  // the serial step after the pass adds the tree's own offsets). Kept across calls for capacity.
  struct TreePart {
    struct Stat {
      int leaf, k, fit, attr0;     // the leaf (batch-wide index), its model's size, refit or not, attrs offset
      long long stat0, work0;      // its sums' and solve work's offsets
    };
    std::vector<Stat> stat;
    std::vector<int> attrs;
    std::vector<double> coef;
    int max_kv = 0;
    long long stats = 0, work = 0, est = 0;
    void clear() {
      stat.clear();
      attrs.clear();
      coef.clear();
      max_kv = 0;
      stats = work = est = 0;
    }
  };
  std::vector<TreePart> part;
  // the downloaded outputs (views into h_out_)
  const LeafOut* leaf_out = nullptr;
  const StatOut* stat_out = nullptr;
  const double* stats = nullptr;
  const double* coef = nullptr;
  const int* strays = nullptr;
  // Empties every array but keeps its capacity (pack runs once per call: the arrays' sizes repeat).
  void reset() {
    B = L = S = A = 0;
    max_nl = max_ns = max_kv = 0;
    stray_cap = 0;
    stat_total = work_total = 0;
    coef_total = 0;
    for (auto* v : {&t_node0, &t_leaf0, &t_stat0, &l_stat, &l_node, &s_leaf, &s_k, &s_fit, &s_attr0, &attrs}) v->clear();
    t_salt.clear();
    t_order.clear();
    n_nodes = 0;
    s_stat0.clear();
    s_work0.clear();
    coef_in.clear();
    leaf_out = nullptr;
    stat_out = nullptr;
    stats = nullptr;
    coef = nullptr;
    strays = nullptr;
  }
};

namespace {
std::size_t align16(std::size_t b) { return (b + 15) / 16 * 16; }
template <class T>
std::size_t bytes_of(std::size_t n) {
  return align16(n * sizeof(T));
}
// Bytes as 32-bit words (the communicator's unit), padded to whole words.
void put_bytes(std::vector<std::uint32_t>& w, const void* p, std::size_t bytes) {
  const std::size_t at = w.size();
  w.resize(at + (bytes + 3) / 4, 0u);
  if (bytes) std::memcpy(w.data() + at, p, bytes);
}
// `bytes` from word `at` on (at moves past them).
void take_bytes(const std::vector<std::uint32_t>& w, std::size_t& at, void* p, std::size_t bytes, const char* what) {
  const std::size_t words = (bytes + 3) / 4;
  GPUDM_REQUIRE(at + words <= w.size(), std::string("gmt/cuda: ") + what + ": the ranks' parts do not add up (internal error)");
  if (bytes) std::memcpy(p, w.data() + at, bytes);
  at += words;
}
// Where the packed nodes start in the upload buffer of a batch of B trees (write_view's order: the
// view, t_node0, t_leaf0, t_stat0, t_salt, then the nodes).
std::size_t nodes_offset(int B) {
  const auto B1 = static_cast<std::size_t>(B) + 1;
  return align16(sizeof(FusedView)) + 3 * bytes_of<int>(B1) + bytes_of<unsigned long long>(static_cast<std::size_t>(B));
}
}  // namespace

RowBlock RowBlock::of(long long n, int sm_count, int rank, int ranks) {
  GPUDM_REQUIRE(n >= 1 && n < 0x7FFFFFFFll, "gmt/cuda: the fast path takes 1 to 2^31 - 1 rows");
  RowBlock b;
  // Chunks: FusedPolicy::kMaxChunkRows rows at most; enough of them that ~56 trees x chunks fill
  // the device a few times over (small sets) — fixed per dataset, so the summation order is too.
  const long long sms = std::max(1, sm_count);
  long long chunk = 4096;
  while (chunk > 256 && (n + chunk - 1) / chunk * 32 < sms * 8) chunk /= 2;
  b.chunk_rows = static_cast<int>(std::min<long long>(chunk, FusedPolicy::kMaxChunkRows));
  b.chunks_all = static_cast<int>(std::max<long long>(1, (n + b.chunk_rows - 1) / b.chunk_rows));
  GPUDM_REQUIRE(b.chunks_all <= 65535, "gmt/cuda: " + std::to_string(b.chunks_all) + " row chunks exceed the grid");
  b.G = std::min(FusedGroups::kGroups, b.chunks_all);
  GPUDM_REQUIRE(ranks >= 1 && ranks <= b.G, "gmt/cuda: rank_split 'rows' over " + std::to_string(ranks) + " ranks: the data's " +
                                                std::to_string(b.chunks_all) + " row chunks form " + std::to_string(b.G) +
                                                " merge groups and a rank takes whole groups (fewer ranks, or rank_split 'individuals')");
  const auto [g0, g1] = ::gpudm::shard(static_cast<std::size_t>(b.G), rank, ranks);
  b.g0 = static_cast<int>(g0);
  b.g1 = static_cast<int>(g1);
  b.chunk0 = FusedGroups::chunk_begin(b.g0, b.G, b.chunks_all);
  const int chunk1 = FusedGroups::chunk_begin(b.g1, b.G, b.chunks_all);
  b.chunks = chunk1 - b.chunk0;
  b.row0 = static_cast<long long>(b.chunk0) * b.chunk_rows;
  b.rows = std::min<long long>(static_cast<long long>(chunk1) * b.chunk_rows, n) - b.row0;
  return b;
}

FastPath::FastPath(const Context& c) : c_(c), h_{std::make_unique<Host>(), std::make_unique<Host>()}, exact_(c), exact_batch_(c, exact_) {
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
  // How the stats pass shares a stat leaf's rows among a block's warps (FusedPolicy::kSplit*): an
  // experiment's switch, not a config param (each mode sums in its own fixed order).
  stat_split_ = FusedPolicy::kSplitAuto;
  if (const char* e = std::getenv("GPUDM_GMT_STAT_SPLIT"); e != nullptr && *e != '\0') {
    const std::string m = e;
    GPUDM_REQUIRE(m == "auto" || m == "warps" || m == "leaf" || m == "block",
                  "GPUDM_GMT_STAT_SPLIT: '" + m + "' is not auto, warps, leaf or block");
    stat_split_ = m == "leaf" ? FusedPolicy::kSplitLeaf : m == "block" ? FusedPolicy::kSplitBlock : m == "warps" ? FusedPolicy::kSplitWarps : FusedPolicy::kSplitAuto;
  }
  // Two halves in flight per call (the trees are the same either way): an experiment's switch, off
  // by default (measured slower on 1x H100: the halves' kernels and host steps cost more than the
  // overlap hides; docs/perf-notes-gmt.md).
  pipeline_ = ::gpudm::env_integer("GPUDM_GMT_PIPELINE", 0, 1, 0) != 0;
  // The stats pass's grid chunk-fastest when the training data fits in half the L2 (a tree's chunks
  // then read from L2 in any order, so the heaviest tree's blocks can all go first); otherwise
  // tree-fastest (a chunk's rows shared in L2 by the trees run together). GPUDM_GMT_CHUNK_MAJOR=0|1
  // overrides (an experiment's switch: the results are the same bits either way).
  const double data_bytes = static_cast<double>(c_.data.padded_rows) * static_cast<double>(c_.data.cols + 1) * sizeof(float);
  const int auto_major = data_bytes <= 0.5 * static_cast<double>(c_.props->l2_bytes) ? 1 : 0;
  chunk_major_ = ::gpudm::env_integer("GPUDM_GMT_CHUNK_MAJOR", 0, 1, auto_major) != 0;
  // The solve of leaves up to FusedPolicy::kSolveSmemKv values in shared memory, a block of
  // kSolveBlock threads (default); GPUDM_GMT_SOLVE_SMEM=0: every leaf in the global work space,
  // blocks of kAuxBlock threads (an experiment's switch: the same bits either way).
  solve_smem_ = ::gpudm::env_integer("GPUDM_GMT_SOLVE_SMEM", 0, 1, 1) != 0;
  // The solve in the merge kernel's block of each leaf (default: one launch less, and the merged
  // sums solved from shared memory); GPUDM_GMT_MERGE_SOLVE=0: the solve kernel after the merge, as
  // GPUDM_GMT_SOLVE_SMEM says (an experiment's switch: the same bits either way).
  merge_solve_ = ::gpudm::env_integer("GPUDM_GMT_MERGE_SOLVE", 0, 1, 1) != 0;
  // The merge's grid: at most the blocks resident at once (its blocks loop over the stat leaves),
  // not the launch shape's capacity: blocks past a call's leaves would each be scheduled for nothing.
  // GPUDM_GMT_MERGE_BLOCK: its threads a block, 256 or 128 (twice the leaves resident: the kernel
  // is capped at 128 registers a thread), an experiment's switch: every sum is one thread's chain
  // in a fixed order, so the same bits either way.
  merge_block_ = static_cast<int>(::gpudm::env_integer("GPUDM_GMT_MERGE_BLOCK", 128, FusedPolicy::kMergeBlock, FusedPolicy::kMergeBlock));
  GPUDM_REQUIRE(merge_block_ == 128 || merge_block_ == FusedPolicy::kMergeBlock, "GPUDM_GMT_MERGE_BLOCK: expected 128 or 256");
  {
    int per_sm = 0;
    GPUDM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_merge_kernel, merge_block_, 0));
    merge_grid_max_ = std::max(1, per_sm) * std::max(1, c_.props->sm_count);
  }
  // GPUDM_GMT_MERGE_GRID=N (tests): at most N blocks, each looping over more leaves (0: as above).
  if (const long long g = ::gpudm::env_integer("GPUDM_GMT_MERGE_GRID", 0, 1 << 20, 0); g > 0) merge_grid_max_ = static_cast<int>(g);
  // The every-width stats kernel (shared-memory leaf atomics) with its registers capped for 5
  // blocks an SM (default: 96 registers, 12 bytes spilled; Elnino's pass -3 %, Pol's -8 %, 1x H200),
  // for 6 (GPUDM_GMT_STATS_CAP=6: 80 registers, 148 bytes spilled) or as the compiler allocates
  // them (0: 128 registers, 4 blocks an SM): an experiment's switch, the same bits either way.
  stats_cap_ = static_cast<int>(::gpudm::env_integer("GPUDM_GMT_STATS_CAP", 0, 6, 5));
  GPUDM_REQUIRE(stats_cap_ == 0 || stats_cap_ == 5 || stats_cap_ == 6, "GPUDM_GMT_STATS_CAP: expected 0, 5 or 6");
  // The caller's per-tree step (the EA's fitness, EvalBatch::after_tree) in the finish task;
  // GPUDM_GMT_AFTER_TREE=0 leaves it to the caller's own step (an experiment's switch).
  after_tree_here_ = ::gpudm::env_integer("GPUDM_GMT_AFTER_TREE", 0, 1, 1) != 0;
  if (split_) {  // a rows split: one batch a call (no halves), the solve in the merge's level 2 (its shift values from the groups' records)
    pipeline_ = false;
    merge_solve_ = true;
  }
  const int kv = static_cast<int>(c_.data.cols) + 1;
  wide_kv_ = kv > FusedPolicy::kNarrowKv ? std::min(kv, FusedPolicy::kMaxKv) : 0;
#if defined(GPUDM_CUDA_DEBUG_SYNC)
  graphs_on_ = false;
  graph_note_ = "off: GPUDM_CUDA_DEBUG_SYNC synchronises after every launch";
#else
  graphs_on_ = c_.options->cuda_graphs;
  graph_note_ = graphs_on_ ? "on" : "off (cuda_graphs = false)";
#endif
}

FastPath::~FastPath() {
  drop_graph(0);
  drop_graph(1);
}

void FastPath::drop_graph(int slot) {
  if (exec_[slot]) GPUDM_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_[slot]));
  exec_[slot] = nullptr;
  graph_epoch_[slot] = -1;
}

// The batch's flat arrays, tree by tree in batch order (the layout FusedView describes), the
// same arrays a serial pass in tree order writes, in one parallel pass over the trees' nodes. A tree's node and leaf offsets follow from the trees'
// sizes alone (a tree of n nodes has (n + 1) / 2 leaves: every test has two children), so each
// task writes its tree's packed nodes and per-leaf entries straight into place; its stat leaves
// (the leaves to fit: a few per tree) go to the tree's own part, and a serial step then gives them
// their batch-wide offsets. (Against the two-pass pack it replaced — the trees' sizes, then their
// entries — Elnino's `flattening` 0.103 -> 0.077 ms per iteration, the same upload: perf-notes-gmt.md.)
void FastPath::pack(int slot, const ::gpudm::gmt::EvalBatch& batch) {
  Host& h = *h_[slot];
  h.reset();
  h.B = static_cast<int>(batch.size());
  h.stray_cap = std::max(0, batch.repair.min_rows - 1);
  const bool all_stats = !batch.clean_sse_known;
  const int cols = static_cast<int>(c_.data.cols);
  const auto B = static_cast<std::size_t>(h.B);
  h.t_node0.resize(B + 1);
  h.t_leaf0.resize(B + 1);
  h.t_node0[0] = h.t_leaf0[0] = 0;
  for (std::size_t t = 0; t < B; ++t) {
    const int n = batch.trees[t]->size();
    h.t_node0[t + 1] = h.t_node0[t] + n;
    h.t_leaf0[t + 1] = h.t_leaf0[t] + (n + 1) / 2;
    h.max_nl = std::max(h.max_nl, (n + 1) / 2);
  }
  h.n_nodes = static_cast<std::size_t>(h.t_node0[B]);
  h.L = h.t_leaf0[B];
  h.l_stat.resize(static_cast<std::size_t>(h.L));
  h.l_node.resize(static_cast<std::size_t>(h.L));
  if (h.part.size() < B) h.part.resize(B);
  // The upload buffer holds the nodes now (ensure_capacity keeps them if it grows the buffer).
  reserve(h_in_[slot], nodes_offset(h.B) + bytes_of<PackedNode>(h.n_nodes));
  PackedNode* packed = reinterpret_cast<PackedNode*>(h_in_[slot].data() + nodes_offset(h.B));
  // (the pass's threads scale with the batch's nodes; the largest trees are claimed first)
  const std::size_t batch_nodes =
      ::gpudm::largest_first(order_, B, [&](std::size_t t) { return static_cast<std::size_t>(batch.trees[t]->size()); });
  ::gpudm::parallel_for_nodes(*c_.pool, B, batch_nodes, [&](std::size_t t) {
    const Tree& T = *batch.trees[t];
    Host::TreePart& z = h.part[t];
    z.clear();
    PackedNode* pn = packed + h.t_node0[t];
    int gl = h.t_leaf0[t], ll = 0;
    for (int i = 0; i < T.size(); ++i) {
      const TreeNode& nd = T.node(i);
      if (!nd.is_leaf()) {
        GPUDM_REQUIRE(nd.attr < cols, "gmt/cuda: a test on attribute " + std::to_string(nd.attr) + " of " + std::to_string(cols));
        pn[i] = PackedNode{nd.attr, nd.threshold, nd.left, 0};
        continue;
      }
      // (checked before the writes: a tree with more leaves than (n + 1) / 2 would write into the
      // next tree's leaf entries)
      GPUDM_REQUIRE(gl < h.t_leaf0[t + 1], "gmt/cuda: a tree whose tests do not all have two children (internal error)");
      pn[i] = PackedNode{-1 - ll, 0.0f, -1, -1};  // pad: the leaf's stat index in its tree (set below), -1 clean
      h.l_node[static_cast<std::size_t>(gl)] = i;
      h.l_stat[static_cast<std::size_t>(gl)] = -1;  // (a stat leaf's index: the serial step below)
      ++gl;
      ++ll;
      const bool refit = T.leaf_needs_refit(i);
      if (!all_stats && !refit) continue;
      const auto a = T.attrs(i);
      const int k = static_cast<int>(a.size()), kv = k + 1;
      pn[i].pad = static_cast<int>(z.stat.size());
      z.stat.push_back({gl - 1, k, refit ? 1 : 0, static_cast<int>(z.attrs.size()), z.stats, z.work});
      z.attrs.insert(z.attrs.end(), a.begin(), a.end());
      if (kv <= FusedPolicy::kMaxKv) {
        z.max_kv = std::max(z.max_kv, kv);
        z.stats += ls::n_stats(kv);
        z.work += static_cast<long long>(kv) * kv + kv;
        z.est += std::max<std::int64_t>(nd.stats.count, 0) * (ls::n_stats(kv) + 4);
      }
      const auto c = T.coef(i);
      for (int j = 0; j <= k; ++j) z.coef.push_back(refit || c.empty() ? 0.0 : c[static_cast<std::size_t>(j)]);
    }
    GPUDM_REQUIRE(gl == h.t_leaf0[t + 1], "gmt/cuda: a tree whose tests do not all have two children (internal error)");
    GPUDM_REQUIRE(z.stat.size() <= static_cast<std::size_t>(FusedPolicy::kMaxStatLeaves),
                  "gmt/cuda: a tree with " + std::to_string(z.stat.size()) + " leaves to fit (the fast path takes " +
                      std::to_string(FusedPolicy::kMaxStatLeaves) + ")");
  }, order_.data());
  // The stat leaves' batch-wide offsets (prefix sums in tree order), then their arrays.
  h.t_stat0.resize(B + 1);
  h.t_stat0[0] = 0;
  for (std::size_t t = 0; t < B; ++t) {
    const Host::TreePart& z = h.part[t];
    h.t_stat0[t + 1] = h.t_stat0[t] + static_cast<int>(z.stat.size());
    h.A += static_cast<int>(z.attrs.size());
    h.coef_total += static_cast<int>(z.coef.size());
    h.max_kv = std::max(h.max_kv, z.max_kv);
    h.max_ns = std::max(h.max_ns, static_cast<int>(z.stat.size()));
  }
  h.S = h.t_stat0[B];
  for (auto* v : {&h.s_leaf, &h.s_k, &h.s_fit, &h.s_attr0}) v->resize(static_cast<std::size_t>(h.S));
  h.s_stat0.resize(static_cast<std::size_t>(h.S));
  h.s_work0.resize(static_cast<std::size_t>(h.S));
  h.attrs.resize(static_cast<std::size_t>(h.A));
  h.coef_in.resize(static_cast<std::size_t>(h.coef_total));
  int attr0 = 0, coef0 = 0;
  for (std::size_t t = 0; t < B; ++t) {
    const Host::TreePart& z = h.part[t];
    auto gs = static_cast<std::size_t>(h.t_stat0[t]);
    for (const Host::TreePart::Stat& e : z.stat) {
      h.s_leaf[gs] = e.leaf;
      h.l_stat[static_cast<std::size_t>(e.leaf)] = static_cast<int>(gs);
      h.s_k[gs] = e.k;
      h.s_fit[gs] = e.fit;
      h.s_attr0[gs] = attr0 + e.attr0;
      h.s_stat0[gs] = h.stat_total + e.stat0;
      h.s_work0[gs] = h.work_total + e.work0;
      ++gs;
    }
    std::copy(z.attrs.begin(), z.attrs.end(), h.attrs.begin() + attr0);
    std::copy(z.coef.begin(), z.coef.end(), h.coef_in.begin() + coef0);
    attr0 += static_cast<int>(z.attrs.size());
    coef0 += static_cast<int>(z.coef.size());
    h.stat_total += z.stats;
    h.work_total += z.work;
  }
  h.t_salt.assign(batch.salts.begin(), batch.salts.end());
  h.t_order.resize(B);
  for (int t = 0; t < h.B; ++t) h.t_order[static_cast<std::size_t>(t)] = t;
  std::stable_sort(h.t_order.begin(), h.t_order.end(), [&](int a, int b) {
    return h.part[static_cast<std::size_t>(a)].est > h.part[static_cast<std::size_t>(b)].est;
  });
  ensure_capacity(slot);
}

bool FastPath::ensure_capacity(int slot) {
  Host& h = *h_[slot];
  MemoryGuard& mem = *c_.memory;
  std::size_t& in_bytes = in_bytes_[slot];
  std::size_t& out_bytes = out_bytes_[slot];
  // input: the view, then the arrays
  in_bytes = nodes_offset(h.B) + bytes_of<PackedNode>(h.n_nodes) + bytes_of<int>(h.B) + bytes_of<int>(h.L) + 4 * bytes_of<int>(h.S) + 2 * bytes_of<long long>(h.S) +
              bytes_of<int>(h.A) + bytes_of<double>(h.coef_in.size());
  out_bytes = bytes_of<LeafOut>(h.L) + bytes_of<StatOut>(h.S) + bytes_of<double>(static_cast<std::size_t>(h.stat_total)) +
               bytes_of<double>(static_cast<std::size_t>(h.coef_total)) + bytes_of<int>(static_cast<std::size_t>(h.S) * h.stray_cap);
  const std::size_t parts = static_cast<std::size_t>(chunks_) * FusedPolicy::kWarps;  // a partial per (chunk, warp)
  // The shared device buffers, each with the size this half needs (grow-only: a buffer serves both
  // halves). f(buffer, elements, what).
  auto device_buffers = [&](auto&& f) {
    f(d_in_, in_bytes, "the batch of trees");
    f(d_out_, out_bytes, "the batch's results");
    f(part_, parts * static_cast<std::size_t>(std::max<long long>(1, h.stat_total)), "the per-chunk leaf statistics");
    f(part_n_, parts * static_cast<std::size_t>(std::max(1, h.S)), "the per-chunk leaf counts");
    f(part_k_, parts * static_cast<std::size_t>(std::max(1, h.S)), "the per-chunk shift rows");
    f(part_shift_, parts * static_cast<std::size_t>(std::max(1, h.coef_total)), "the per-chunk shift values");
    f(work_, static_cast<std::size_t>(std::max<long long>(1, h.work_total)), "the solves' work space");
    f(work_i_, static_cast<std::size_t>(std::max(1, h.A)), "the solves' work space");
    f(grec_, static_cast<std::size_t>(c_.block.G) * static_cast<std::size_t>(FusedGroups::record(h.S, h.coef_total, h.stat_total)),
      "the merge's group records");
    f(gres_, static_cast<std::size_t>(c_.block.G) * static_cast<std::size_t>(std::max(1, h.S)), "the residuals' group sums");
    f(grun_, static_cast<std::size_t>(runs_) * static_cast<std::size_t>(std::max<long long>(1, h.stat_total)), "the merge's run sums");
  };
  if (in_flight_) {  // the other half's work still reads them: wait for it before one is reallocated (rare: grow-only)
    bool grows = false;
    device_buffers([&](auto& b, std::size_t n, const char*) { grows |= b.size() < std::max<std::size_t>(n, 1); });
    if (grows) {
      GPUDM_CUDA_CHECK(cudaStreamSynchronize(c_.stream));
      in_flight_ = false;
    }
  }
  bool grew = false;
  device_buffers([&](auto& b, std::size_t n, const char* what) { grew |= reserve(b, n, mem, what); });
  reserve(h_in_[slot], in_bytes, nodes_offset(h.B) + bytes_of<PackedNode>(h.n_nodes));  // (pack wrote the nodes: kept)
  reserve(h_out_[slot], out_bytes);
  // launch shapes: grown with headroom, so the graph is captured again only when a batch outgrows them
  auto grow = [&](int& cap, int need) {
    if (need <= cap) return;
    cap = std::max(need, cap + cap / 2);
    grew = true;
  };
  grow(cap_B_, h.B);
  grow(cap_L_, h.L);
  grow(cap_S_, h.S);
  grow(cap_nl_, h.max_nl);
  grow(cap_ns_, h.max_ns);
  // the kernel variant by the widest model (grow-only: 3, kNarrowKv, then every width)
  {
    const int need = h.max_kv <= 3 ? 3 : h.max_kv <= FusedPolicy::kNarrowKv ? FusedPolicy::kNarrowKv : FusedPolicy::kMaxKv;
    if (need > cap_kv_) {
      cap_kv_ = need;
      grew = true;
    }
  }
  smem_leaves_ = cap_nl_ <= FusedPolicy::kSmemLeaves;
  smem_ = fused_smem_bytes(cap_nl_, cap_ns_, chunk_rows_, launch_wide_kv(), smem_leaves_);
  const std::size_t limit = static_cast<std::size_t>(c_.props->smem_per_block_optin);
  if (smem_ > limit) {
    smem_leaves_ = false;
    smem_ = fused_smem_bytes(cap_nl_, cap_ns_, chunk_rows_, launch_wide_kv(), false);
  }
  GPUDM_REQUIRE(smem_ <= limit, "gmt/cuda: a tree of " + std::to_string(h.max_ns) + " leaves to fit needs " + std::to_string(smem_) +
                                    " bytes of shared memory, the device has " + std::to_string(limit));
  if (grew) {
    for (const void* k : stats_kernels())
      allow_dynamic_smem(k, limit);
    ++epoch_;
  }
  return grew;
}

int FastPath::launch_wide_kv() const { return cap_kv_ > FusedPolicy::kNarrowKv ? wide_kv_ : 0; }

std::vector<const void*> FastPath::stats_kernels() {
  return {reinterpret_cast<const void*>(fused_stats_kernel<true, 3>), reinterpret_cast<const void*>(fused_stats_kernel<true, FusedPolicy::kNarrowKv>),
          reinterpret_cast<const void*>(fused_stats_kernel<true, 0>), reinterpret_cast<const void*>(fused_stats_kernel<false, 3>),
          reinterpret_cast<const void*>(fused_stats_kernel<false, FusedPolicy::kNarrowKv>), reinterpret_cast<const void*>(fused_stats_kernel<false, 0>),
          reinterpret_cast<const void*>(fused_stats_kernel<true, 0, 5>), reinterpret_cast<const void*>(fused_stats_kernel<true, 0, 6>)};
}

void FastPath::write_view(int slot) {
  Host& h = *h_[slot];
  unsigned char* hb = h_in_[slot].data();
  unsigned char* db = d_in_.data();
  std::size_t at = align16(sizeof(FusedView));
  FusedView v;
  auto put = [&](const auto& vec, auto*& dptr) {
    using T = typename std::decay_t<decltype(vec)>::value_type;
    if (!vec.empty()) std::memcpy(hb + at, vec.data(), vec.size() * sizeof(T));
    dptr = reinterpret_cast<std::remove_reference_t<decltype(dptr)>>(db + at);
    at += bytes_of<T>(vec.size());
  };
  put(h.t_node0, v.t_node0);
  put(h.t_leaf0, v.t_leaf0);
  put(h.t_stat0, v.t_stat0);
  put(h.t_salt, v.t_salt);
  GPUDM_REQUIRE(at == nodes_offset(h.B), "gmt/cuda: the upload buffer's layout (internal error)");
  v.nodes = reinterpret_cast<const PackedNode*>(db + at);  // (written there by pack)
  at += bytes_of<PackedNode>(h.n_nodes);
  put(h.t_order, v.t_order);
  put(h.l_stat, v.l_stat);
  put(h.s_leaf, v.s_leaf);
  put(h.s_k, v.s_k);
  put(h.s_fit, v.s_fit);
  put(h.s_attr0, v.s_attr0);
  put(h.s_stat0, v.s_stat0);
  put(h.s_work0, v.s_work0);
  put(h.attrs, v.attrs);
  put(h.coef_in, v.coef_in);
  v.B = h.B;
  v.L = h.L;
  v.S = h.S;
  v.stray_cap = h.stray_cap;
  v.stat_total = h.stat_total;
  v.coef_total = h.coef_total;
  v.chunks = chunks_;
  v.work_total = h.work_total;
  v.rows = static_cast<long long>(c_.data.rows);
  v.ld = static_cast<long long>(c_.data.padded_rows);
  v.chunk_rows = chunk_rows_;
  v.stat_split = stat_split_;
  v.chunk_major = chunk_major_ ? 1 : 0;
  v.row_base = c_.block.row0;
  v.chunk0 = c_.block.chunk0;
  v.chunks_all = c_.block.chunks_all;
  v.G = c_.block.G;
  v.g0 = c_.block.g0;
  v.g1 = c_.block.g1;
  unsigned char* ob = d_out_.data();
  std::size_t o = 0;
  v.leaf_out = reinterpret_cast<LeafOut*>(ob + o);
  o += bytes_of<LeafOut>(h.L);
  v.stat_out = reinterpret_cast<StatOut*>(ob + o);
  o += bytes_of<StatOut>(h.S);
  v.stats = reinterpret_cast<double*>(ob + o);
  o += bytes_of<double>(static_cast<std::size_t>(h.stat_total));
  v.coef = reinterpret_cast<double*>(ob + o);
  o += bytes_of<double>(static_cast<std::size_t>(h.coef_total));
  v.strays = reinterpret_cast<int*>(ob + o);
  v.part = part_.data();
  v.part_n = part_n_.data();
  v.part_k = part_k_.data();
  v.part_shift = part_shift_.data();
  v.work = work_.data();
  v.work_i = work_i_.data();
  v.grec = grec_.data();
  v.gres = gres_.data();
  v.grun = grun_.data();
  std::memcpy(hb, &v, sizeof v);
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
    if (var == 2 && smem_leaves_ && stats_cap_ == 5) {  // the every-width variant with its registers capped (GPUDM_GMT_STATS_CAP)
      fused_stats_kernel<true, 0, 5><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv);
    } else if (var == 2 && smem_leaves_ && stats_cap_ == 6) {
      fused_stats_kernel<true, 0, 6><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv);
    } else switch (var + (smem_leaves_ ? 0 : 3)) {
      case 0: fused_stats_kernel<true, 3><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv); break;
      case 1: fused_stats_kernel<true, FusedPolicy::kNarrowKv><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv); break;
      case 2: fused_stats_kernel<true, 0><<<sgrid, FusedPolicy::kBlock, smem_, s>>>(vp, c_.data, wkv); break;
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
    fused_merge_kernel<<<merge_grid, merge_block_, 0, s>>>(vp, c_.data, sp, 0, 1);
    GPUDM_CUDA_CHECK(cudaGetLastError());
    marks.end(s, capture);
    return;
  }
  // the merge (levels 1 and 2; a rows split's part B: level 2), the solve, the residuals
  const bool part_b = part == kPartB;
  const bool solve_here = part_b || merge_solve_;
  fused_merge_kernel<<<merge_grid, merge_block_, 0, s>>>(vp, c_.data, sp, solve_here ? 1 : 0, part_b ? 2 : 3);
  GPUDM_CUDA_CHECK(cudaGetLastError());
  if (!solve_here) {
    const int sblock = solve_smem_ ? FusedPolicy::kSolveBlock : aux;
    fused_solve_kernel<<<std::max(1, (cap_S_ + sblock - 1) / sblock), sblock, 0, s>>>(vp, c_.data, sp, solve_smem_ ? FusedPolicy::kSolveSmemKv : 0);
    GPUDM_CUDA_CHECK(cudaGetLastError());
  }
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

void FastPath::capture_graph(int slot, int part) {
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

namespace {
// Sums of [x_a - x_a(K), y - y(K)] products over `rows` added to `s` (leaf_stats.hpp layout).
void add_rows(const Dataset& d, const std::vector<int>& attrs, std::int64_t shift_row, const std::vector<std::int64_t>& rows,
              double* s) {
  const int kv = static_cast<int>(attrs.size()) + 1;
  std::vector<double> v(static_cast<std::size_t>(kv));
  for (std::int64_t r : rows) {
    for (int j = 0; j < kv; ++j) {
      const auto J = static_cast<std::size_t>(j);
      const double x = j + 1 < kv ? d.at(static_cast<std::size_t>(r), static_cast<std::size_t>(attrs[J]))
                                  : static_cast<double>(d.target(static_cast<std::size_t>(r)));
      const double k = j + 1 < kv ? d.at(static_cast<std::size_t>(shift_row), static_cast<std::size_t>(attrs[J]))
                                  : static_cast<double>(d.target(static_cast<std::size_t>(shift_row)));
      v[J] = x - k;
    }
    ls::add_row(s, v.data(), kv);
  }
}
}  // namespace

// Results of tree t into the tree (repairs first); leaves for the exact solver go to `exact`
// (nodes of the tree). Returns false when the tree needs a second pass. When no leaf goes to the
// exact solver, it also propagates the tree's counts / errors / dipoles to its root from the leaves'
// keys (propagate_stats_from_keys). Runs on the host threads: it writes only tree t, `exact` and `cnt`.
bool FastPath::finish_tree(const ::gpudm::gmt::EvalBatch& batch, const Host& h, int t, std::vector<int>& exact, FinishCounts& cnt) const {
  const Dataset& data = *c_.host;
  Tree& T = *batch.trees[static_cast<std::size_t>(t)];
  const std::uint64_t salt = batch.salts[static_cast<std::size_t>(t)];
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  const float* y = data.targets().data();
  const int leaf0 = h.t_leaf0[static_cast<std::size_t>(t)], nl = h.t_leaf0[static_cast<std::size_t>(t) + 1] - leaf0;
  // per original node: its leaf (global), -1 for internal nodes
  // per-thread scratch (finish_tree runs once per tree per call, on the host threads)
  thread_local std::vector<int> gl_of;
  thread_local ::gpudm::gmt::RoutedCounts routed;
  gl_of.assign(static_cast<std::size_t>(T.size()), -1);
  routed.reset(T.size());
  for (int ll = 0; ll < nl; ++ll) {
    const int gl = leaf0 + ll;
    const int node = h.l_node[static_cast<std::size_t>(gl)];
    gl_of[static_cast<std::size_t>(node)] = gl;
    const LeafOut& lo = h.leaf_out[gl];
    const int gs = h.l_stat[static_cast<std::size_t>(gl)];
    const long long count = gs >= 0 ? h.stat_out[gs].n : lo.count;
    routed.count[static_cast<std::size_t>(node)] = count;
    if (gs < 0) {
      // a clean leaf: its rows are the last evaluation's (EvalBatch::clean_sse_known); if the count
      // says otherwise, the caller's flags were wrong: evaluate the tree again with every leaf
      if (lo.count != T.node(node).stats.count) {
        ++cnt.clean_mismatches;
        return false;
      }
      continue;
    }
    if (batch.repair.min_rows > 0 && count > 0 && count < batch.repair.min_rows) {
      const StatOut& so = h.stat_out[gs];
      GPUDM_REQUIRE(so.nstray == count, "gmt/cuda: a small leaf's rows were not all recorded (internal error)");
      routed.small_begin[static_cast<std::size_t>(node)] = static_cast<std::int32_t>(routed.small_rows.size());
      const int* r = h.strays + static_cast<std::size_t>(gs) * static_cast<std::size_t>(h.stray_cap);
      const std::size_t b = routed.small_rows.size();
      for (long long q = 0; q < count; ++q) routed.small_rows.push_back(r[q]);
      std::sort(routed.small_rows.begin() + static_cast<std::ptrdiff_t>(b), routed.small_rows.end());
    }
  }
  ::gpudm::gmt::RepairOutcome rep;
  if (batch.repair.min_rows > 0) {
    rep = ::gpudm::gmt::repair_tree(T, batch.repair, routed, data);
    if (!rep.complete) {  // a small clean leaf (its rows unrecorded): a second pass with every leaf
      return false;
    }
    cnt.repairs += rep.repairs;
    if (rep.repairs > 0) ++cnt.repaired_trees;
  }
  // Leaf results. Unrepaired: leaf i of T is original leaf i. Repaired: rep.origin / rep.extra.
  ls::SolveParams sp;
  sp.rank_tol = o.rank_tol;
  sp.pivot_guard = o.fast_pivot_guard;
  sp.rows_per_param = o.rows_per_param;
  const bool repaired = rep.repairs > 0;
  thread_local std::vector<double> s, shift, work, coef;
  thread_local std::vector<int> kept;
  // Each leaf's dipole keys as computed here, for the propagation to the root at the end (no target
  // looked up and no row hashed again: propagate_stats_from_keys).
  thread_local std::vector<std::uint64_t> key_lo, key_hi, key_rn;
  key_lo.resize(static_cast<std::size_t>(T.size()));
  key_hi.resize(static_cast<std::size_t>(T.size()));
  key_rn.resize(static_cast<std::size_t>(T.size()));
  for (int i = 0; i < T.size(); ++i) {
    if (!T.node(i).is_leaf()) continue;
    int origin = i;
    const std::vector<std::int64_t>* extra = nullptr;
    if (repaired) {
      origin = rep.origin[static_cast<std::size_t>(i)];
      if (!rep.extra[static_cast<std::size_t>(i)].empty()) extra = &rep.extra[static_cast<std::size_t>(i)];
      if (origin == -2) {  // rows of several original leaves: summed again in a second pass
        return false;
      }
    }
    const int gl = origin >= 0 ? gl_of[static_cast<std::size_t>(origin)] : -1;
    const int gs = gl >= 0 ? h.l_stat[static_cast<std::size_t>(gl)] : -1;
    ::gpudm::gmt::NodeStats st;
    std::uint64_t klo = ls::kNoLoKey, khi = ls::kNoHiKey, krn = ls::kNoLoKey;
    if (gl >= 0) {
      const LeafOut& lo = h.leaf_out[gl];
      krn = lo.rnd;
      if (gs >= 0) {
        st.count = h.stat_out[gs].n;
        klo = lo.lo;
        khi = lo.hi;
      } else {  // a clean leaf: the same rows as at its last evaluation, so the same extreme rows
        st.count = lo.count;
        const ::gpudm::gmt::NodeStats& prev = T.node(i).stats;  // (a repaired tree's leaf carries its original's)
        if (prev.dipole_lo >= 0) klo = ls::lo_key(y[prev.dipole_lo], static_cast<std::uint64_t>(prev.dipole_lo));
        if (prev.dipole_hi >= 0) khi = ls::hi_key(y[prev.dipole_hi], static_cast<std::uint64_t>(prev.dipole_hi));
      }
    }
    if (extra)
      for (std::int64_t r : *extra) {
        ++st.count;
        klo = std::min(klo, ls::lo_key(y[r], static_cast<std::uint64_t>(r)));
        khi = std::max(khi, ls::hi_key(y[r], static_cast<std::uint64_t>(r)));
        krn = std::min(krn, ls::dipole_key(salt, static_cast<std::uint64_t>(r)));
      }
    st.dipole_lo = ls::lo_row(klo);
    st.dipole_hi = ls::hi_row(khi);
    st.dipole_rand = ls::rand_row(krn);
    key_lo[static_cast<std::size_t>(i)] = klo;
    key_hi[static_cast<std::size_t>(i)] = khi;
    key_rn[static_cast<std::size_t>(i)] = krn;
    st.sae = std::numeric_limits<double>::quiet_NaN();
    const auto a = T.attrs(i);
    const int k = static_cast<int>(a.size()), kv = k + 1;
    if (!extra && gs < 0) {
      // a clean leaf, rows unchanged: model and SSE as they were (a repair may have marked it
      // dirty; its fit would be the same least squares on the same rows)
      st.sse = T.node(i).stats.sse;
      if (T.node(i).dirty && T.node(i).has_coef) {
        const auto c = T.coef(i);
        T.set_fit(i, std::vector<int>(a.begin(), a.end()), std::vector<double>(c.begin(), c.end()), T.node(i).rank);
      }
      T.node(i).stats = st;
      continue;
    }
    if (!extra) {
      const StatOut& so = h.stat_out[gs];
      const double* c = h.coef + h.s_attr0[static_cast<std::size_t>(gs)] + gs;
      if (so.flag != ls::kSolved) {
        T.node(i).stats = st;
        exact.push_back(i);
        continue;
      }
      if (!h.s_fit[static_cast<std::size_t>(gs)] && T.leaf_needs_refit(i)) {  // given coefficients, refit after a repair
        return false;
      }
      st.sse = so.sse;
      if (h.s_fit[static_cast<std::size_t>(gs)]) ::gpudm::gmt::set_leaf_fit(T, i, c, so.rank);
      T.node(i).stats = st;
      continue;
    }
    // A repaired leaf: the original leaf's statistics (same model attributes) plus the moved rows.
    if (kv > FusedPolicy::kMaxKv) {
      T.node(i).stats = st;
      exact.push_back(i);
      continue;
    }
    const int nst = ls::n_stats(kv);
    s.assign(static_cast<std::size_t>(nst), 0.0);
    std::int64_t shift_row = (*extra)[0];
    const std::vector<int> attrs(a.begin(), a.end());
    if (gs >= 0) {
      const bool same = h.s_k[static_cast<std::size_t>(gs)] == k &&
                        std::equal(attrs.begin(), attrs.end(), h.attrs.begin() + h.s_attr0[static_cast<std::size_t>(gs)]);
      if (!same) {
        return false;
      }
      const StatOut& so = h.stat_out[gs];
      if (so.n > 0) {
        shift_row = so.krow;
        std::copy_n(h.stats + h.s_stat0[static_cast<std::size_t>(gs)], nst, s.begin());
      }
    } else if (gl >= 0 && st.count > static_cast<long long>(extra->size())) {  // a clean leaf's rows plus moved ones: no statistics
      return false;
    }
    add_rows(data, attrs, shift_row, *extra, s.data());
    shift.assign(static_cast<std::size_t>(kv), 0.0);
    for (int j = 0; j < kv; ++j)
      shift[static_cast<std::size_t>(j)] = j < k ? data.at(static_cast<std::size_t>(shift_row), static_cast<std::size_t>(attrs[static_cast<std::size_t>(j)]))
                                                 : static_cast<double>(data.target(static_cast<std::size_t>(shift_row)));
    work.assign(static_cast<std::size_t>(kv) * kv, 0.0);
    kept.assign(static_cast<std::size_t>(std::max(1, k)), 0);
    coef.assign(static_cast<std::size_t>(kv), 0.0);
    const ls::SolveOut r = ls::solve_stats(k, st.count, s.data(), shift.data(), sp, work.data(), kept.data(), coef.data());
    ++cnt.host_solves;
    if (r.flag != ls::kSolved) {
      T.node(i).stats = st;
      exact.push_back(i);
      continue;
    }
    if (k > 0) {  // a near-exact fit: its SSE lost digits to cancellation; the second pass sums residuals
      const double sy = s[static_cast<std::size_t>(ls::stat_index(0, kv, kv))];
      const double cyy = s[static_cast<std::size_t>(ls::stat_index(kv, kv, kv))] - sy * sy / static_cast<double>(st.count);
      if (r.sse <= FusedPolicy::kResidualRatio * cyy) return false;
    }
    st.sse = r.sse;
    ::gpudm::gmt::set_leaf_fit(T, i, coef.data(), r.rank);
    T.node(i).stats = st;
  }
  // Counts, errors and dipoles up to the root (the trees with leaves for the exact solver: after it)
  if (exact.empty()) ::gpudm::gmt::propagate_stats_from_keys(T, key_lo.data(), key_hi.data(), key_rn.data());
  return true;
}

// Upload, graph (captured again when the capacities changed) or direct launches, download: queued
// on the stream, nothing waited for.
void FastPath::run_part(int slot, int part, PhaseMarks& direct) {
  const cudaStream_t s = c_.stream;
  bool graph = graphs_on_;
  if (graph && graph_epoch_[slot] != epoch_) {
    if (in_flight_) {  // (capture starts on an idle stream)
      GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
      in_flight_ = false;
    }
    try {
      capture_graph(slot, part);
    } catch (const ::gpudm::Error& e) {
      drop_graph(0);
      drop_graph(1);
      graphs_on_ = graph = false;
      graph_note_ = std::string("off: capture failed (") + e.what() + ")";
    }
  }
  if (graph) GPUDM_CUDA_CHECK(cudaGraphLaunch(exec_[slot], s));
  else launch_all(direct, false, part);
}

void FastPath::launch_half(int slot, PhaseMarks& direct) {
  const cudaStream_t s = c_.stream;
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(d_in_.data(), h_in_[slot].data(), in_bytes_[slot], cudaMemcpyHostToDevice, s));
  direct.end(s, false);
  run_part(slot, kAll, direct);
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_out_[slot].data(), d_out_.data(), out_bytes_[slot], cudaMemcpyDeviceToHost, s));
  direct.end(s, false);
  in_flight_ = true;
}

void FastPath::attach_outputs(int slot) {
  Host& h = *h_[slot];
  const unsigned char* ob = h_out_[slot].data();
  std::size_t o = 0;
  h.leaf_out = reinterpret_cast<const LeafOut*>(ob + o);
  o += bytes_of<LeafOut>(h.L);
  h.stat_out = reinterpret_cast<const StatOut*>(ob + o);
  o += bytes_of<StatOut>(h.S);
  h.stats = reinterpret_cast<const double*>(ob + o);
  o += bytes_of<double>(static_cast<std::size_t>(h.stat_total));
  h.coef = reinterpret_cast<const double*>(ob + o);
  o += bytes_of<double>(static_cast<std::size_t>(h.coef_total));
  h.strays = reinterpret_cast<const int*>(ob + o);
}

void FastPath::launch_split(PhaseMarks& direct, ::gpudm::PhaseTimer& timer) {
  const cudaStream_t s = c_.stream;
  ::gpudm::Comm& comm = *c_.comm;
  const Host& h = *h_[0];
  const RowBlock& rb = c_.block;
  const auto rec = static_cast<std::size_t>(FusedGroups::record(h.S, h.coef_total, h.stat_total));
  const auto G = static_cast<std::size_t>(rb.G), S = static_cast<std::size_t>(h.S), L = static_cast<std::size_t>(h.L);
  const auto cap = static_cast<std::size_t>(h.stray_cap);
  const auto g0 = static_cast<std::size_t>(rb.g0), g1 = static_cast<std::size_t>(rb.g1);
  reserve(h_grec_, G * rec + 1);
  reserve(h_gres_, G * std::max<std::size_t>(1, S));
  // part A: the stats pass and the merge's level 1 on this rank's rows; its counts, keys, small
  // leaves' rows and group records down
  ::gpudm::Stopwatch launch;
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(d_in_.data(), h_in_[0].data(), in_bytes_[0], cudaMemcpyHostToDevice, s));
  direct.end(s, false);
  run_part(0, kPartA, direct);
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_out_[0].data(), d_out_.data(), out_bytes_[0], cudaMemcpyDeviceToHost, s));
  if (g1 > g0)
    GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_grec_.data() + g0 * rec, grec_.data() + g0 * rec, (g1 - g0) * rec * sizeof(double), cudaMemcpyDeviceToHost, s));
  direct.end(s, false);
  in_flight_ = true;
  host_launch_s_ += launch.seconds();
  ::gpudm::Stopwatch wait;
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  in_flight_ = false;
  host_wait_s_ += wait.seconds();
  attach_outputs(0);
  // the combine: one all-gather of every rank's part; counts summed (integers), keys by min / max,
  // small leaves' rows in rank order (the host sorts them), the groups' records into place
  {
    auto sc = timer.scope("combine");
    const ::gpudm::Stopwatch sw;
    std::vector<std::uint32_t> words;
    // each rank's part opens with what shapes it (checked below: the ranks must agree on them)
    const auto shape = [&](int r) {
      const auto [rg0, rg1] = ::gpudm::shard(G, r, comm.size());
      return std::vector<std::uint64_t>{G, rg0, rg1, L, S, cap, rec};
    };
    const std::vector<std::uint64_t> mine = shape(comm.rank());
    put_bytes(words, mine.data(), mine.size() * sizeof(std::uint64_t));
    put_bytes(words, h.leaf_out, L * sizeof(LeafOut));
    std::vector<int> nstray(S);
    for (std::size_t i = 0; i < S; ++i) nstray[i] = h.stat_out[i].nstray;
    put_bytes(words, nstray.data(), S * sizeof(int));
    put_bytes(words, h.strays, S * cap * sizeof(int));
    put_bytes(words, h_grec_.data() + g0 * rec, (g1 - g0) * rec * sizeof(double));
    const std::vector<std::uint32_t> all = comm.gather_all(words, "gmt/cuda: combining the ranks' leaf statistics");
    ++combine_calls_;
    combine_bytes_ += all.size() * sizeof(std::uint32_t);
    LeafOut none{};
    none.lo = ls::kNoLoKey;
    none.hi = ls::kNoHiKey;
    none.rnd = ls::kNoLoKey;
    comb_leaf_.assign(L, none);
    comb_nstray_.assign(S, 0);
    comb_strays_.assign(S * cap, 0);
    std::vector<LeafOut> lo(L);
    std::vector<int> ns(S), st(S * cap);
    std::size_t at = 0;
    for (int r = 0; r < comm.size(); ++r) {
      std::vector<std::uint64_t> theirs(mine.size());
      take_bytes(all, at, theirs.data(), theirs.size() * sizeof(std::uint64_t), "the leaf results");
      GPUDM_REQUIRE(theirs == shape(r), "gmt/cuda: rank " + std::to_string(r) + "'s part of the combine has another shape (merge groups, "
                                        "leaves or records) than rank " + std::to_string(comm.rank()) + " expects: the ranks disagree on the data or the batch");
      take_bytes(all, at, lo.data(), L * sizeof(LeafOut), "the leaf results");
      take_bytes(all, at, ns.data(), S * sizeof(int), "the small leaves' rows");
      take_bytes(all, at, st.data(), S * cap * sizeof(int), "the small leaves' rows");
      for (std::size_t i = 0; i < L; ++i) {
        LeafOut& o = comb_leaf_[i];
        o.count += lo[i].count;
        o.lo = std::min(o.lo, lo[i].lo);
        o.hi = std::max(o.hi, lo[i].hi);
        o.rnd = std::min(o.rnd, lo[i].rnd);
      }
      for (std::size_t i = 0; i < S; ++i) {
        const std::size_t have = static_cast<std::size_t>(std::max(0, comb_nstray_[i]));
        const std::size_t mine = std::min<std::size_t>(static_cast<std::size_t>(std::max(0, ns[i])), cap);
        for (std::size_t q = 0; q < mine && have + q < cap; ++q) comb_strays_[i * cap + have + q] = st[i * cap + q];
        comb_nstray_[i] += ns[i];
      }
      const auto [rg0, rg1] = ::gpudm::shard(G, r, comm.size());
      take_bytes(all, at, h_grec_.data() + rg0 * rec, (rg1 - rg0) * rec * sizeof(double), "the merge's group records");
    }
    GPUDM_REQUIRE(at == all.size(), "gmt/cuda: the ranks' leaf statistics do not add up (internal error)");
    combine_s_ += sw.seconds();
  }
  // part B: every group's record up, the merge's level 2 and the solve (every rank solves every
  // leaf from the same records), the residual pass on this rank's rows
  launch.reset();
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(grec_.data(), h_grec_.data(), G * rec * sizeof(double), cudaMemcpyHostToDevice, s));
  direct.end(s, false);
  run_part(1, kPartB, direct);
  direct.begin("transfers", s, false);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_out_[0].data(), d_out_.data(), out_bytes_[0], cudaMemcpyDeviceToHost, s));
  if (g1 > g0 && S > 0)
    GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_gres_.data() + g0 * S, gres_.data() + g0 * S, (g1 - g0) * S * sizeof(double), cudaMemcpyDeviceToHost, s));
  direct.end(s, false);
  in_flight_ = true;
  host_launch_s_ += launch.seconds();
  wait.reset();
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  in_flight_ = false;
  host_wait_s_ += wait.seconds();
  // the combined results into the download, as one process's would be
  unsigned char* ob = h_out_[0].data();
  auto* leaf_out = reinterpret_cast<LeafOut*>(ob);
  auto* stat_out = reinterpret_cast<StatOut*>(ob + bytes_of<LeafOut>(L));
  auto* strays = reinterpret_cast<int*>(ob + bytes_of<LeafOut>(L) + bytes_of<StatOut>(S) + bytes_of<double>(static_cast<std::size_t>(h.stat_total)) +
                                        bytes_of<double>(static_cast<std::size_t>(h.coef_total)));
  std::copy(comb_leaf_.begin(), comb_leaf_.end(), leaf_out);
  for (std::size_t i = 0; i < S; ++i) stat_out[i].nstray = comb_nstray_[i];
  std::copy(comb_strays_.begin(), comb_strays_.end(), strays);
  // the residuals' level 2 (the device's fused_residual_merge_kernel level 2: the same additions in
  // group order), when a leaf's SSE is summed from its residuals (the same leaves on every rank)
  bool any = false;
  for (std::size_t i = 0; i < S; ++i) any = any || stat_out[i].resid != 0;
  if (any) {
    auto sc = timer.scope("combine");
    const ::gpudm::Stopwatch sw;
    std::vector<std::uint32_t> words;
    put_bytes(words, h_gres_.data() + g0 * S, (g1 - g0) * S * sizeof(double));
    const std::vector<std::uint32_t> all = comm.gather_all(words, "gmt/cuda: combining the ranks' residuals");
    ++combine_calls_;
    combine_bytes_ += all.size() * sizeof(std::uint32_t);
    std::size_t at = 0;
    for (int r = 0; r < comm.size(); ++r) {
      const auto [rg0, rg1] = ::gpudm::shard(G, r, comm.size());
      take_bytes(all, at, h_gres_.data() + rg0 * S, (rg1 - rg0) * S * sizeof(double), "the residuals");
    }
    GPUDM_REQUIRE(at == all.size(), "gmt/cuda: the ranks' residuals do not add up (internal error)");
    for (std::size_t i = 0; i < S; ++i) {
      if (!stat_out[i].resid) continue;
      double sse = 0.0;
      for (std::size_t g = 0; g < G; ++g) sse += h_gres_[g * S + i];
      stat_out[i].sse = sse;
    }
    combine_s_ += sw.seconds();
  }
}

void FastPath::evaluate(const ::gpudm::gmt::EvalBatch& batch, ::gpudm::PhaseTimer& timer, ::gpudm::gmt::EvalCounters& counters) {
  if (batch.size() == 0) return;
  GPUDM_REQUIRE(batch.salts.size() == batch.trees.size(), "gmt: one salt per tree");
  const cudaStream_t s = c_.stream;
  ++calls_;
  trees_ += static_cast<long long>(batch.size());
  // The call's halves (one when pipelining is off or the call is small): trees [0, cut) and
  // [cut, B), each packed, launched and finished on its own; the device runs one half while the
  // host packs or finishes the other. A tree's results do not depend on the other trees of its
  // half, so the trees are the same as from one batch.
  const std::size_t B = batch.size();
  const bool halves = pipeline_ && B >= static_cast<std::size_t>(kPipelineMinTrees);
  const std::size_t cut = halves ? B / 2 : B;
  ::gpudm::gmt::EvalBatch part[2];
  const ::gpudm::gmt::EvalBatch* parts[2] = {&batch, nullptr};
  if (halves) {
    for (int p = 0; p < 2; ++p) {
      const std::size_t lo = p == 0 ? 0 : cut, hi = p == 0 ? cut : B;
      part[p].repair = batch.repair;
      part[p].clean_sse_known = batch.clean_sse_known;
      part[p].trees.assign(batch.trees.begin() + static_cast<std::ptrdiff_t>(lo), batch.trees.begin() + static_cast<std::ptrdiff_t>(hi));
      part[p].salts.assign(batch.salts.begin() + static_cast<std::ptrdiff_t>(lo), batch.salts.begin() + static_cast<std::ptrdiff_t>(hi));
      parts[p] = &part[p];
    }
    ++pipelined_calls_;
  }
  const int n_parts = halves ? 2 : 1;
  // Per tree of the call (index in `batch`): the exact solver's leaves, counts, finished or not.
  std::vector<std::vector<int>> exact(B);
  std::vector<FinishCounts> cnt(B);
  std::vector<char> done(B, 0);
  // Half p's trees on the host threads: repairs, results into the trees, and for a tree without
  // leaves for the exact solver its counts / errors / dipoles propagated to the root (the
  // reduction, in the same task; the other trees' follow the exact solver).
  auto finish = [&](int p) {
    const std::size_t first = p == 0 ? 0 : cut;
    const Host& h = *h_[p];
    auto sc = timer.scope("repair");
    // (on the pool even for small trees: a tree's finish costs far more than its node count says
    // — its small leaves' recorded rows, host solves — and running it serially doubled Armchair
    // 1M's `repair` and tripled Elevators', 3d2b690)
    // (the step's threads scale with its nodes; the largest trees are claimed first)
    const std::size_t nodes = ::gpudm::largest_first(order_, parts[p]->size(), [&](std::size_t t) {
      return static_cast<std::size_t>(parts[p]->trees[t]->size());
    });
    ::gpudm::parallel_for_work(*c_.pool, parts[p]->size(), nodes, [&](std::size_t t) {
      const std::size_t g = first + t;
      done[g] = finish_tree(*parts[p], h, static_cast<int>(t), exact[g], cnt[g]) ? 1 : 0;  // (propagates when exact[g] is empty)
      if (done[g] && exact[g].empty() && batch.after_tree != nullptr && after_tree_here_) {  // final: the caller's step for it, here
        (*batch.after_tree)(g);
        batch.after_tree_done[g] = 1;
      }
    }, order_.data());
  };
  PhaseMarks& direct = direct_;
  direct.clear();
  // An exception thrown while work is queued (the second half's pack, the first half's finish)
  // must not leave the device reading the pinned buffers and device arrays it then reuses or frees:
  // on the way out the stream is waited for.
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
  // Host clock of the call's steps that no phase times (reported by describe(): where a run's
  // time outside its phases goes): the launches' API calls, the waits for the device, the phase
  // events' read-back.
  for (int p = 0; p < n_parts; ++p) {
    {
      auto sc = timer.scope("flattening");
      pack(p, *parts[p]);  // (sizes the buffers: ensure_capacity)
      write_view(p);
    }
    stat_leaves_ += h_[p]->S;
    if (split_) {  // (its waits and combines inside; one part: no halves)
      launch_split(direct, timer);
      continue;
    }
    const ::gpudm::Stopwatch launch;
    launch_half(p, direct);
    if (p == 0 && n_parts == 2) half_done_.record(s);
    host_launch_s_ += launch.seconds();
  }
  if (n_parts == 2) {  // the first half's results while the device runs the second half
    const ::gpudm::Stopwatch wait;
    half_done_.synchronize();
    host_wait_s_ += wait.seconds();
    attach_outputs(0);
    finish(0);
  }
  ::gpudm::Stopwatch clock;
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  host_wait_s_ += clock.seconds();
  in_flight_ = false;
  clock.reset();
  direct.flush(timer);
  if (graphs_on_) {
    try {
      for (int p = 0; p < (split_ ? 2 : n_parts); ++p) {  // each half's (a rows split: part's) phases on their own: a failure keeps those before it
        PhaseTimer phases;
        marks_[p].flush(phases);
        timer.merge(phases);
      }
    } catch (const ::gpudm::Error& e) {
      drop_graph(0);
      drop_graph(1);
      graphs_on_ = false;
      graph_note_ = std::string("off: graph phase timing failed (") + e.what() + ")";
    }
  }
  host_flush_s_ += clock.seconds();
  attach_outputs(n_parts - 1);
  for (int p = 0; p < n_parts; ++p)
    for (int i = 0; i < h_[p]->S; ++i) resid_leaves_ += h_[p]->stat_out[i].resid != 0 ? 1 : 0;  // (the first half's views are still attached)
  finish(n_parts - 1);
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
  j["design"] = "one fused statistics pass per call (fused.cuh): leaf sums in FP64, fixed-order merge, batched solve";
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
  j["stats_registers"] = stats_cap_ ? "capped for " + std::to_string(stats_cap_) +
                                          " blocks an SM in the every-width variant with shared-memory leaf atomics (GPUDM_GMT_STATS_CAP); "
                                          "the compiler's in the others"
                                    : "the compiler's (GPUDM_GMT_STATS_CAP=0)";
  j["after_tree"] = after_tree_here_ ? "in the finish task" : "the caller's step (GPUDM_GMT_AFTER_TREE=0)";
  j["solve"] = merge_solve_ ? "in the merge's block: leaves of up to " + std::to_string(FusedPolicy::kSolveSmemKv) + " values in shared memory"
                : solve_smem_ ? "solve kernel: leaves of up to " + std::to_string(FusedPolicy::kSolveSmemKv) + " values in shared memory (GPUDM_GMT_MERGE_SOLVE=0)"
                              : "solve kernel: global work space (GPUDM_GMT_MERGE_SOLVE=0, GPUDM_GMT_SOLVE_SMEM=0)";
  j["merge_block"] = merge_block_;
  j["merge_grid_max"] = merge_grid_max_;
  j["stats_grid"] = chunk_major_ ? "chunk-fastest, heaviest tree first" : "tree-fastest, heaviest tree first in each chunk";
  j["stat_split"] = stat_split_ == FusedPolicy::kSplitLeaf    ? "leaf"
                    : stat_split_ == FusedPolicy::kSplitBlock ? "block"
                    : stat_split_ == FusedPolicy::kSplitWarps ? "warps"
                                                              : "auto";
  j["stat_split_min_rows"] = FusedPolicy::kSplitMinRows;
  j["shared_memory_bytes"] = smem_;
  j["leaf_atomics"] = smem_leaves_ ? "shared" : "global";
  j["pipeline"] = pipeline_ ? "two halves in flight per call of " + std::to_string(kPipelineMinTrees) + " or more trees (GPUDM_GMT_PIPELINE=1)" : "off";
  j["pipelined_calls"] = pipelined_calls_;
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

// ---- the exact solver of a call's flagged leaves --------------------------------------------------

namespace {
// The tree packed as the fast path packs it (leaf index -1 - ordinal); the ordinal of `leaf_node`.
int pack_tree(const Tree& tree, int leaf_node, std::vector<PackedNode>& out) {
  int target = -1, ll = 0;
  for (int i = 0; i < tree.size(); ++i) {
    const TreeNode& nd = tree.node(i);
    if (!nd.is_leaf()) {
      out.push_back(PackedNode{nd.attr, nd.threshold, nd.left, 0});
      continue;
    }
    if (i == leaf_node) target = ll;
    out.push_back(PackedNode{-1 - ll, 0.0f, -1, 0});
    ++ll;
  }
  GPUDM_REQUIRE(target >= 0, "gmt/cuda: exact solve of a node that is not a leaf");
  return target;
}

long long rank_rule_max_params(const ::gpudm::gmt::EvalOptions& o, long long m) {
  if (o.rows_per_param <= 0) return std::numeric_limits<long long>::max();
  return std::max<long long>(1, static_cast<long long>(std::floor(static_cast<double>(m) / o.rows_per_param)));
}

// A rows split's leaf matrices (issue 26): every rank's rows of leaf j (m_loc[j] x nc[j],
// column-major, ld m_loc[j], at local + loff[j]) gathered and stacked in rank order into leaf j's
// whole matrix (m[j] x nc[j], ld m[j], at full + foff[j]). The ranks' row blocks are contiguous
// and each rank's rows are in row order, so the stack is the leaf's rows in row order: the matrix
// one process gathers, value for value.
void stack_matrices(::gpudm::Comm& comm, const std::vector<long long>& m_loc, const std::vector<long long>& m, const std::vector<int>& nc,
                    const double* local, const std::vector<long long>& loff, double* full, const std::vector<long long>& foff) {
  const std::size_t J = m.size();
  std::vector<std::uint32_t> w;
  for (std::size_t j = 0; j < J; ++j) {
    put_bytes(w, &m_loc[j], sizeof(long long));
    put_bytes(w, local + loff[j], static_cast<std::size_t>(m_loc[j]) * static_cast<std::size_t>(nc[j]) * sizeof(double));
  }
  const std::vector<std::uint32_t> all = comm.gather_all(w, "gmt/cuda: gathering the exact solver's leaf rows");
  std::vector<long long> have(J, 0);
  std::vector<double> tmp;
  std::size_t at = 0;
  for (int r = 0; r < comm.size(); ++r)
    for (std::size_t j = 0; j < J; ++j) {
      long long mr = 0;
      take_bytes(all, at, &mr, sizeof mr, "the exact solver's leaf rows");
      GPUDM_REQUIRE(mr >= 0 && have[j] + mr <= m[j], "gmt/cuda: the ranks found more rows than the " + std::to_string(m[j]) +
                                                          " of a leaf for the exact solver (internal error)");
      tmp.resize(static_cast<std::size_t>(mr) * static_cast<std::size_t>(nc[j]));
      take_bytes(all, at, tmp.data(), tmp.size() * sizeof(double), "the exact solver's leaf rows");
      for (int c = 0; c < nc[j]; ++c)
        if (mr > 0) std::memcpy(full + foff[j] + static_cast<long long>(c) * m[j] + have[j], tmp.data() + static_cast<long long>(c) * mr, static_cast<std::size_t>(mr) * sizeof(double));
      have[j] += mr;
    }
  GPUDM_REQUIRE(at == all.size(), "gmt/cuda: the exact solver's leaf rows do not add up (internal error)");
  for (std::size_t j = 0; j < J; ++j)
    GPUDM_REQUIRE(have[j] == m[j], "gmt/cuda: the exact solver found " + std::to_string(have[j]) + " rows in a leaf of " + std::to_string(m[j]) +
                                       " (internal error)");
}

template <class T>
std::size_t put(std::vector<unsigned char>& b, const T* p, std::size_t n) {  // 16-byte aligned
  const std::size_t at = (b.size() + 15) / 16 * 16;
  b.resize(at + n * sizeof(T));
  if (n) std::memcpy(b.data() + at, p, n * sizeof(T));
  return at;
}
}  // namespace

void ExactBatch::solve(const std::vector<Leaf>& leaves) {
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  std::vector<Leaf> batch;
  for (const Leaf& l : leaves) {
    const long long kv = static_cast<long long>(l.tree->attrs(l.node).size()) + 2;
    if (l.rows > o.exact_batch_max_rows || kv > ExactBatchPolicy::kMaxCols) single_.solve(*l.tree, l.node, l.rows);
    else batch.push_back(l);
  }
  // Groups whose matrices fit a budget (the device memory guard has the last word). A rows split
  // counts the masks of the whole data's rows, not this rank's: every rank must form the same
  // groups (each group is one collective of every rank; a leaf's solve does not depend on its group).
  constexpr std::size_t kGroupBytes = std::size_t{256} << 20;
  const long long mask_rows = c_.split() ? static_cast<long long>(c_.host->rows()) : static_cast<long long>(c_.data.rows);
  std::size_t first = 0, bytes = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    // the leaf's matrix and its row mask
    const std::size_t b = static_cast<std::size_t>(batch[i].rows) * (batch[i].tree->attrs(batch[i].node).size() + 2) * sizeof(double) +
                          static_cast<std::size_t>(exact_mask_words(mask_rows)) * sizeof(unsigned);
    if (i > first && (bytes + b > kGroupBytes || i - first >= 65535)) {  // (the routing grid's y: a leaf each)
      solve_group(batch, first, i);
      first = i;
      bytes = 0;
    }
    bytes += b;
  }
  if (first < batch.size()) solve_group(batch, first, batch.size());
}

void ExactBatch::solve_group(const std::vector<Leaf>& leaves, std::size_t first, std::size_t last) {
  const cudaStream_t s = c_.stream;
  MemoryGuard& mem = *c_.memory;
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  const std::size_t J = last - first;
  thread_local std::vector<PackedNode> nodes;
  thread_local std::vector<ExactJob> jobs;
  thread_local std::vector<int> attrs;
  nodes.clear();
  jobs.clear();
  attrs.clear();
  long long mat_total = 0, row_total = 0;
  int ld = 1;
  const ::gpudm::gmt::Tree* packed = nullptr;
  int packed_at = 0;
  for (std::size_t i = first; i < last; ++i) {
    const Leaf& l = leaves[i];
    ExactJob j;
    // A tree's leaves are listed together: its nodes are packed once (the leaf ordinals of the
    // same packing).
    if (l.tree != packed) {
      packed_at = static_cast<int>(nodes.size());
      packed = l.tree;
      pack_tree(*l.tree, l.node, nodes);
    }
    j.node0 = packed_at;
    int ll = 0;
    for (int n = 0; n < l.node; ++n) ll += l.tree->node(n).is_leaf() ? 1 : 0;
    GPUDM_REQUIRE(l.tree->node(l.node).is_leaf(), "gmt/cuda: exact solve of a node that is not a leaf");
    j.leaf = ll;
    const auto a = l.tree->attrs(l.node);
    j.k = static_cast<int>(a.size());
    j.attr0 = static_cast<int>(attrs.size());
    attrs.insert(attrs.end(), a.begin(), a.end());
    j.m = l.rows;
    j.mat0 = mat_total;
    j.row0 = row_total;
    j.max_params = rank_rule_max_params(o, l.rows);
    mat_total += l.rows * (j.k + 2);
    row_total += l.rows;
    ld = std::max(ld, j.k + 1);
    jobs.push_back(j);
  }
  thread_local std::vector<unsigned char> in;
  in.clear();
  const std::size_t at_nodes = put(in, nodes.data(), nodes.size());
  const std::size_t at_jobs = put(in, jobs.data(), jobs.size());
  const std::size_t at_attrs = put(in, attrs.data(), attrs.size());
  // outputs: coef (J x ld), sse (J), found (J), rank (J)
  const std::size_t out_coef = 0, out_sse = out_coef + J * static_cast<std::size_t>(ld) * sizeof(double),
                    out_found = out_sse + J * sizeof(double), out_rank = out_found + J * sizeof(long long),
                    out_bytes = out_rank + J * sizeof(int);
  reserve(h_in_, in.size() + 16);
  reserve(h_out_, out_bytes);
  reserve(d_in_, in.size() + 16, mem, "the exact solver's batch");
  reserve(d_out_, out_bytes, mem, "the exact solver's results");
  reserve(rows_, static_cast<std::size_t>(std::max<long long>(1, row_total)), mem, "the exact solver's rows");
  reserve(mat_, static_cast<std::size_t>(std::max<long long>(1, mat_total)), mem, "the exact solver's leaf matrices");
  const long long words = exact_mask_words(static_cast<long long>(c_.data.rows));
  reserve(mask_, static_cast<std::size_t>(words) * J, mem, "the exact solver's row masks");
  std::memcpy(h_in_.data(), in.data(), in.size());
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(d_in_.data(), h_in_.data(), in.size(), cudaMemcpyHostToDevice, s));
  unsigned char* din = d_in_.data();
  unsigned char* dout = d_out_.data();
  const auto* djobs = reinterpret_cast<const ExactJob*>(din + at_jobs);
  const dim3 route_grid(static_cast<unsigned>((static_cast<long long>(c_.data.rows) + ExactBatchPolicy::kRouteBlockRows - 1) /
                                              ExactBatchPolicy::kRouteBlockRows),
                        static_cast<unsigned>(J));
  exact_route_kernel<<<route_grid, ExactBatchPolicy::kBlock, 0, s>>>(c_.data, reinterpret_cast<const PackedNode*>(din + at_nodes), djobs,
                                                                       mask_.data(), words);
  GPUDM_CUDA_CHECK(cudaGetLastError());
  auto launch = [&](int mode) {
    exact_batch_kernel<<<static_cast<unsigned>(J), ExactBatchPolicy::kBlock, 0, s>>>(
        c_.data, djobs, mask_.data(), words, reinterpret_cast<const int*>(din + at_attrs), rows_.data(), mat_.data(), o.rank_tol,
        reinterpret_cast<double*>(dout + out_coef), ld, reinterpret_cast<int*>(dout + out_rank), reinterpret_cast<double*>(dout + out_sse),
        reinterpret_cast<long long*>(dout + out_found), mode, orig_.data());
    GPUDM_CUDA_CHECK(cudaGetLastError());
  };
  if (c_.split()) {  // this rank's rows of each leaf gathered, the ranks' rows stacked, the same solve on every rank
    launch(ExactMode::kGather);
    reserve(h_found_, J);
    GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_found_.data(), dout + out_found, J * sizeof(long long), cudaMemcpyDeviceToHost, s));
    GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<long long> m_loc(J), m(J), loff(J), foff(J);
    std::vector<int> nc(J);
    long long local_total = 0;
    for (std::size_t i = 0; i < J; ++i) {
      m_loc[i] = h_found_[i];
      m[i] = jobs[i].m;
      nc[i] = jobs[i].k + 2;
      foff[i] = jobs[i].mat0;
      loff[i] = local_total;
      local_total += m_loc[i] * nc[i];
    }
    reserve(h_mat_, static_cast<std::size_t>(std::max(local_total, mat_total)) + 1);
    for (std::size_t i = 0; i < J; ++i)
      if (m_loc[i] > 0)
        GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_mat_.data() + loff[i], mat_.data() + foff[i], static_cast<std::size_t>(m_loc[i] * nc[i]) * sizeof(double),
                                         cudaMemcpyDeviceToHost, s));
    GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> local(h_mat_.data(), h_mat_.data() + local_total);
    stack_matrices(*c_.comm, m_loc, m, nc, local.data(), loff, h_mat_.data(), foff);
    reserve(orig_, static_cast<std::size_t>(std::max<long long>(1, mat_total)), mem, "the exact solver's leaf matrices");
    GPUDM_CUDA_CHECK(cudaMemcpyAsync(mat_.data(), h_mat_.data(), static_cast<std::size_t>(mat_total) * sizeof(double), cudaMemcpyHostToDevice, s));
    GPUDM_CUDA_CHECK(cudaMemcpyAsync(orig_.data(), mat_.data(), static_cast<std::size_t>(mat_total) * sizeof(double), cudaMemcpyDeviceToDevice, s));
    launch(ExactMode::kGiven);
  } else {
    launch(ExactMode::kSolve);
  }
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_out_.data(), dout, out_bytes, cudaMemcpyDeviceToHost, s));
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  ++launches_;
  const unsigned char* ob = h_out_.data();
  for (std::size_t i = 0; i < J; ++i) {
    const Leaf& l = leaves[first + i];
    long long found = 0;
    std::memcpy(&found, ob + out_found + i * sizeof(long long), sizeof found);
    GPUDM_REQUIRE(found == l.rows, "gmt/cuda: the exact solver found " + std::to_string(found) + " rows in a leaf of " +
                                       std::to_string(l.rows) + " (internal error)");
    int rank = 0;
    double sse = 0.0;
    std::memcpy(&rank, ob + out_rank + i * sizeof(int), sizeof rank);
    std::memcpy(&sse, ob + out_sse + i * sizeof(double), sizeof sse);
    const double* coef = reinterpret_cast<const double*>(ob + out_coef) + i * static_cast<std::size_t>(ld);
    ::gpudm::gmt::set_leaf_fit(*l.tree, l.node, coef, rank);
    l.tree->node(l.node).stats.sse = sse;
    ++batched_;
  }
}

// ---- the exact solver of one leaf ----------------------------------------------------------------

void ExactLeaf::solve(Tree& tree, int leaf_node, long long rows_expected) {
  const cudaStream_t s = c_.stream;
  MemoryGuard& mem = *c_.memory;
  const ::gpudm::gmt::EvalOptions& o = *c_.options;
  std::vector<PackedNode> nodes;
  const int target = pack_tree(tree, leaf_node, nodes);
  const auto a = tree.attrs(leaf_node);
  const std::vector<int> attrs(a.begin(), a.end());
  const int k = static_cast<int>(attrs.size());
  const long long n = static_cast<long long>(c_.data.rows);
  reserve(nodes_, nodes.size() * sizeof(PackedNode), mem, "the exact solver's tree");
  reserve(rows_, static_cast<std::size_t>(std::max<long long>(1, rows_expected)), mem, "the exact solver's rows");
  reserve(n_sel_, 1, mem, "the exact solver's row count");
  reserve(attrs_, static_cast<std::size_t>(std::max(1, k)), mem, "the exact solver's attributes");
  reserve(coef_, static_cast<std::size_t>(k + 1), mem, "the exact solver's coefficients");
  reserve(sse_, 1, mem, "the exact solver's SSE");
  reserve(h_n_, 1);
  reserve(h_sse_, 1);
  GPUDM_CUDA_CHECK(cudaMemcpyAsync(nodes_.data(), nodes.data(), nodes.size() * sizeof(PackedNode), cudaMemcpyHostToDevice, s));
  if (k > 0) GPUDM_CUDA_CHECK(cudaMemcpyAsync(attrs_.data(), attrs.data(), attrs.size() * sizeof(int), cudaMemcpyHostToDevice, s));
  const RoutesTo pred{reinterpret_cast<const PackedNode*>(nodes_.data()), c_.data.features, static_cast<long long>(c_.data.padded_rows), target};
  thrust::counting_iterator<int> first(0);
  std::size_t temp = 0;
  GPUDM_CUDA_CHECK(cub::DeviceSelect::If(nullptr, temp, first, rows_.data(), n_sel_.data(), static_cast<int>(n), pred, s));
  reserve(temp_, std::max<std::size_t>(temp, 1), mem, "the exact solver's selection");
  GPUDM_CUDA_CHECK(cub::DeviceSelect::If(temp_.data(), temp, first, rows_.data(), n_sel_.data(), static_cast<int>(n), pred, s));
  n_sel_.download_async(h_n_.data(), 1, s);
  GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
  const long long found = h_n_[0];
  auto gather = [&](long long rows) {  // [1, x_a..., y] of this device's `rows` selected rows into mat_ (ld rows)
    if (rows <= 0) return;
    const long long work = rows * (k + 2);
    const int grid = static_cast<int>(std::min<long long>(4096, (work + FusedPolicy::kAuxBlock - 1) / FusedPolicy::kAuxBlock));
    fused_gather_kernel<<<std::max(1, grid), FusedPolicy::kAuxBlock, 0, s>>>(c_.data, rows_.data(), rows, attrs_.data(), k, mat_.data());
    GPUDM_CUDA_CHECK(cudaGetLastError());
  };
  const long long m = c_.split() ? rows_expected : found;
  if (c_.split()) {  // this rank's rows gathered, the ranks' rows stacked (rank order: row order), the same solve on every rank
    GPUDM_REQUIRE(found <= rows_expected, "gmt/cuda: the exact solver found " + std::to_string(found) + " rows of a leaf of " +
                                              std::to_string(rows_expected) + " on this rank (internal error)");
    const std::size_t cells = static_cast<std::size_t>(std::max<long long>(1, rows_expected)) * static_cast<std::size_t>(k + 2);
    reserve(mat_, cells, mem, "the exact solver's leaf matrix");
    gather(found);
    reserve(h_mat_, 2 * cells);
    if (found > 0)
      GPUDM_CUDA_CHECK(cudaMemcpyAsync(h_mat_.data() + cells, mat_.data(), static_cast<std::size_t>(found * (k + 2)) * sizeof(double),
                                       cudaMemcpyDeviceToHost, s));
    GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
    stack_matrices(*c_.comm, {found}, {rows_expected}, {k + 2}, h_mat_.data() + cells, {0}, h_mat_.data(), {0});
    if (m > 0)
      GPUDM_CUDA_CHECK(cudaMemcpyAsync(mat_.data(), h_mat_.data(), static_cast<std::size_t>(m * (k + 2)) * sizeof(double), cudaMemcpyHostToDevice, s));
  } else {
    GPUDM_REQUIRE(m == rows_expected, "gmt/cuda: the exact solver found " + std::to_string(m) + " rows in a leaf of " +
                                          std::to_string(rows_expected) + " (internal error)");
  }
  std::vector<double> beta(static_cast<std::size_t>(k + 1), 0.0);
  int rank = 0;
  double sse = 0.0;
  if (m > 0) {
    if (!c_.split()) {
      reserve(mat_, static_cast<std::size_t>(m) * static_cast<std::size_t>(k + 2), mem, "the exact solver's leaf matrix");
      gather(m);
    }
    rank = c_.solver->solve<double>(mat_.data(), m, k + 1, o.rank_tol, rank_rule_max_params(o, m), beta.data());
    GPUDM_CUDA_CHECK(cudaMemcpyAsync(coef_.data(), beta.data(), beta.size() * sizeof(double), cudaMemcpyHostToDevice, s));
    fused_residual_kernel<<<1, FusedPolicy::kAuxBlock, 0, s>>>(mat_.data(), m, k, coef_.data(), sse_.data());
    GPUDM_CUDA_CHECK(cudaGetLastError());
    sse_.download_async(h_sse_.data(), 1, s);
    GPUDM_CUDA_CHECK(cudaStreamSynchronize(s));
    sse = h_sse_[0];
  }
  ::gpudm::gmt::set_leaf_fit(tree, leaf_node, beta.data(), rank);
  tree.node(leaf_node).stats.sse = sse;
  ++solved_;
}

}  // namespace gpudm::backend::cuda::gmt_cuda
