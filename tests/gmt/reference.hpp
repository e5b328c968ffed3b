#pragma once
// An independent small GMT evaluator written from the paper's definitions (Jurczuk et al. 2022,
// §3-4) for the tests, sharing no code with algorithms/gmt/eval_steps.*: every row is routed
// through the flat tree (x <= threshold left, otherwise and NaN right), each affected leaf's
// model is fitted by least squares with modified Gram-Schmidt in long double (instead of the
// backends' blocked Householder QR in double), and errors are summed row by row.
//
// Rank rule (EvalOptions::rank_tol, rows_per_param): a column is dropped when the norm of its
// part orthogonal to the columns kept before it is <= rank_tol x its own norm (or zero), when as
// many columns as rows are kept already, or when max(1, floor(n / rows_per_param)) are. That
// orthogonal remainder is exactly what the backends' Householder sweep measures, so on data
// that is not within rounding of the threshold both make the same decisions.
//
// dipole_rand is defined by the evaluator's contract (flat_tree.hpp): for a leaf, the row at
// position hash(salt, node) mod count of its rows in ascending order; for an internal node, the
// left child's when hash(salt, node) mod count < left count, else the right child's; hash is
// splitmix64(salt ^ (golden * (node + 1))).
#include <cmath>
#include <cstdint>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/gmt/evaluator.hpp"
#include "algorithms/gmt/flat_tree.hpp"

namespace gmt_test {

inline std::uint64_t reference_splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline gpudm::gmt::EvalOutput reference_evaluate(const gpudm::Dataset& d, const gpudm::gmt::FlatTree& t,
                                                 const gpudm::gmt::EvalOptions& opt) {
  using namespace gpudm::gmt;
  using LD = long double;
  const int cols = t.cols;
  const std::size_t n = d.rows();
  EvalOutput out;
  out.nodes.assign(static_cast<std::size_t>(t.n_nodes()), NodeStats{});
  out.coef.assign(static_cast<std::size_t>(t.n_leaves()) * static_cast<std::size_t>(cols + 1), 0.0);
  out.rank.assign(static_cast<std::size_t>(t.n_leaves()), -1);

  // Route every row.
  std::vector<std::vector<std::size_t>> rows_of(static_cast<std::size_t>(t.n_leaves()));
  std::vector<int> leaf_of(n);
  for (std::size_t r = 0; r < n; ++r) {
    int i = 0;
    while (t.attr[static_cast<std::size_t>(i)] >= 0) {
      const float x = d.at(r, static_cast<std::size_t>(t.attr[static_cast<std::size_t>(i)]));
      i = (x <= t.threshold[static_cast<std::size_t>(i)]) ? 2 * i + 1 : 2 * i + 2;  // NaN fails <=: right
    }
    const int slot = t.leaf_slot[static_cast<std::size_t>(i)];
    leaf_of[r] = slot;
    rows_of[static_cast<std::size_t>(slot)].push_back(r);
  }

  // Fit each leaf's model.
  for (int l = 0; l < t.n_leaves(); ++l) {
    const auto L = static_cast<std::size_t>(l);
    double* coef = out.coef.data() + L * static_cast<std::size_t>(cols + 1);
    if (!t.refit[L]) {
      for (int k = 0; k <= cols; ++k) coef[k] = t.coef[L * static_cast<std::size_t>(cols + 1) + static_cast<std::size_t>(k)];
      continue;
    }
    const auto& rows = rows_of[L];
    const std::size_t m = rows.size();
    if (m == 0) {
      out.rank[L] = 0;
      continue;
    }
    std::vector<int> attrs;  // model columns: -1 = intercept, then the masked attributes ascending
    attrs.push_back(-1);
    for (int c = 0; c < cols; ++c)
      if (t.mask[L * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)]) attrs.push_back(c);
    std::size_t max_params = attrs.size();
    if (opt.rows_per_param > 0)
      max_params = static_cast<std::size_t>(std::max<double>(1.0, std::floor(static_cast<double>(m) / opt.rows_per_param)));
    // Modified Gram-Schmidt: q_k orthonormal kept columns, R upper triangular over kept columns.
    std::vector<std::vector<LD>> q;
    std::vector<std::vector<LD>> rmat;  // rmat[k][j]: coefficient of kept column k in original column j
    std::vector<int> kept;              // indices into attrs
    std::vector<LD> y(m);
    for (std::size_t i = 0; i < m; ++i) y[i] = static_cast<LD>(d.target(rows[i]));
    for (std::size_t j = 0; j < attrs.size(); ++j) {
      std::vector<LD> v(m);
      for (std::size_t i = 0; i < m; ++i) v[i] = attrs[j] < 0 ? 1.0L : static_cast<LD>(d.at(rows[i], static_cast<std::size_t>(attrs[j])));
      LD norm0 = 0;
      for (LD x : v) norm0 += x * x;
      norm0 = std::sqrt(norm0);
      std::vector<LD> proj(q.size(), 0.0L);
      for (std::size_t k = 0; k < q.size(); ++k) {
        LD s = 0;
        for (std::size_t i = 0; i < m; ++i) s += q[k][i] * v[i];
        proj[k] = s;
        for (std::size_t i = 0; i < m; ++i) v[i] -= s * q[k][i];
      }
      LD norm = 0;
      for (LD x : v) norm += x * x;
      norm = std::sqrt(norm);
      if (kept.size() >= m || kept.size() >= max_params || norm == 0 || norm <= static_cast<LD>(opt.rank_tol) * norm0) continue;
      for (auto& x : v) x /= norm;
      for (std::size_t k = 0; k < rmat.size(); ++k) rmat[k].push_back(proj[k]);
      rmat.emplace_back(kept.size() + 1, 0.0L);
      rmat.back()[kept.size()] = norm;
      q.push_back(std::move(v));
      kept.push_back(static_cast<int>(j));
    }
    // R beta = Q^T y over the kept columns.
    const std::size_t p = kept.size();
    std::vector<LD> qty(p), beta(p);
    for (std::size_t k = 0; k < p; ++k) {
      LD s = 0;
      for (std::size_t i = 0; i < m; ++i) s += q[k][i] * y[i];
      qty[k] = s;
    }
    for (std::size_t k = p; k-- > 0;) {
      LD acc = qty[k];
      for (std::size_t j = k + 1; j < p; ++j) acc -= rmat[k][j] * beta[j];
      beta[k] = acc / rmat[k][k];
    }
    out.rank[L] = static_cast<std::int32_t>(p);
    for (std::size_t k = 0; k < p; ++k) {
      const int a = attrs[static_cast<std::size_t>(kept[k])];
      coef[a < 0 ? 0 : a + 1] = static_cast<double>(beta[k]);
    }
  }

