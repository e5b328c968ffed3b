// The fast path's exact solvers: a call's flagged leaves batched (ExactBatch, exact_batch.cuh's
// kernels), and one leaf at a time through cuSOLVER (ExactLeaf) for leaves too wide or too large.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/core/comm.hpp"
#include "algorithms/gmt/eval_steps.hpp"
#include "algorithms/gmt/leaf_stats.hpp"
#include "algorithms/core/error.hpp"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/fast_detail.cuh"
#include "backends/cuda/gmt/exact_batch.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

namespace ls = ::gpudm::gmt::leafstats;
using ::gpudm::gmt::Tree;
using ::gpudm::gmt::TreeNode;
using namespace fast_detail;

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
  return ::gpudm::gmt::leafstats::max_leaf_params(m, o.rows_per_param);
}

// A rows split's leaf matrices: every rank's rows of leaf j (m_loc[j] x nc[j],
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
