#include "algorithms/gmt/eval_steps.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "algorithms/core/stopwatch.hpp"
#include "algorithms/gmt/leaf_stats.hpp"

namespace gpudm {
namespace gmt {

namespace ls = leafstats;

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

void set_leaf_fit(Tree& tree, int node, const double* coef, int rank) {
  const auto a = tree.attrs(node);
  // Per-thread scratch: this runs for every refit leaf of every evaluated tree (the GPU path's
  // host finish calls it from its host threads), and two allocations each were visible there.
  thread_local std::vector<int> kept;
  thread_local std::vector<double> c;
  kept.clear();
  c.assign(1, coef[0]);
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (coef[k + 1] == 0.0) continue;
    kept.push_back(a[k]);
    c.push_back(coef[k + 1]);
  }
  tree.set_fit(node, kept, c, rank);
}

void propagate_stats_from_keys(Tree& tree, std::uint64_t* klo, std::uint64_t* khi, std::uint64_t* krn) {
  // An internal node's keys are the min / max of its children's (children follow their parent:
  // walk backwards); its rows are the keys' rows.
  for (int i = tree.size() - 1; i >= 0; --i) {
    TreeNode& p = tree.node(i);
    if (p.is_leaf()) continue;
    const auto I = static_cast<std::size_t>(i);
    const auto L = static_cast<std::size_t>(p.left), R = L + 1;
    const NodeStats& a = tree.node(p.left).stats;
    const NodeStats& b = tree.node(p.left + 1).stats;
    NodeStats s;
    s.count = a.count + b.count;
    s.sse = a.sse + b.sse;
    s.sae = a.sae + b.sae;
    klo[I] = std::min(klo[L], klo[R]);
    khi[I] = std::max(khi[L], khi[R]);
    krn[I] = std::min(krn[L], krn[R]);
    s.dipole_lo = ls::lo_row(klo[I]);
    s.dipole_hi = ls::hi_row(khi[I]);
    s.dipole_rand = ls::rand_row(krn[I]);
    p.stats = s;
  }
}

void propagate_stats(Tree& tree, const Dataset& data, std::uint64_t salt) {
  const float* y = data.targets().data();
  // Each node's three dipole keys, computed once: a leaf's from its rows, an internal node's from
  // its children's. Hashing and looking up the children's rows again at every internal node
  // measured 8 % of a GPU run's host samples.
  thread_local std::vector<std::uint64_t> klo, khi, krn;
  const auto N = static_cast<std::size_t>(tree.size());
  klo.resize(N);
  khi.resize(N);
  krn.resize(N);
  for (std::size_t I = 0; I < N; ++I) {
    const TreeNode& p = tree.node(static_cast<int>(I));
    if (!p.is_leaf()) continue;
    const NodeStats& a = p.stats;
    klo[I] = a.dipole_lo < 0 ? ls::kNoLoKey : ls::lo_key(y[a.dipole_lo], static_cast<std::uint64_t>(a.dipole_lo));
    khi[I] = a.dipole_hi < 0 ? ls::kNoHiKey : ls::hi_key(y[a.dipole_hi], static_cast<std::uint64_t>(a.dipole_hi));
    krn[I] = a.dipole_rand < 0 ? ls::kNoLoKey : ls::dipole_key(salt, static_cast<std::uint64_t>(a.dipole_rand));
  }
  propagate_stats_from_keys(tree, klo.data(), khi.data(), krn.data());
}

ForEach for_each_in_order() {
  return [](int n, const std::function<void(int)>& body) {
    for (int i = 0; i < n; ++i) body(i);
  };
}

void EvalWork::begin(const Dataset& data, const Tree& tree, const EvalOptions& opt, std::uint64_t salt) {
  data_ = &data;
  tree_ = &tree;
  opt_ = opt;
  salt_ = salt;
  n_ = data.rows();
  cols_ = static_cast<int>(data.cols());
  GPUDM_REQUIRE(opt.chunk_rows > 0 && opt.qr_block_rows > 0, "gmt: chunk_rows and qr_block_rows must be positive");
  n_chunks_ = static_cast<int>((n_ + static_cast<std::size_t>(opt.chunk_rows) - 1) / static_cast<std::size_t>(opt.chunk_rows));
  std::tie(c_begin_, c_end_) = chunks_of(comm_ != nullptr ? comm_->rank() : 0);
  const int nn = tree.size();
  leaf_slot_.assign(static_cast<std::size_t>(nn), -1);
  leaf_node_.clear();
  refit_.clear();
  attr_begin_.assign(1, 0);
  attrs_.clear();
  for (int i = 0; i < nn; ++i) {
    const TreeNode& n = tree.node(i);
    if (!n.is_leaf()) continue;
    leaf_slot_[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(leaf_node_.size());
    leaf_node_.push_back(i);
    refit_.push_back(tree.leaf_needs_refit(i) ? 1 : 0);
    const auto a = tree.attrs(i);
    for (std::int32_t c : a) {
      GPUDM_REQUIRE(c >= 0 && c < cols_, "gmt: leaf model attribute " + std::to_string(c) + " out of range");
      attrs_.push_back(c);
    }
    attr_begin_.push_back(static_cast<std::int32_t>(attrs_.size()));
  }
  for (int i = 0; i < nn; ++i) {
    const TreeNode& n = tree.node(i);
    GPUDM_REQUIRE(n.is_leaf() || (n.attr < cols_ && n.left > i && n.left + 1 < nn),
                  "gmt: tree node " + std::to_string(i) + " is malformed");
  }
  n_leaves_ = static_cast<int>(leaf_node_.size());
  coef_.assign(attrs_.size() + static_cast<std::size_t>(n_leaves_), 0.0);
  rank_.assign(static_cast<std::size_t>(n_leaves_), -1);
  for (int l = 0; l < n_leaves_; ++l) {
    if (refit_[static_cast<std::size_t>(l)]) continue;
    const auto c = tree.coef(leaf_node_[static_cast<std::size_t>(l)]);
    std::copy(c.begin(), c.end(), coef_of(l));
  }
  const std::size_t cl = static_cast<std::size_t>(n_chunks_) * static_cast<std::size_t>(n_leaves_);
  leaf_of_.resize(n_);
  chunk_counts_.assign(cl, 0);
  leaf_count_.assign(static_cast<std::size_t>(n_leaves_), 0);
  leaf_begin_.assign(static_cast<std::size_t>(n_leaves_), 0);
  order_.resize(n_);
  part_sse_.assign(cl, 0.0);
  part_sae_.assign(cl, 0.0);
  part_lo_.assign(cl, ls::kNoLoKey);
  part_hi_.assign(cl, ls::kNoHiKey);
  part_rnd_.assign(cl, ls::kNoLoKey);
  leaf_stats_.assign(static_cast<std::size_t>(n_leaves_), NodeStats{});
}

void EvalWork::redistribute_chunk(int c) {
  const std::size_t r0 = static_cast<std::size_t>(c) * static_cast<std::size_t>(opt_.chunk_rows);
  const std::size_t r1 = std::min(n_, r0 + static_cast<std::size_t>(opt_.chunk_rows));
  const TreeNode* nodes = tree_->nodes().data();
  const std::size_t ld = data_->padded_rows();
  const float* feat = data_->features().data();
  thread_local std::vector<std::int64_t> counts;  // the chunk's counts in this thread's locals (as estimate_chunk)
  counts.assign(static_cast<std::size_t>(n_leaves_), 0);
  for (std::size_t r = r0; r < r1; ++r) {
    int i = 0;
    while (nodes[i].attr >= 0) {
      const float x = feat[static_cast<std::size_t>(nodes[i].attr) * ld + r];
      i = nodes[i].left + 1 - static_cast<int>(x <= nodes[i].threshold);  // left when x <= threshold, NaN right
    }
    const std::int32_t slot = leaf_slot_[static_cast<std::size_t>(i)];
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

void EvalWork::routed_counts(int min_rows, RoutedCounts& out) const {
  out.reset(tree_->size());
  for (int l = 0; l < n_leaves_; ++l) {
    const auto node = static_cast<std::size_t>(leaf_node_[static_cast<std::size_t>(l)]);
    const std::int64_t m = leaf_count_[static_cast<std::size_t>(l)];
    out.count[node] = m;
    if (m > 0 && m < min_rows) {
      out.small_begin[node] = static_cast<std::int32_t>(out.small_rows.size());
      const std::int64_t b = leaf_begin_[static_cast<std::size_t>(l)];
      out.small_rows.insert(out.small_rows.end(), order_.begin() + b, order_.begin() + b + m);
    }
  }
}

void EvalWork::reorganize_layout() {
  tasks_.clear();
  own_tasks_.clear();
  mat_offset_.assign(static_cast<std::size_t>(n_leaves_), -1);
  leaf_task0_.assign(static_cast<std::size_t>(n_leaves_), 0);
  leaf_ntasks_.assign(static_cast<std::size_t>(n_leaves_), 0);
  std::int64_t mat_size = 0, r_size = 0;
  for (int l = 0; l < n_leaves_; ++l) {
    const std::int64_t m = leaf_count_[static_cast<std::size_t>(l)];
    if (!refit_[static_cast<std::size_t>(l)] || m == 0) continue;
    const int width = attr_count(l) + 2;  // 1, attrs, y
    mat_offset_[static_cast<std::size_t>(l)] = mat_size;
    mat_size += m * width;
    leaf_task0_[static_cast<std::size_t>(l)] = static_cast<int>(tasks_.size());
    // The leaf's rows of each chunk (chunk_counts_ holds the chunks' write offsets into the leaf's
    // bucket), in blocks of at most qr_block_rows: a block never spans two chunks, so a rank holds
    // whole blocks and the stack of R factors is the same at any rank count.
    const std::int64_t lb = leaf_begin_[static_cast<std::size_t>(l)];
    for (int c = 0; c < n_chunks_; ++c) {
      const std::int64_t s0 = chunk_counts_[static_cast<std::size_t>(c) * n_leaves_ + l] - lb;
      const std::int64_t s1 = c + 1 < n_chunks_ ? chunk_counts_[static_cast<std::size_t>(c + 1) * n_leaves_ + l] - lb : m;
      for (std::int64_t r0 = s0; r0 < s1; r0 += opt_.qr_block_rows) {
        QrTask t;
        t.leaf = l;
        t.chunk = c;
        t.row0 = r0;
        t.rows = std::min<std::int64_t>(opt_.qr_block_rows, s1 - r0);
        t.r_rows = static_cast<int>(std::min<std::int64_t>(t.rows, width));
        t.r_offset = r_size;
        r_size += static_cast<std::int64_t>(t.r_rows) * width;
        if (c >= c_begin_ && c < c_end_) own_tasks_.push_back(static_cast<int>(tasks_.size()));
        tasks_.push_back(t);
      }
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
  const int na = attr_count(t.leaf);
  const std::int32_t* attrs = attrs_of(t.leaf);
  const std::int64_t e = t.row0 + t.rows;
  for (std::int64_t i = t.row0; i < e; ++i) a[i] = 1.0;
  for (int k = 0; k < na; ++k) {
    const float* col = data_->column(static_cast<std::size_t>(attrs[k]));
    double* dst = a + static_cast<std::int64_t>(k + 1) * m;
    for (std::int64_t i = t.row0; i < e; ++i) dst[i] = col[rows[i]];
  }
  double* y = a + static_cast<std::int64_t>(na + 1) * m;
  for (std::int64_t i = t.row0; i < e; ++i) y[i] = data_->target(static_cast<std::size_t>(rows[i]));
}

void EvalWork::qr_block(int ti) {
  const QrTask& t = tasks_[static_cast<std::size_t>(ti)];
  const auto l = static_cast<std::size_t>(t.leaf);
  const std::int64_t m = leaf_count_[l];
  const int width = attr_count(t.leaf) + 2;
  double* a = mat_.data() + mat_offset_[l] + t.row0;
  householder_qr(a, t.rows, width, m);
  // R rows go to the stack, column-major with ld = r_rows.
  double* r = rblocks_.data() + t.r_offset;
  for (int j = 0; j < width; ++j)
    for (int i = 0; i < t.r_rows; ++i) r[static_cast<std::int64_t>(j) * t.r_rows + i] = (i <= j) ? a[static_cast<std::int64_t>(j) * m + i] : 0.0;
}

void EvalWork::solve_leaf(int li) {
  const auto l = static_cast<std::size_t>(li);
  if (!refit_[l]) return;  // the model is the tree's (copied in begin)
  double* coef = coef_of(li);
  const int na = attr_count(li);
  std::fill_n(coef, na + 1, 0.0);
  if (leaf_count_[l] == 0) {
    rank_[l] = 0;
    return;
  }
  const int p = na + 1;
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
  double sse = 0.0;
  const int max_params = static_cast<int>(std::min<long long>(std::numeric_limits<int>::max(),
                                                                leafstats::max_leaf_params(leaf_count_[l], opt_.rows_per_param)));
  rank_[l] = least_squares_rank_rule(s.data(), rows, p, opt_.rank_tol, coef, &sse, max_params);
}

void EvalWork::estimate_chunk(int c) {
  const std::size_t r0 = static_cast<std::size_t>(c) * static_cast<std::size_t>(opt_.chunk_rows);
  const std::size_t r1 = std::min(n_, r0 + static_cast<std::size_t>(opt_.chunk_rows));
  const std::size_t base = static_cast<std::size_t>(c) * n_leaves_;
  const std::size_t ld = data_->padded_rows();
  const float* feat = data_->features().data();
  const float* y = data_->targets().data();
  // The chunk's partials live in this thread's locals while its rows are summed (in row order)
  // and are stored once at the end: the shared arrays see one write per (chunk, leaf).
  thread_local std::vector<double> sse, sae;
  thread_local std::vector<std::uint64_t> lo, hi, rnd;
  const auto L = static_cast<std::size_t>(n_leaves_);
  sse.assign(L, 0.0);
  sae.assign(L, 0.0);
  lo.assign(L, ls::kNoLoKey);
  hi.assign(L, ls::kNoHiKey);
  rnd.assign(L, ls::kNoLoKey);
  const std::uint32_t salt32 = ls::dipole_salt32(salt_);
  for (std::size_t r = r0; r < r1; ++r) {
    const int li = leaf_of_[r];
    const auto l = static_cast<std::size_t>(li);
    const double* cf = coef_.data() + attr_begin_[l] + l;
    const std::int32_t* a = attrs_of(li);
    const int na = attr_count(li);
    double pred = cf[0];
    for (int k = 0; k < na; ++k) pred += cf[k + 1] * static_cast<double>(feat[static_cast<std::size_t>(a[k]) * ld + r]);
    const double e = static_cast<double>(y[r]) - pred;
    sse[l] += e * e;
    sae[l] += std::fabs(e);
    const auto ru = static_cast<std::uint64_t>(r);
    lo[l] = std::min(lo[l], ls::lo_key(y[r], ru));
    hi[l] = std::max(hi[l], ls::hi_key(y[r], ru));
    rnd[l] = std::min(rnd[l], ls::dipole_key_s(salt32, ru));
  }
  std::copy(sse.begin(), sse.end(), part_sse_.begin() + static_cast<std::ptrdiff_t>(base));
  std::copy(sae.begin(), sae.end(), part_sae_.begin() + static_cast<std::ptrdiff_t>(base));
  std::copy(lo.begin(), lo.end(), part_lo_.begin() + static_cast<std::ptrdiff_t>(base));
  std::copy(hi.begin(), hi.end(), part_hi_.begin() + static_cast<std::ptrdiff_t>(base));
  std::copy(rnd.begin(), rnd.end(), part_rnd_.begin() + static_cast<std::ptrdiff_t>(base));
}

void EvalWork::reduce_leaf(int li) {
  const auto l = static_cast<std::size_t>(li);
  NodeStats& s = leaf_stats_[l];
  s = NodeStats{};
  s.count = leaf_count_[l];
  std::uint64_t lo = ls::kNoLoKey, hi = ls::kNoHiKey, rnd = ls::kNoLoKey;
  for (int c = 0; c < n_chunks_; ++c) {
    const std::size_t k = static_cast<std::size_t>(c) * n_leaves_ + l;
    s.sse += part_sse_[k];
    s.sae += part_sae_[k];
    lo = std::min(lo, part_lo_[k]);
    hi = std::max(hi, part_hi_[k]);
    rnd = std::min(rnd, part_rnd_[k]);
  }
  s.dipole_lo = ls::lo_row(lo);
  s.dipole_hi = ls::hi_row(hi);
  s.dipole_rand = ls::rand_row(rnd);
}

// ---- rows split over ranks ---------------------------------------------------------------------

std::pair<int, int> EvalWork::chunks_of(int r) const {
  if (comm_ == nullptr) return {0, n_chunks_};
  const auto [b, e] = shard(static_cast<std::size_t>(n_chunks_), r, comm_->size());
  return {static_cast<int>(b), static_cast<int>(e)};
}

namespace {
// Values as 32-bit words for Comm::gather_all, and back.
template <class T>
void put_words(std::vector<std::uint32_t>& w, const T* p, std::size_t n) {
  static_assert(sizeof(T) % 4 == 0, "whole words");
  const std::size_t at = w.size();
  w.resize(at + n * sizeof(T) / 4);
  if (n) std::memcpy(w.data() + at, p, n * sizeof(T));
}
template <class T>
void take_words(const std::vector<std::uint32_t>& w, std::size_t& at, T* p, std::size_t n) {
  const std::size_t words = n * sizeof(T) / 4;
  GPUDM_REQUIRE(at + words <= w.size(), "gmt: the ranks' combined parts do not add up (internal error)");
  if (n) std::memcpy(p, w.data() + at, n * sizeof(T));
  at += words;
}
}  // namespace

// Each combine step in two halves: put_* appends this rank's part (of this tree), take_* reads
// rank r's part from the gathered words. The combine_* functions below run one collective for a
// group of trees (their parts concatenated in tree order).

void EvalWork::put_counts(std::vector<std::uint64_t>& v) const {
  static_assert(sizeof(std::int64_t) == sizeof(std::uint64_t), "counts travel as unsigned 64-bit");
  const std::size_t at = v.size();
  v.resize(at + chunk_counts_.size());
  std::memcpy(v.data() + at, chunk_counts_.data(), chunk_counts_.size() * sizeof(std::uint64_t));
}

void EvalWork::take_counts(const std::uint64_t*& p) {
  std::memcpy(chunk_counts_.data(), p, chunk_counts_.size() * sizeof(std::uint64_t));
  p += chunk_counts_.size();
}

void EvalWork::put_small_rows(std::vector<std::uint32_t>& w, int min_rows) const {
  // A count, then (position in order_, row) of this rank's rows of every leaf under min_rows.
  const std::size_t head = w.size();
  w.push_back(0u);
  for (int l = 0; l < n_leaves_; ++l) {
    const std::int64_t m = leaf_count_[static_cast<std::size_t>(l)];
    if (m <= 0 || m >= min_rows) continue;
    // This rank's positions in the leaf's bucket: from its first chunk's write offset to the next
    // rank's (or the bucket's end; a rank without chunks has none).
    const std::int64_t end = leaf_begin_[static_cast<std::size_t>(l)] + m;
    const std::int64_t b = c_begin_ < n_chunks_ ? chunk_counts_[static_cast<std::size_t>(c_begin_) * n_leaves_ + l] : end;
    const std::int64_t e = c_end_ < n_chunks_ ? chunk_counts_[static_cast<std::size_t>(c_end_) * n_leaves_ + l] : end;
    for (std::int64_t i = b; i < e; ++i) {
      w.push_back(static_cast<std::uint32_t>(i));
      w.push_back(static_cast<std::uint32_t>(order_[static_cast<std::size_t>(i)]));
    }
  }
  w[head] = static_cast<std::uint32_t>((w.size() - head - 1) / 2);
}

void EvalWork::take_small_rows(const std::vector<std::uint32_t>& all, std::size_t& at) {
  GPUDM_REQUIRE(at < all.size(), "gmt: the ranks' small-leaf rows do not add up (internal error)");
  const std::size_t n = all[at++];
  GPUDM_REQUIRE(at + 2 * n <= all.size(), "gmt: the ranks' small-leaf rows do not add up (internal error)");
  for (std::size_t i = 0; i < n; ++i, at += 2) order_[all[at]] = static_cast<std::int64_t>(all[at + 1]);
}

void EvalWork::put_r_factors(std::vector<std::uint32_t>& w) const {
  for (int ti : own_tasks_) {
    const QrTask& t = tasks_[static_cast<std::size_t>(ti)];
    put_words(w, rblocks_.data() + t.r_offset, static_cast<std::size_t>(t.r_rows) * static_cast<std::size_t>(attr_count(t.leaf) + 2));
  }
}

void EvalWork::take_r_factors(const std::vector<std::uint32_t>& all, std::size_t& at, int r) {
  // Rank r's blocks are the tasks of its chunks, in task order (tasks are leaf-major: walk them all).
  const auto [cb, ce] = chunks_of(r);
  for (const QrTask& t : tasks_) {
    if (t.chunk < cb || t.chunk >= ce) continue;
    take_words(all, at, rblocks_.data() + t.r_offset, static_cast<std::size_t>(t.r_rows) * static_cast<std::size_t>(attr_count(t.leaf) + 2));
  }
}

void EvalWork::put_partials(std::vector<std::uint32_t>& w) const {
  const auto L = static_cast<std::size_t>(n_leaves_);
  const std::size_t b = static_cast<std::size_t>(c_begin_) * L, n = static_cast<std::size_t>(c_end_ - c_begin_) * L;
  put_words(w, part_sse_.data() + b, n);
  put_words(w, part_sae_.data() + b, n);
  put_words(w, part_lo_.data() + b, n);
  put_words(w, part_hi_.data() + b, n);
  put_words(w, part_rnd_.data() + b, n);
}

void EvalWork::take_partials(const std::vector<std::uint32_t>& all, std::size_t& at, int r) {
  const auto L = static_cast<std::size_t>(n_leaves_);
  const auto [cb, ce] = chunks_of(r);
  const std::size_t b = static_cast<std::size_t>(cb) * L, n = static_cast<std::size_t>(ce - cb) * L;
  take_words(all, at, part_sse_.data() + b, n);
  take_words(all, at, part_sae_.data() + b, n);
  take_words(all, at, part_lo_.data() + b, n);
  take_words(all, at, part_hi_.data() + b, n);
  take_words(all, at, part_rnd_.data() + b, n);
}

namespace {
Comm& comm_of(const std::vector<EvalWork*>& ws) {
  GPUDM_REQUIRE(!ws.empty() && ws.front()->comm() != nullptr, "gmt: a combine step without ranks (internal error)");
  return *ws.front()->comm();
}
// Every rank's words, then each rank's part read by every work in tree order.
template <class Take>
std::uint64_t gather_each(const std::vector<EvalWork*>& ws, const std::vector<std::uint32_t>& mine, const char* what, Take take) {
  Comm& c = comm_of(ws);
  const std::vector<std::uint32_t> all = c.gather_all(mine, what);
  std::size_t at = 0;
  for (int r = 0; r < c.size(); ++r)
    for (EvalWork* w : ws) take(*w, all, at, r);
  GPUDM_REQUIRE(at == all.size(), std::string(what) + ": the ranks' parts do not add up (internal error)");
  return all.size() * 4;
}
}  // namespace

std::uint64_t combine_counts(const std::vector<EvalWork*>& ws) {
  // Other ranks' chunks are zero here: the sum is every chunk's counts (integers: exact).
  std::vector<std::uint64_t> v;
  for (const EvalWork* w : ws) w->put_counts(v);
  Comm& c = comm_of(ws);
  c.sum(v.data(), v.size(), "gmt: summing the ranks' leaf counts");
  const std::uint64_t* p = v.data();
  for (EvalWork* w : ws) w->take_counts(p);
  return integer_sum_bytes(v.size() * sizeof(std::uint64_t), c.size());
}

std::uint64_t combine_small_rows(const std::vector<EvalWork*>& ws, int min_rows) {
  std::vector<std::uint32_t> mine;
  for (const EvalWork* w : ws) w->put_small_rows(mine, min_rows);
  return gather_each(ws, mine, "gmt: gathering the small leaves' rows",
                     [](EvalWork& w, const std::vector<std::uint32_t>& all, std::size_t& at, int) { w.take_small_rows(all, at); });
}

std::uint64_t combine_r_factors(const std::vector<EvalWork*>& ws) {
  std::vector<std::uint32_t> mine;
  for (const EvalWork* w : ws) w->put_r_factors(mine);
  return gather_each(ws, mine, "gmt: gathering the ranks' R factors",
                     [](EvalWork& w, const std::vector<std::uint32_t>& all, std::size_t& at, int r) { w.take_r_factors(all, at, r); });
}

std::uint64_t combine_partials(const std::vector<EvalWork*>& ws) {
  std::vector<std::uint32_t> mine;
  for (const EvalWork* w : ws) w->put_partials(mine);
  return gather_each(ws, mine, "gmt: gathering the ranks' error partials",
                     [](EvalWork& w, const std::vector<std::uint32_t>& all, std::size_t& at, int r) { w.take_partials(all, at, r); });
}

void EvalWork::finish(Tree& tree) {
  GPUDM_REQUIRE(&tree == tree_, "gmt: EvalWork::finish() on another tree than begin()'s");
  for (int l = 0; l < n_leaves_; ++l) {
    const int node = leaf_node_[static_cast<std::size_t>(l)];
    if (refit_[static_cast<std::size_t>(l)]) set_leaf_fit(tree, node, coef_of(l), rank_[static_cast<std::size_t>(l)]);
    tree.node(node).stats = leaf_stats_[static_cast<std::size_t>(l)];
  }
  propagate_stats(tree, *data_, salt_);
}

RepairOutcome evaluate_tree(EvalWork& work, const Dataset& data, Tree& tree, std::uint64_t salt, const EvalOptions& opt,
                            const RepairSpec& repair, PhaseTimer& timer, const ForEach& loop) {
  std::vector<EvalWork*> ws{&work};
  std::vector<Tree*> ts{&tree};
  std::vector<std::uint64_t> salts{salt};
  return evaluate_trees(ws, data, ts, salts, opt, repair, timer, loop).front();
}

std::vector<RepairOutcome> evaluate_trees(const std::vector<EvalWork*>& works, const Dataset& data, const std::vector<Tree*>& trees,
                                          const std::vector<std::uint64_t>& salts, const EvalOptions& opt, const RepairSpec& repair,
                                          PhaseTimer& timer, const ForEach& loop, CombineAccount* account) {
  const std::size_t B = trees.size();
  GPUDM_REQUIRE(works.size() == B && salts.size() == B, "gmt: evaluate_trees needs a work and a salt per tree");
  std::vector<RepairOutcome> outcome(B);
  if (B == 0) return outcome;
  const bool split = works.front()->split();
  // A combine step over the given works (one collective), timed as "combine" and counted.
  const auto combine = [&](auto&& step) {
    if (!split) return;
    auto s = timer.scope("combine");
    const std::uint64_t bytes = step();
    if (account != nullptr) {
      ++account->calls;
      account->bytes += bytes;
    }
  };
  // This rank's chunks of work w (all of them in one process).
  const auto own_chunks = [&](EvalWork& w, const std::function<void(int)>& body) {
    const int c0 = w.chunk_begin();
    loop(w.chunk_end() - c0, [&](int i) { body(c0 + i); });
  };
  std::vector<EvalWork*> routing = works;  // the works to route in this round
  std::vector<std::size_t> index(B);
  for (std::size_t i = 0; i < B; ++i) index[i] = i;
  for (int round = 0; round < 2 && !routing.empty(); ++round) {
    {
      auto s = timer.scope("transfers");
      for (std::size_t k = 0; k < routing.size(); ++k) routing[k]->begin(data, *trees[index[k]], opt, salts[index[k]]);
    }
    {
      auto s = timer.scope("redistribute");
      for (EvalWork* w : routing) own_chunks(*w, [&](int c) { w->redistribute_chunk(c); });
    }
    combine([&] { return combine_counts(routing); });
    {
      auto s = timer.scope("separate");
      for (EvalWork* w : routing) {
        w->separate_offsets();
        own_chunks(*w, [&](int c) { w->separate_chunk(c); });
      }
    }
    if (round > 0 || repair.min_rows <= 0) break;
    combine([&] { return combine_small_rows(routing, repair.min_rows); });
    auto s = timer.scope("repair");
    std::vector<EvalWork*> again;
    std::vector<std::size_t> again_index;
    for (std::size_t k = 0; k < routing.size(); ++k) {
      thread_local RoutedCounts routed;
      routing[k]->routed_counts(repair.min_rows, routed);
      RepairOutcome& o = outcome[index[k]];
      o = repair_tree(*trees[index[k]], repair, routed, data);
      GPUDM_REQUIRE(o.complete, "gmt: repair could not find a small leaf's rows (internal error)");
      if (o.repairs == 0) continue;  // the routing stands; otherwise route the repaired tree
      again.push_back(routing[k]);
      again_index.push_back(index[k]);
    }
    routing = std::move(again);
    index = std::move(again_index);
  }
  {
    auto s = timer.scope("reorganize");
    for (EvalWork* w : works) {
      w->reorganize_layout();
      const std::vector<int>& tasks = w->own_qr_tasks();
      loop(static_cast<int>(tasks.size()), [&](int i) { w->reorganize_block(tasks[static_cast<std::size_t>(i)]); });
    }
  }
  {
    // One calc_models phase: the blocks' QR, then (rows split) the R factors' exchange, timed as
    // "combine", then the leaves' solves.
    const Stopwatch qr;
    for (EvalWork* w : works) {
      const std::vector<int>& tasks = w->own_qr_tasks();
      loop(static_cast<int>(tasks.size()), [&](int i) { w->qr_block(tasks[static_cast<std::size_t>(i)]); });
    }
    const double seconds = qr.seconds();
    combine([&] { return combine_r_factors(works); });
    const Stopwatch solve;
    for (EvalWork* w : works) loop(w->n_leaves(), [&](int l) { w->solve_leaf(l); });
    if (timer.enabled()) timer.add("calc_models", seconds + solve.seconds());
  }
  {
    auto s = timer.scope("estimate_errors");
    for (EvalWork* w : works) own_chunks(*w, [&](int c) { w->estimate_chunk(c); });
  }
  combine([&] { return combine_partials(works); });
  {
    auto s = timer.scope("reduction");
    for (std::size_t i = 0; i < B; ++i) {
      loop(works[i]->n_leaves(), [&](int l) { works[i]->reduce_leaf(l); });
      works[i]->finish(*trees[i]);
    }
  }
  return outcome;
}

}  // namespace gmt
}  // namespace gpudm
