#pragma once
// An independent small GMT evaluator written from the paper's definitions (Jurczuk et al. 2022,
// §3-4) for the tests, sharing no code with algorithms/gmt/eval_steps.* or repair.*: every row is
// routed through the compact tree (node array, children at left and left + 1; x <= threshold
// left, otherwise and NaN right), each refit leaf's model is fitted by least squares with
// modified Gram-Schmidt in long double (instead of the backends' blocked Householder QR in
// double), and errors are summed row by row, for every node over the rows that reach it (not
// propagated from the children).
//
// Rank rule (EvalOptions::rank_tol, rows_per_param): a column is dropped when the norm of its
// part orthogonal to the columns kept before it is <= rank_tol x its own norm (or zero), when as
// many columns as rows are kept already, or when max(1, ceil(n / rows_per_param) - 1) are (fewer
// parameters than n / rows_per_param). That
// orthogonal remainder is exactly what the backends' Householder sweep measures, so on data
// that is not within rounding of the threshold both make the same decisions.
//
// A leaf refits when Tree::leaf_needs_refit (dirty or without coefficients); a clean leaf keeps
// its coefficients. dipole_lo / dipole_hi: the node's row of lowest / highest target (ties: the
// lower row); dipole_rand: the node's row of minimum gmt::dipole_key(salt, row) (tree.hpp); -1
// for a node without rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/gmt/evaluator.hpp"
#include "algorithms/gmt/tree.hpp"
#include "common.hpp"

