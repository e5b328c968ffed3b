#include "algorithms/gmt/eval_steps.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/core/rng.hpp"

namespace gpudm {
namespace gmt {

namespace {
std::uint64_t node_hash(std::uint64_t salt, std::uint64_t node) {
  std::uint64_t s = salt ^ (0x9E3779B97F4A7C15ull * (node + 1));
  return splitmix64(s);
}
// Ties in the dipole search go to the smaller row id so every merge order gives the same pair.
bool lower_target(const Dataset& d, std::int64_t a, std::int64_t b) {
  if (b < 0) return a >= 0;
  if (a < 0) return false;
  const float ya = d.target(static_cast<std::size_t>(a)), yb = d.target(static_cast<std::size_t>(b));
  return ya < yb || (ya == yb && a < b);
}
bool higher_target(const Dataset& d, std::int64_t a, std::int64_t b) {
  if (b < 0) return a >= 0;
  if (a < 0) return false;
  const float ya = d.target(static_cast<std::size_t>(a)), yb = d.target(static_cast<std::size_t>(b));
  return ya > yb || (ya == yb && a < b);
}
}  // namespace

void householder_qr(double* a, std::int64_t m, int n, std::int64_t lda) {
  const std::int64_t steps = std::min<std::int64_t>(m, n);
  for (std::int64_t j = 0; j < steps; ++j) {
    double* col = a + j * lda;
    double norm2 = 0.0;
    for (std::int64_t i = j; i < m; ++i) norm2 += col[i] * col[i];
    if (norm2 == 0.0) continue;  // zero column: H = I
    const double norm = std::sqrt(norm2);
    const double x0 = col[j];
    const double alpha = x0 > 0 ? -norm : norm;
    const double v0 = x0 - alpha;
    const double vnorm2 = norm2 - x0 * x0 + v0 * v0;
    if (vnorm2 == 0.0) continue;
    col[j] = v0;  // v stored in place temporarily (v = col[j..m))
    for (int k = static_cast<int>(j) + 1; k < n; ++k) {
      double* ck = a + k * lda;
      double s = 0.0;
      for (std::int64_t i = j; i < m; ++i) s += col[i] * ck[i];
      const double f = 2.0 * s / vnorm2;
      for (std::int64_t i = j; i < m; ++i) ck[i] -= f * col[i];
    }
    col[j] = alpha;
    for (std::int64_t i = j + 1; i < m; ++i) col[i] = 0.0;
  }
}

void evaluate_in_order(EvalWork& work, const Dataset& data, const FlatTree& tree, const EvalOptions& opt,
                       EvalOutput& out, PhaseTimer& timer) {
  { auto s = timer.scope("transfers"); work.begin(data, tree, opt, out); }
  {
    auto s = timer.scope("redistribute");
    for (int c = 0; c < work.n_chunks(); ++c) work.redistribute_chunk(c);
  }
  {
    auto s = timer.scope("separate");
    work.separate_offsets();
    for (int c = 0; c < work.n_chunks(); ++c) work.separate_chunk(c);
  }
  {
    auto s = timer.scope("reorganize");
    work.reorganize_layout();
    for (int t = 0; t < work.n_qr_tasks(); ++t) work.reorganize_block(t);
  }
  {
    auto s = timer.scope("calc_models");
    for (int t = 0; t < work.n_qr_tasks(); ++t) work.qr_block(t);
    for (int l = 0; l < work.n_leaves(); ++l) work.solve_leaf(l);
  }
  {
    auto s = timer.scope("estimate_errors");
    for (int c = 0; c < work.n_chunks(); ++c) work.estimate_chunk(c);
  }
  {
    auto s = timer.scope("reduction");
    for (int l = 0; l < work.n_leaves(); ++l) work.reduce_leaf(l);
    work.reduce_tree();
  }
}

int least_squares_rank_rule(double* s, std::int64_t rows, int p, double rank_tol, double* coef, double* sse,
                            int max_params) {
  const int nc = p + 1;
  std::vector<double> orig(static_cast<std::size_t>(p), 0.0);
  for (int j = 0; j < p; ++j) {
    double n2 = 0.0;
    for (std::int64_t i = 0; i < rows; ++i) n2 += s[j * rows + i] * s[j * rows + i];
    orig[static_cast<std::size_t>(j)] = std::sqrt(n2);
  }
  std::vector<std::int64_t> piv(static_cast<std::size_t>(p), -1);
  std::int64_t r = 0;
  for (int j = 0; j < p; ++j) {
    double* col = s + j * rows;
    double norm2 = 0.0;
    for (std::int64_t i = r; i < rows; ++i) norm2 += col[i] * col[i];
    const double norm = std::sqrt(norm2);
    if (r >= rows || r >= max_params || norm == 0.0 || norm <= rank_tol * orig[static_cast<std::size_t>(j)])
      continue;  // dropped
    const double x0 = col[r];
    const double alpha = x0 > 0 ? -norm : norm;
    const double v0 = x0 - alpha;
    const double vnorm2 = norm2 - x0 * x0 + v0 * v0;
    col[r] = v0;
    for (int k = j + 1; k < nc; ++k) {
      double* ck = s + k * rows;
      double d = 0.0;
      for (std::int64_t i = r; i < rows; ++i) d += col[i] * ck[i];
      const double f = 2.0 * d / vnorm2;
      for (std::int64_t i = r; i < rows; ++i) ck[i] -= f * col[i];
    }
    col[r] = alpha;
    for (std::int64_t i = r + 1; i < rows; ++i) col[i] = 0.0;
    piv[static_cast<std::size_t>(j)] = r;
    ++r;
  }
  const double* y = s + static_cast<std::int64_t>(p) * rows;
  for (int j = p - 1; j >= 0; --j) {
    const std::int64_t pr = piv[static_cast<std::size_t>(j)];
    if (pr < 0) {
      coef[j] = 0.0;
      continue;
    }
    double acc = y[pr];
    for (int k = j + 1; k < p; ++k)
      if (piv[static_cast<std::size_t>(k)] >= 0) acc -= s[k * rows + pr] * coef[k];
    coef[j] = acc / s[j * rows + pr];
  }
  double e = 0.0;
  for (std::int64_t i = r; i < rows; ++i) e += y[i] * y[i];
  if (sse) *sse = e;
  return static_cast<int>(r);
}

void EvalWork::begin(const Dataset& data, const FlatTree& tree, const EvalOptions& opt, EvalOutput& out) {
  data_ = &data;
  tree_ = &tree;
  opt_ = opt;
  out_ = &out;
  n_ = data.rows();
  cols_ = tree.cols;
  GPUDM_REQUIRE(cols_ == static_cast<int>(data.cols()), "gmt: flat tree has " + std::to_string(cols_) +
                                                            " attributes, dataset '" + data.name() + "' has " +
                                                            std::to_string(data.cols()));
  GPUDM_REQUIRE(opt.chunk_rows > 0 && opt.qr_block_rows > 0, "gmt: chunk_rows and qr_block_rows must be positive");
  n_chunks_ = static_cast<int>((n_ + static_cast<std::size_t>(opt.chunk_rows) - 1) / static_cast<std::size_t>(opt.chunk_rows));
  n_leaves_ = tree.n_leaves();
  const std::size_t cl = static_cast<std::size_t>(n_chunks_) * static_cast<std::size_t>(n_leaves_);
  leaf_of_.resize(n_);
  chunk_counts_.assign(cl, 0);
  leaf_count_.assign(static_cast<std::size_t>(n_leaves_), 0);
  leaf_begin_.assign(static_cast<std::size_t>(n_leaves_), 0);
  order_.resize(n_);
  part_sse_.assign(cl, 0.0);
  part_sae_.assign(cl, 0.0);
  part_lo_.assign(cl, -1);
  part_hi_.assign(cl, -1);
  out.nodes.assign(static_cast<std::size_t>(tree.n_nodes()), NodeStats{});
  out.coef.assign(static_cast<std::size_t>(n_leaves_) * static_cast<std::size_t>(cols_ + 1), 0.0);
  out.rank.assign(static_cast<std::size_t>(n_leaves_), -1);
  leaf_attrs_.assign(static_cast<std::size_t>(n_leaves_), {});
  for (int l = 0; l < n_leaves_; ++l) {
    auto& a = leaf_attrs_[static_cast<std::size_t>(l)];
    for (int c = 0; c < cols_; ++c)
      if (tree.mask[static_cast<std::size_t>(l) * cols_ + c]) a.push_back(c);
  }
}

void EvalWork::redistribute_chunk(int c) {
  const FlatTree& t = *tree_;
  const std::size_t r0 = static_cast<std::size_t>(c) * static_cast<std::size_t>(opt_.chunk_rows);
  const std::size_t r1 = std::min(n_, r0 + static_cast<std::size_t>(opt_.chunk_rows));
  const std::int32_t* attr = t.attr.data();
  const float* thr = t.threshold.data();
  const std::size_t ld = data_->padded_rows();
  const float* feat = data_->features().data();
  thread_local std::vector<std::int64_t> counts;  // the chunk's counts in this thread's locals (as estimate_chunk)
  counts.assign(static_cast<std::size_t>(n_leaves_), 0);
  for (std::size_t r = r0; r < r1; ++r) {
    int i = 0;
    while (attr[i] >= 0) {
      const float x = feat[static_cast<std::size_t>(attr[i]) * ld + r];
      i = 2 * i + 2 - static_cast<int>(x <= thr[i]);  // left when x <= threshold, NaN right; no branch to mispredict
    }
    const std::int32_t slot = t.leaf_slot[static_cast<std::size_t>(i)];
    leaf_of_[r] = slot;
    ++counts[static_cast<std::size_t>(slot)];
  }
  std::copy(counts.begin(), counts.end(), chunk_counts_.begin() + static_cast<std::ptrdiff_t>(c) * n_leaves_);
}

void EvalWork::separate_offsets() {
  std::int64_t pos = 0;
  for (int l = 0; l < n_leaves_; ++l) {
    leaf_begin_[static_cast<std::size_t>(l)] = pos;
    std::int64_t total = 0;
    for (int c = 0; c < n_chunks_; ++c) {
      std::int64_t& v = chunk_counts_[static_cast<std::size_t>(c) * n_leaves_ + l];
      const std::int64_t cnt = v;
      v = pos + total;  // becomes chunk c's write offset into leaf l's bucket
      total += cnt;
    }
    leaf_count_[static_cast<std::size_t>(l)] = total;
    pos += total;
  }
}

void EvalWork::separate_chunk(int c) {
  const std::size_t r0 = static_cast<std::size_t>(c) * static_cast<std::size_t>(opt_.chunk_rows);
  const std::size_t r1 = std::min(n_, r0 + static_cast<std::size_t>(opt_.chunk_rows));
  const std::int64_t* first = chunk_counts_.data() + static_cast<std::size_t>(c) * n_leaves_;
  thread_local std::vector<std::int64_t> off;  // this chunk's write positions, advanced in locals
  off.assign(first, first + n_leaves_);
  for (std::size_t r = r0; r < r1; ++r) order_[static_cast<std::size_t>(off[static_cast<std::size_t>(leaf_of_[r])]++)] = static_cast<std::int64_t>(r);
}

void EvalWork::reorganize_layout() {
  tasks_.clear();
  mat_offset_.assign(static_cast<std::size_t>(n_leaves_), -1);
  leaf_task0_.assign(static_cast<std::size_t>(n_leaves_), 0);
  leaf_ntasks_.assign(static_cast<std::size_t>(n_leaves_), 0);
  std::int64_t mat_size = 0, r_size = 0;
  for (int l = 0; l < n_leaves_; ++l) {
    const std::int64_t m = leaf_count_[static_cast<std::size_t>(l)];
    if (!tree_->refit[static_cast<std::size_t>(l)] || m == 0) continue;
    const int width = static_cast<int>(leaf_attrs_[static_cast<std::size_t>(l)].size()) + 2;  // 1, attrs, y
    mat_offset_[static_cast<std::size_t>(l)] = mat_size;
    mat_size += m * width;
    leaf_task0_[static_cast<std::size_t>(l)] = static_cast<int>(tasks_.size());
    for (std::int64_t r0 = 0; r0 < m; r0 += opt_.qr_block_rows) {
      QrTask t;
      t.leaf = l;
      t.row0 = r0;
      t.rows = std::min<std::int64_t>(opt_.qr_block_rows, m - r0);
      t.r_rows = static_cast<int>(std::min<std::int64_t>(t.rows, width));
      t.r_offset = r_size;
      r_size += static_cast<std::int64_t>(t.r_rows) * width;
      tasks_.push_back(t);
    }
    leaf_ntasks_[static_cast<std::size_t>(l)] = static_cast<int>(tasks_.size()) - leaf_task0_[static_cast<std::size_t>(l)];
  }
  if (mat_.size() < static_cast<std::size_t>(mat_size)) mat_.resize(static_cast<std::size_t>(mat_size));
  if (rblocks_.size() < static_cast<std::size_t>(r_size)) rblocks_.resize(static_cast<std::size_t>(r_size));
}

void EvalWork::reorganize_block(int ti) {
  const QrTask& t = tasks_[static_cast<std::size_t>(ti)];
  const auto l = static_cast<std::size_t>(t.leaf);
  const std::int64_t m = leaf_count_[l];
  double* a = mat_.data() + mat_offset_[l];
  const std::int64_t* rows = order_.data() + leaf_begin_[l];
  const auto& attrs = leaf_attrs_[l];
  const std::int64_t e = t.row0 + t.rows;
  for (std::int64_t i = t.row0; i < e; ++i) a[i] = 1.0;
  for (std::size_t k = 0; k < attrs.size(); ++k) {
    const float* col = data_->column(static_cast<std::size_t>(attrs[k]));
    double* dst = a + static_cast<std::int64_t>(k + 1) * m;
    for (std::int64_t i = t.row0; i < e; ++i) dst[i] = col[rows[i]];
  }
  double* y = a + static_cast<std::int64_t>(attrs.size() + 1) * m;
  for (std::int64_t i = t.row0; i < e; ++i) y[i] = data_->target(static_cast<std::size_t>(rows[i]));
}

void EvalWork::qr_block(int ti) {
  const QrTask& t = tasks_[static_cast<std::size_t>(ti)];
  const auto l = static_cast<std::size_t>(t.leaf);
  const std::int64_t m = leaf_count_[l];
  const int width = static_cast<int>(leaf_attrs_[l].size()) + 2;
  double* a = mat_.data() + mat_offset_[l] + t.row0;
  householder_qr(a, t.rows, width, m);
  // R rows go to the stack, column-major with ld = r_rows.
  double* r = rblocks_.data() + t.r_offset;
  for (int j = 0; j < width; ++j)
    for (int i = 0; i < t.r_rows; ++i) r[static_cast<std::int64_t>(j) * t.r_rows + i] = (i <= j) ? a[static_cast<std::int64_t>(j) * m + i] : 0.0;
}

void EvalWork::solve_leaf(int li) {
  const auto l = static_cast<std::size_t>(li);
  double* coef = out_->coef.data() + l * static_cast<std::size_t>(cols_ + 1);
  if (!tree_->refit[l]) {
    std::copy_n(tree_->coef.data() + l * static_cast<std::size_t>(cols_ + 1), cols_ + 1, coef);
    return;
  }
  std::fill_n(coef, cols_ + 1, 0.0);
  if (leaf_count_[l] == 0) {
    out_->rank[l] = 0;
    return;
  }
  const auto& attrs = leaf_attrs_[l];
  const int p = static_cast<int>(attrs.size()) + 1;
  const int width = p + 1;
  std::int64_t rows = 0;
  for (int k = 0; k < leaf_ntasks_[l]; ++k) rows += tasks_[static_cast<std::size_t>(leaf_task0_[l] + k)].r_rows;
  std::vector<double> s(static_cast<std::size_t>(rows * width));
  std::int64_t at = 0;
  for (int k = 0; k < leaf_ntasks_[l]; ++k) {
    const QrTask& t = tasks_[static_cast<std::size_t>(leaf_task0_[l] + k)];
    const double* r = rblocks_.data() + t.r_offset;
    for (int j = 0; j < width; ++j)
      for (int i = 0; i < t.r_rows; ++i) s[static_cast<std::size_t>(j * rows + at + i)] = r[static_cast<std::int64_t>(j) * t.r_rows + i];
    at += t.r_rows;
  }
  std::vector<double> c(static_cast<std::size_t>(p));
  double sse = 0.0;
  int max_params = std::numeric_limits<int>::max();
  if (opt_.rows_per_param > 0)
    max_params = static_cast<int>(std::max<double>(1.0, std::floor(static_cast<double>(leaf_count_[l]) / opt_.rows_per_param)));
  out_->rank[l] = least_squares_rank_rule(s.data(), rows, p, opt_.rank_tol, c.data(), &sse, max_params);
  coef[0] = c[0];
  for (std::size_t k = 0; k < attrs.size(); ++k) coef[attrs[k] + 1] = c[k + 1];
}

void EvalWork::estimate_chunk(int c) {
  const std::size_t r0 = static_cast<std::size_t>(c) * static_cast<std::size_t>(opt_.chunk_rows);
  const std::size_t r1 = std::min(n_, r0 + static_cast<std::size_t>(opt_.chunk_rows));
  const std::size_t base = static_cast<std::size_t>(c) * n_leaves_;
  const std::size_t ld = data_->padded_rows();
  const float* feat = data_->features().data();
  const float* y = data_->targets().data();
  const double* coef = out_->coef.data();
  const std::size_t w = static_cast<std::size_t>(cols_ + 1);
  // The chunk's partials live in this thread's locals while its rows are summed (in row order,
  // from 0, as before: the same sums bit for bit) and are stored once at the end: the shared
  // arrays see one write per (chunk, leaf) instead of a read-modify-write per row.
  thread_local std::vector<double> sse, sae;
  thread_local std::vector<std::int64_t> lo, hi;
  const auto L = static_cast<std::size_t>(n_leaves_);
  sse.assign(L, 0.0);
  sae.assign(L, 0.0);
  lo.assign(L, -1);
  hi.assign(L, -1);
  for (std::size_t r = r0; r < r1; ++r) {
    const auto l = static_cast<std::size_t>(leaf_of_[r]);
    const double* cf = coef + l * w;
    double pred = cf[0];
    for (int a : leaf_attrs_[l]) pred += cf[a + 1] * static_cast<double>(feat[static_cast<std::size_t>(a) * ld + r]);
    const double e = static_cast<double>(y[r]) - pred;
    sse[l] += e * e;
    sae[l] += std::fabs(e);
    auto ri = static_cast<std::int64_t>(r);
    if (lower_target(*data_, ri, lo[l])) lo[l] = ri;
    if (higher_target(*data_, ri, hi[l])) hi[l] = ri;
  }
  std::copy(sse.begin(), sse.end(), part_sse_.begin() + static_cast<std::ptrdiff_t>(base));
  std::copy(sae.begin(), sae.end(), part_sae_.begin() + static_cast<std::ptrdiff_t>(base));
  std::copy(lo.begin(), lo.end(), part_lo_.begin() + static_cast<std::ptrdiff_t>(base));
  std::copy(hi.begin(), hi.end(), part_hi_.begin() + static_cast<std::ptrdiff_t>(base));
}

void EvalWork::reduce_leaf(int li) {
  const auto l = static_cast<std::size_t>(li);
  const int node = tree_->leaf_node[l];
  NodeStats& s = out_->nodes[static_cast<std::size_t>(node)];
  s.count = leaf_count_[l];
  for (int c = 0; c < n_chunks_; ++c) {
    const std::size_t k = static_cast<std::size_t>(c) * n_leaves_ + l;
    s.sse += part_sse_[k];
    s.sae += part_sae_[k];
    if (lower_target(*data_, part_lo_[k], s.dipole_lo)) s.dipole_lo = part_lo_[k];
    if (higher_target(*data_, part_hi_[k], s.dipole_hi)) s.dipole_hi = part_hi_[k];
  }
  if (s.count > 0) {
    const std::uint64_t h = node_hash(tree_->salt, static_cast<std::uint64_t>(node));
    s.dipole_rand = order_[static_cast<std::size_t>(leaf_begin_[l] + static_cast<std::int64_t>(h % static_cast<std::uint64_t>(s.count)))];
  }
}

void EvalWork::reduce_tree() {
  const FlatTree& t = *tree_;
  auto& nodes = out_->nodes;
  for (int i = t.n_nodes() - 1; i >= 0; --i) {
    if (t.attr[static_cast<std::size_t>(i)] < 0) continue;  // leaf or absent
    NodeStats& p = nodes[static_cast<std::size_t>(i)];
    const NodeStats& a = nodes[static_cast<std::size_t>(2 * i + 1)];
    const NodeStats& b = nodes[static_cast<std::size_t>(2 * i + 2)];
    p.count = a.count + b.count;
    p.sse = a.sse + b.sse;
    p.sae = a.sae + b.sae;
    p.dipole_lo = lower_target(*data_, b.dipole_lo, a.dipole_lo) ? b.dipole_lo : a.dipole_lo;
    p.dipole_hi = higher_target(*data_, b.dipole_hi, a.dipole_hi) ? b.dipole_hi : a.dipole_hi;
    // The random row comes from a child picked in proportion to its rows, so dipole_rand is a
    // uniformly drawn row of the node (a fair coin would favour rows of small subtrees).
    p.dipole_rand = -1;
    if (p.count > 0) {
      const std::uint64_t h = node_hash(t.salt, static_cast<std::uint64_t>(i));
      const bool pick_left = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(p.count)) < a.count;
      p.dipole_rand = pick_left ? a.dipole_rand : b.dipole_rand;
    }
  }
}

}  // namespace gmt
}  // namespace gpudm
