// The fast path's finish of a tree on the host threads: repairs decided from the counts, the
// results into the tree, its counts / errors / dipoles propagated to its root.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/gmt/eval_steps.hpp"
#include "algorithms/gmt/leaf_stats.hpp"
#include "algorithms/core/error.hpp"
#include "backends/cuda/common/device.cuh"
#include "backends/cuda/common/error.cuh"
#include "backends/cuda/gmt/fast_detail.cuh"

namespace gpudm::backend::cuda::gmt_cuda {

namespace ls = ::gpudm::gmt::leafstats;
using ::gpudm::gmt::Tree;
using ::gpudm::gmt::TreeNode;
using namespace fast_detail;

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

}  // namespace gpudm::backend::cuda::gmt_cuda