namespace gmt_test {

struct ReferenceLeaf {
  int node = -1;
  bool refit = false;
  std::vector<int> attrs;    // the model's attributes as the tree gave them (before the rank rule)
  std::vector<double> coef;  // intercept, then one per attrs (0 where dropped); a clean leaf's own
  std::vector<bool> kept;    // per attrs: kept by the rank rule (a clean leaf keeps all)
  int rank = -1;             // refit leaves: columns kept, intercept included (0 without rows)
};

struct ReferenceResult {
  std::vector<gpudm::gmt::NodeStats> nodes;  // per node of the tree
  std::vector<ReferenceLeaf> leaves;         // the leaves in breadth-first order
  std::vector<std::vector<std::size_t>> rows;  // per node: its rows, ascending
};

inline ReferenceResult reference_evaluate(const gpudm::Dataset& d, const gpudm::gmt::Tree& t, std::uint64_t salt,
                                          const gpudm::gmt::EvalOptions& opt) {
  using namespace gpudm::gmt;
  using LD = long double;
  const std::size_t n = d.rows();
  const auto N = static_cast<std::size_t>(t.size());
  ReferenceResult out;
  out.nodes.assign(N, NodeStats{});
  out.rows.assign(N, {});

  // Route every row, recording the rows of every node on its path.
  std::vector<int> leaf_of(n);
  for (std::size_t r = 0; r < n; ++r) {
    int i = 0;
    for (;;) {
      out.rows[static_cast<std::size_t>(i)].push_back(r);
      const TreeNode& nd = t.node(i);
      if (nd.attr < 0) break;
      const float x = d.at(r, static_cast<std::size_t>(nd.attr));
      i = (x <= nd.threshold) ? nd.left : nd.left + 1;  // NaN fails <=: right
    }
    leaf_of[r] = i;
  }

  // Fit each leaf's model.
  std::vector<int> slot_of(N, -1);
  for (int node = 0; node < t.size(); ++node) {
    if (t.node(node).attr >= 0) continue;
    slot_of[static_cast<std::size_t>(node)] = static_cast<int>(out.leaves.size());
    ReferenceLeaf leaf;
    leaf.node = node;
    const auto a = t.attrs(node);
    leaf.attrs.assign(a.begin(), a.end());
    leaf.coef.assign(leaf.attrs.size() + 1, 0.0);
    leaf.kept.assign(leaf.attrs.size(), false);
    leaf.refit = t.node(node).dirty != 0 || t.node(node).has_coef == 0;
    if (!leaf.refit) {
      const auto c = t.coef(node);
      leaf.coef.assign(c.begin(), c.end());
      leaf.kept.assign(leaf.attrs.size(), true);
      out.leaves.push_back(std::move(leaf));
      continue;
    }
    const auto& rows = out.rows[static_cast<std::size_t>(node)];
    const std::size_t m = rows.size();
    if (m == 0) {
      leaf.rank = 0;
      out.leaves.push_back(std::move(leaf));
      continue;
    }
    std::vector<int> cols{-1};  // model columns: -1 = intercept, then the model's attributes
    cols.insert(cols.end(), leaf.attrs.begin(), leaf.attrs.end());
    std::size_t max_params = cols.size();
    if (opt.rows_per_param > 0)
      max_params = static_cast<std::size_t>(std::max<double>(1.0, std::ceil(static_cast<double>(m) / opt.rows_per_param) - 1.0));
    // Modified Gram-Schmidt: q_k orthonormal kept columns, R upper triangular over kept columns.
    std::vector<std::vector<LD>> q;
    std::vector<std::vector<LD>> rmat;  // rmat[k][j]: coefficient of kept column k in original column j
    std::vector<int> kept;              // indices into cols
    std::vector<LD> y(m);
    for (std::size_t i = 0; i < m; ++i) y[i] = static_cast<LD>(d.target(rows[i]));
    for (std::size_t j = 0; j < cols.size(); ++j) {
      std::vector<LD> v(m);
      for (std::size_t i = 0; i < m; ++i) v[i] = cols[j] < 0 ? 1.0L : static_cast<LD>(d.at(rows[i], static_cast<std::size_t>(cols[j])));
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
    leaf.rank = static_cast<int>(p);
    for (std::size_t k = 0; k < p; ++k) {
      const auto j = static_cast<std::size_t>(kept[k]);  // 0 = intercept, j = attrs[j - 1]
      leaf.coef[j] = static_cast<double>(beta[k]);
      if (j > 0) leaf.kept[j - 1] = true;
    }
    out.leaves.push_back(std::move(leaf));
  }

  // Per-row errors, then every node's sums over its own rows.
  std::vector<LD> err(n);
  for (std::size_t r = 0; r < n; ++r) {
    const ReferenceLeaf& leaf = out.leaves[static_cast<std::size_t>(slot_of[static_cast<std::size_t>(leaf_of[r])])];
    LD pred = leaf.coef[0];
    for (std::size_t k = 0; k < leaf.attrs.size(); ++k)
      pred += static_cast<LD>(leaf.coef[k + 1]) * d.at(r, static_cast<std::size_t>(leaf.attrs[k]));
    err[r] = static_cast<LD>(d.target(r)) - pred;
  }
  auto lower = [&](std::size_t a, std::int64_t b) {  // row a has a smaller target than row b (ties: smaller row)
    if (b < 0) return true;
    const float ya = d.target(a), yb = d.target(static_cast<std::size_t>(b));
    return ya < yb || (ya == yb && static_cast<std::int64_t>(a) < b);
  };
  auto higher = [&](std::size_t a, std::int64_t b) {
    if (b < 0) return true;
    const float ya = d.target(a), yb = d.target(static_cast<std::size_t>(b));
    return ya > yb || (ya == yb && static_cast<std::int64_t>(a) < b);
  };
  for (std::size_t i = 0; i < N; ++i) {
    NodeStats& s = out.nodes[i];
    LD sse = 0, sae = 0;
    std::uint64_t best_key = 0;
    for (std::size_t r : out.rows[i]) {
      sse += err[r] * err[r];
      sae += std::fabs(err[r]);
      if (lower(r, s.dipole_lo)) s.dipole_lo = static_cast<std::int64_t>(r);
      if (higher(r, s.dipole_hi)) s.dipole_hi = static_cast<std::int64_t>(r);
      const std::uint64_t key = dipole_key(salt, r);
      if (s.dipole_rand < 0 || key < best_key) {
        best_key = key;
        s.dipole_rand = static_cast<std::int64_t>(r);
      }
    }
    s.count = static_cast<std::int64_t>(out.rows[i].size());
    s.sse = static_cast<double>(sse);
    s.sae = static_cast<double>(sae);
  }
  return out;
}

// Tolerances of a comparison with the reference (test_reference.cpp states why).
struct ReferenceTolerance {
  double coef = 1e-8;  // relative to the largest coefficient of the leaf
  double err = 1e-8;   // relative to the node's error plus 1e-4 x the dataset's sum of squared targets (tss)
  bool sae_may_be_nan = false;  // a backend that does not compute SAE (the GPU fast path) reports NaN
};

// Checks `got` (evaluated without repairs from `input`) against `ref` = reference_evaluate(input):
// the same structure, identical counts, dipoles, rank decisions (dropped attributes leave the
// model, tree.hpp set_fit), clean leaves' models passed through bit for bit, errors and
// coefficients within `tol`. Returns how many leaves hold fewer rows than model columns.
inline int expect_matches_reference(const gpudm::gmt::Tree& got, const gpudm::gmt::Tree& input, const ReferenceResult& ref,
                                    double tss, int cols, const ReferenceTolerance& tol = {}) {
  using namespace gpudm::gmt;
  int small_leaves = 0;
  EXPECT_EQ(got.size(), input.size());
  if (got.size() != input.size()) return 0;
  for (int i = 0; i < got.size(); ++i) {
    const TreeNode &g = got.node(i), &in = input.node(i);
    EXPECT_EQ(g.attr, in.attr) << "node " << i;
    EXPECT_EQ(g.left, in.left) << "node " << i;
    if (!g.is_leaf()) {
      EXPECT_EQ(g.threshold, in.threshold) << "node " << i;
    }
    const NodeStats &s = g.stats, &e = ref.nodes[static_cast<std::size_t>(i)];
    EXPECT_EQ(s.count, e.count) << "node " << i;
    EXPECT_EQ(s.dipole_lo, e.dipole_lo) << "node " << i;
    EXPECT_EQ(s.dipole_hi, e.dipole_hi) << "node " << i;
    EXPECT_EQ(s.dipole_rand, e.dipole_rand) << "node " << i;
    EXPECT_NEAR(s.sse, e.sse, tol.err * (e.sse + 1e-4 * tss)) << "node " << i;
    if (!(tol.sae_may_be_nan && std::isnan(s.sae))) {
      EXPECT_NEAR(s.sae, e.sae, tol.err * (e.sae + 1e-4 * std::sqrt(tss))) << "node " << i;
    }
  }
  for (const ReferenceLeaf& leaf : ref.leaves) {
    const int i = leaf.node;
    SCOPED_TRACE("leaf node " + std::to_string(i));
    const TreeNode& g = got.node(i);
    if (ref.nodes[static_cast<std::size_t>(i)].count < cols + 1) ++small_leaves;
    EXPECT_EQ(g.dirty, 0);
    EXPECT_EQ(g.has_coef, 1);
    const auto ga = got.attrs(i);
    const std::vector<int> got_attrs(ga.begin(), ga.end());
    if (!leaf.refit) {
      // A clean leaf's model passes through untouched.
      EXPECT_EQ(got_attrs, leaf.attrs);
      const auto gc = got.coef(i);
      EXPECT_EQ(std::vector<double>(gc.begin(), gc.end()), leaf.coef);
      EXPECT_EQ(g.rank, input.node(i).rank);
      continue;
    }
    EXPECT_EQ(g.rank, leaf.rank);  // identical rank decisions
    std::vector<int> kept;
    for (std::size_t k = 0; k < leaf.attrs.size(); ++k)
      if (leaf.kept[k]) kept.push_back(leaf.attrs[k]);
    EXPECT_EQ(got_attrs, kept) << "the attributes the rank rule dropped leave the model";
    double scale = 1e-300;
    for (double c : leaf.coef) scale = std::max(scale, std::fabs(c));
    EXPECT_NEAR(coef_of(got, i, -1), leaf.coef[0], tol.coef * scale) << "intercept";
    for (std::size_t k = 0; k < leaf.attrs.size(); ++k)
      EXPECT_NEAR(coef_of(got, i, leaf.attrs[k]), leaf.coef[k + 1], tol.coef * scale) << "attribute " << leaf.attrs[k];
  }
  return small_leaves;
}

// sum of squared targets (the scale of the error tolerances)
inline double target_ss(const gpudm::Dataset& d) {
  double tss = 0;
  for (std::size_t r = 0; r < d.rows(); ++r) tss += double(d.target(r)) * d.target(r);
  return tss;
}

}  // namespace gmt_test