  // Errors and dipoles of the leaves.
  auto lower = [&](std::int64_t a, std::int64_t b) {  // a has a smaller target than b (ties: smaller row)
    if (b < 0) return a >= 0;
    if (a < 0) return false;
    const float ya = d.target(static_cast<std::size_t>(a)), yb = d.target(static_cast<std::size_t>(b));
    return ya < yb || (ya == yb && a < b);
  };
  auto higher = [&](std::int64_t a, std::int64_t b) {
    if (b < 0) return a >= 0;
    if (a < 0) return false;
    const float ya = d.target(static_cast<std::size_t>(a)), yb = d.target(static_cast<std::size_t>(b));
    return ya > yb || (ya == yb && a < b);
  };
  auto hash = [&](int node) {
    return reference_splitmix(t.salt ^ (0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(node) + 1)));
  };
  std::vector<LD> sse(static_cast<std::size_t>(t.n_leaves()), 0.0L), sae(static_cast<std::size_t>(t.n_leaves()), 0.0L);
  for (std::size_t r = 0; r < n; ++r) {
    const auto L = static_cast<std::size_t>(leaf_of[r]);
    const double* cf = out.coef.data() + L * static_cast<std::size_t>(cols + 1);
    LD pred = cf[0];
    for (int c = 0; c < cols; ++c)
      if (t.mask[L * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)]) pred += static_cast<LD>(cf[c + 1]) * d.at(r, static_cast<std::size_t>(c));
    const LD e = static_cast<LD>(d.target(r)) - pred;
    sse[L] += e * e;
    sae[L] += std::fabs(e);
  }
  for (int l = 0; l < t.n_leaves(); ++l) {
    const auto L = static_cast<std::size_t>(l);
    const int node = t.leaf_node[L];
    NodeStats& s = out.nodes[static_cast<std::size_t>(node)];
    s.count = static_cast<std::int64_t>(rows_of[L].size());
    s.sse = static_cast<double>(sse[L]);
    s.sae = static_cast<double>(sae[L]);
    for (std::size_t r : rows_of[L]) {
      if (lower(static_cast<std::int64_t>(r), s.dipole_lo)) s.dipole_lo = static_cast<std::int64_t>(r);
      if (higher(static_cast<std::int64_t>(r), s.dipole_hi)) s.dipole_hi = static_cast<std::int64_t>(r);
    }
    if (s.count > 0) s.dipole_rand = static_cast<std::int64_t>(rows_of[L][hash(node) % static_cast<std::uint64_t>(s.count)]);
  }
  for (int i = t.n_nodes() - 1; i >= 0; --i) {
    if (t.attr[static_cast<std::size_t>(i)] < 0) continue;
    NodeStats& p = out.nodes[static_cast<std::size_t>(i)];
    const NodeStats& a = out.nodes[static_cast<std::size_t>(2 * i + 1)];
    const NodeStats& b = out.nodes[static_cast<std::size_t>(2 * i + 2)];
    p.count = a.count + b.count;
    p.sse = a.sse + b.sse;
    p.sae = a.sae + b.sae;
    p.dipole_lo = lower(b.dipole_lo, a.dipole_lo) ? b.dipole_lo : a.dipole_lo;
    p.dipole_hi = higher(b.dipole_hi, a.dipole_hi) ? b.dipole_hi : a.dipole_hi;
    if (p.count > 0)
      p.dipole_rand = static_cast<std::int64_t>(hash(i) % static_cast<std::uint64_t>(p.count)) < a.count ? a.dipole_rand : b.dipole_rand;
  }
  return out;
}

}  // namespace gmt_test
