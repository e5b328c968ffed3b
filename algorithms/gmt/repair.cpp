#include "algorithms/gmt/repair.hpp"

#include <algorithm>

namespace gpudm {
namespace gmt {

namespace {

// Counts of internal nodes from their leaves (children follow parents: walk backwards).
void sum_up(const Tree& t, std::vector<std::int64_t>& count) {
  for (int i = t.size() - 1; i >= 0; --i) {
    const TreeNode& n = t.node(i);
    if (!n.is_leaf()) count[static_cast<std::size_t>(i)] = count[static_cast<std::size_t>(n.left)] + count[static_cast<std::size_t>(n.left + 1)];
  }
}

struct Work {
  std::vector<std::int64_t> count;
  std::vector<std::int32_t> origin;
  std::vector<std::vector<std::int64_t>> extra;
  std::vector<std::uint8_t> known;  // leaf: every row of it is known (recorded small leaf, or extra only)
};

// All rows under node i of the working tree, when known.
bool rows_under(const Tree& t, const Work& w, const RoutedCounts& r, int i, std::vector<std::int64_t>& out) {
  for (int k : t.subtree(i)) {
    if (!t.node(k).is_leaf()) continue;
    const auto K = static_cast<std::size_t>(k);
    if (!w.known[K]) return false;
    const int o = w.origin[K];
    if (o >= 0) {
      const auto O = static_cast<std::size_t>(o);
      const std::int64_t n0 = r.count[O];
      for (std::int64_t q = 0; q < n0; ++q) out.push_back(r.small_rows[static_cast<std::size_t>(r.small_begin[O] + q)]);
    }
    out.insert(out.end(), w.extra[K].begin(), w.extra[K].end());
  }
  return true;
}

// Every row of the leaf is known: a leaf of only moved rows, a recorded small leaf, or an empty
// one (RoutedCounts records the leaves with 0 < count < min_rows: an empty leaf has no rows to record).
bool is_known_leaf(const RoutedCounts& r, int origin) {
  if (origin == -1) return true;
  if (origin < 0) return false;
  const auto o = static_cast<std::size_t>(origin);
  return r.count[o] == 0 || r.small_begin[o] >= 0;
}

}  // namespace

bool needs_repair(const Tree& t, const RepairSpec& spec, const std::vector<std::int64_t>& leaf_count) {
  if (spec.min_rows <= 0 || t.size() == 1) return false;
  thread_local std::vector<std::int64_t> c;  // per-thread scratch: called for every evaluated tree
  c = leaf_count;
  sum_up(t, c);
  for (int i = 0; i < t.size(); ++i) {
    const TreeNode& n = t.node(i);
    if (!n.is_leaf() && (c[static_cast<std::size_t>(n.left)] < spec.min_rows || c[static_cast<std::size_t>(n.left + 1)] < spec.min_rows))
      return true;
  }
  return false;
}

RepairOutcome repair_tree(Tree& t, const RepairSpec& spec, const RoutedCounts& routed, const Dataset& d) {
  RepairOutcome out;
  if (!needs_repair(t, spec, routed.count)) return out;
  const std::int64_t min_rows = spec.min_rows;
  // The working tree: `t` itself in the first pass (read only; it changes only at the end, so an
  // incomplete repair leaves it as it was), the previous pass's result after it. (Not a copy
  // of `t`: that would copy a whole tree per repaired tree.)
  Tree owned;
  const Tree* cur_ptr = &t;
  Work w;
  const auto N = static_cast<std::size_t>(t.size());
  w.count = routed.count;
  w.origin.assign(N, -1);
  w.extra.assign(N, {});
  w.known.assign(N, 0);
  for (int i = 0; i < t.size(); ++i) {
    if (!t.node(i).is_leaf()) continue;
    w.origin[static_cast<std::size_t>(i)] = i;
    w.known[static_cast<std::size_t>(i)] = is_known_leaf(routed, i) ? 1 : 0;
  }
  for (;;) {
    const Tree& cur = *cur_ptr;
    sum_up(cur, w.count);
    // The topmost nodes with a child under min_rows (breadth-first; nothing below one is looked at).
    std::vector<int> at;
    std::vector<int> todo{0};
    for (std::size_t q = 0; q < todo.size(); ++q) {
      const TreeNode& n = cur.node(todo[q]);
      if (n.is_leaf()) continue;
      const std::int64_t cl = w.count[static_cast<std::size_t>(n.left)], cr = w.count[static_cast<std::size_t>(n.left + 1)];
      if (cl < min_rows || cr < min_rows) {
        at.push_back(todo[q]);
        continue;
      }
      todo.push_back(n.left);
      todo.push_back(n.left + 1);
    }
    if (at.empty()) break;
    // Decide every repair of the pass, with the rows each moves.
    std::vector<Tree::Source> with(at.size());
    std::vector<Tree> leaves(at.size());
    std::vector<std::vector<std::int64_t>> moved(at.size());  // promote: the small side's rows
    std::vector<std::int32_t> leaf_origin(at.size(), -1);
    std::vector<std::uint8_t> leaf_known(at.size(), 1);
    std::vector<std::vector<std::int64_t>> leaf_extra(at.size());
    std::vector<std::uint8_t> promote(at.size(), 0);
    for (std::size_t k = 0; k < at.size(); ++k) {
      const int n = at[k];
      const TreeNode& nd = cur.node(n);
      const int l = nd.left, r = nd.left + 1;
      const bool left_big = w.count[static_cast<std::size_t>(l)] >= w.count[static_cast<std::size_t>(r)];
      const int big = left_big ? l : r, small = left_big ? r : l;
      const TreeNode& bg = cur.node(big);
      if (spec.mode == RepairMode::promote && !bg.is_leaf() && w.count[static_cast<std::size_t>(big)] >= min_rows) {
        if (!rows_under(cur, w, routed, small, moved[k])) {
          out.complete = false;
          return RepairOutcome{0, 0, false, {}, {}, {}};
        }
        std::sort(moved[k].begin(), moved[k].end());
        promote[k] = 1;
        with[k] = Tree::Source{&cur, big};
        continue;
      }
      // The node becomes a leaf: the big child's model attributes when it is a leaf.
      std::vector<int> attrs;
      if (bg.is_leaf()) {
        const auto a = cur.attrs(big);
        attrs.assign(a.begin(), a.end());
      }
      leaves[k] = Tree::leaf(attrs);
      with[k] = Tree::Source{&leaves[k], 0};
      std::vector<std::int64_t> rows;
      if (bg.is_leaf()) {
        // Rows: the big leaf's (as it holds them) plus every row of the small side.
        if (!rows_under(cur, w, routed, small, rows)) {
          out.complete = false;
          return RepairOutcome{0, 0, false, {}, {}, {}};
        }
        const auto B = static_cast<std::size_t>(big);
        leaf_origin[k] = w.origin[B];
        leaf_known[k] = w.known[B];
        rows.insert(rows.end(), w.extra[B].begin(), w.extra[B].end());
      } else if (rows_under(cur, w, routed, n, rows)) {
        leaf_origin[k] = -1;  // every row known (both sides small)
      } else {
        leaf_origin[k] = -2;  // a collapsed subtree of many rows
        leaf_known[k] = 0;
        rows.clear();
      }
      std::sort(rows.begin(), rows.end());
      leaf_extra[k] = std::move(rows);
    }
    // Rebuild, carrying the working arrays along.
    std::vector<Tree::Source> src;
    Tree next = cur.grafted(at, with, &src);
    Work nw;
    const auto M = static_cast<std::size_t>(next.size());
    nw.count.assign(M, 0);
    nw.origin.assign(M, -1);
    nw.extra.assign(M, {});
    nw.known.assign(M, 0);
    std::vector<int> promoted_root(at.size(), -1);
    for (std::size_t i = 0; i < M; ++i) {
      const Tree::Source s = src[i];
      if (s.tree == &cur) {
        const auto S = static_cast<std::size_t>(s.node);
        nw.count[i] = w.count[S];
        nw.origin[i] = w.origin[S];
        nw.extra[i] = std::move(w.extra[S]);
        nw.known[i] = w.known[S];
        for (std::size_t k = 0; k < at.size(); ++k)
          if (promote[k] && s.node == with[k].node) promoted_root[k] = static_cast<int>(i);
        continue;
      }
      for (std::size_t k = 0; k < at.size(); ++k) {
        if (s.tree != &leaves[k]) continue;
        nw.count[i] = w.count[static_cast<std::size_t>(at[k])];
        nw.origin[i] = leaf_origin[k];
        nw.extra[i] = std::move(leaf_extra[k]);
        nw.known[i] = leaf_known[k];
      }
    }
    // The moved rows go down the promoted subtrees; those subtrees are refit.
    for (std::size_t k = 0; k < at.size(); ++k) {
      if (!promote[k]) continue;
      const int root = promoted_root[k];
      next.mark_dirty(root);
      for (std::int64_t row : moved[k]) {
        int i = root;
        while (!next.node(i).is_leaf()) {
          const TreeNode& nd = next.node(i);
          i = nd.left + (d.at(static_cast<std::size_t>(row), static_cast<std::size_t>(nd.attr)) <= nd.threshold ? 0 : 1);
        }
        const auto I = static_cast<std::size_t>(i);
        ++nw.count[I];
        auto& e = nw.extra[I];
        e.insert(std::upper_bound(e.begin(), e.end(), row), row);
      }
    }
    out.repairs += static_cast<int>(at.size());
    ++out.passes;
    owned = std::move(next);  // (`cur` is not used after this)
    cur_ptr = &owned;
    w = std::move(nw);
  }
  out.origin = std::move(w.origin);
  out.extra = std::move(w.extra);
  out.count = std::move(w.count);
  if (out.passes > 0) t = std::move(owned);
  return out;
}

}  // namespace gmt
}  // namespace gpudm
