// The fast path's batch on the host: the device's block of rows (RowBlock), the packed trees
// (pack), the buffers sized for them (ensure_capacity), the upload's view (write_view) and the
// download's (attach_outputs).
#include <algorithm>
#include <cstring>
#include <string>

#include "algorithms/core/host_workers.hpp"
#include "algorithms/core/error.hpp"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/fast_detail.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

namespace ls = ::gpudm::gmt::leafstats;
using ::gpudm::gmt::Tree;
using ::gpudm::gmt::TreeNode;
using namespace fast_detail;

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

// The batch's flat arrays, tree by tree in batch order (the layout FusedView describes), the
// same arrays a serial pass in tree order writes, in one parallel pass over the trees' nodes. A tree's node and leaf offsets follow from the trees'
// sizes alone (a tree of n nodes has (n + 1) / 2 leaves: every test has two children), so each
// task writes its tree's packed nodes and per-leaf entries straight into place; its stat leaves
// (the leaves to fit: a few per tree) go to the tree's own part, and a serial step then gives them
// their batch-wide offsets. (One pass: a pass for the trees' sizes, then one for their entries,
// cost Elnino's `flattening` 0.103 ms per iteration against 0.077, the same upload: perf-notes-gmt.md.)
void FastPath::pack(const ::gpudm::gmt::EvalBatch& batch) {
  Host& h = *h_;
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
  reserve(h_in_, nodes_offset(h.B) + bytes_of<PackedNode>(h.n_nodes));
  PackedNode* packed = reinterpret_cast<PackedNode*>(h_in_.data() + nodes_offset(h.B));
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
  ensure_capacity();
}

bool FastPath::ensure_capacity() {
  Host& h = *h_;
  MemoryGuard& mem = *c_.memory;
  std::size_t& in_bytes = in_bytes_;
  std::size_t& out_bytes = out_bytes_;
  // input: the view, then the arrays
  in_bytes = nodes_offset(h.B) + bytes_of<PackedNode>(h.n_nodes) + bytes_of<int>(h.B) + bytes_of<int>(h.L) + 4 * bytes_of<int>(h.S) + 2 * bytes_of<long long>(h.S) +
              bytes_of<int>(h.A) + bytes_of<double>(h.coef_in.size());
  out_bytes = bytes_of<LeafOut>(h.L) + bytes_of<StatOut>(h.S) + bytes_of<double>(static_cast<std::size_t>(h.stat_total)) +
               bytes_of<double>(static_cast<std::size_t>(h.coef_total)) + bytes_of<int>(static_cast<std::size_t>(h.S) * h.stray_cap);
  const std::size_t parts = static_cast<std::size_t>(chunks_) * FusedPolicy::kWarps;  // a partial per (chunk, warp)
  // The device buffers, each with the size this call needs (grow-only). f(buffer, elements, what).
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
  bool grew = false;
  device_buffers([&](auto& b, std::size_t n, const char* what) { grew |= reserve(b, n, mem, what); });
  reserve(h_in_, in_bytes, nodes_offset(h.B) + bytes_of<PackedNode>(h.n_nodes));  // (pack wrote the nodes: kept)
  reserve(h_out_, out_bytes);
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

void FastPath::write_view() {
  Host& h = *h_;
  unsigned char* hb = h_in_.data();
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

void FastPath::attach_outputs() {
  Host& h = *h_;
  const unsigned char* ob = h_out_.data();
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

}  // namespace gpudm::backend::cuda::gmt_cuda
