// The compact tree (algorithms/gmt/tree.hpp): every edit (join, extract, replace, make_leaf,
// grafted, set_model / set_fit, mark_dirty, compact_pools) keeps the breadth-first layout (the
// children of the k-th internal node at 1 + 2k, parent and depth right) and carries each node's
// test, model, coefficients, flags and statistics along; checked against a pointer tree edited
// the obvious way. from_parts accepts exactly the well-formed arrays; flatten gives the CUDA
// faithful path's 2^levels layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <sstream>

#include "algorithms/core/rng.hpp"
#include "algorithms/gmt/flat_tree.hpp"
#include "algorithms/gmt/tree.hpp"
#include "common.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {

constexpr int kCols = 5;

// The pointer tree the compact one is compared with.
struct PNode {
  int attr = kLeafNode;
  float threshold = 0.0f;
  std::unique_ptr<PNode> left, right;
  std::vector<int> attrs;
  std::vector<double> coef;
  int dirty = 1, has_coef = 0, rank = -1;
  std::int64_t tag = 0;  // stats.count: identifies a node through the edits
};

std::unique_ptr<PNode> to_pointer(const Tree& t, int i) {
  auto p = std::make_unique<PNode>();
  const TreeNode& n = t.node(i);
  p->attr = n.attr;
  p->tag = n.stats.count;
  if (!n.is_leaf()) {
    p->threshold = n.threshold;
    p->left = to_pointer(t, n.left);
    p->right = to_pointer(t, n.left + 1);
    return p;
  }
  p->attrs.assign(t.attrs(i).begin(), t.attrs(i).end());
  p->coef.assign(t.coef(i).begin(), t.coef(i).end());
  p->dirty = n.dirty;
  p->has_coef = n.has_coef;
  p->rank = n.rank;
  return p;
}

std::unique_ptr<PNode> clone(const PNode& n) {
  auto p = std::make_unique<PNode>();
  p->attr = n.attr;
  p->threshold = n.threshold;
  p->attrs = n.attrs;
  p->coef = n.coef;
  p->dirty = n.dirty;
  p->has_coef = n.has_coef;
  p->rank = n.rank;
  p->tag = n.tag;
  if (n.left) p->left = clone(*n.left);
  if (n.right) p->right = clone(*n.right);
  return p;
}

// Pre-order text of everything a node carries (internal nodes: test and tag; leaves: model,
// coefficients, flags, rank, tag).
std::string canon(const PNode& n) {
  std::ostringstream os;
  os.precision(17);
  if (n.attr >= 0) {
    os << "T" << n.attr << "<=" << n.threshold << "#" << n.tag << "(" << canon(*n.left) << "," << canon(*n.right) << ")";
    return os.str();
  }
  os << "L{";
  for (int a : n.attrs) os << a << " ";
  os << "}{";
  for (double c : n.coef) os << c << " ";
  os << "}d" << n.dirty << "c" << n.has_coef << "r" << n.rank << "#" << n.tag;
  return os.str();
}
std::string canon(const Tree& t, int i = 0) { return canon(*to_pointer(t, i)); }

// A random tree of up to `levels` levels; every node tagged (stats.count) with tag0, tag0 + 1, ...
// in creation order; leaves with random models, about half of them fitted (clean).
Tree random_tree(Rng& rng, int levels, std::int64_t& tag) {
  Tree t;
  if (levels <= 1 || rng.bernoulli(0.3)) {
    std::vector<int> a;
    for (int c = 0; c < kCols; ++c)
      if (rng.bernoulli(0.4)) a.push_back(c);
    t = Tree::leaf(a);
    if (rng.bernoulli(0.5)) {
      std::vector<double> c{rng.uniform(-2, 2)};
      for (std::size_t k = 0; k < a.size(); ++k) c.push_back(rng.uniform(-2, 2));
      t.set_fit(0, a, c, static_cast<int>(a.size()) + 1);
    }
  } else {
    const Tree l = random_tree(rng, levels - 1, tag), r = random_tree(rng, levels - 1, tag);
    t = Tree::join(rng.below_int(kCols), static_cast<float>(rng.uniform(0, 10)), l, r);
  }
  t.node(0).stats.count = tag++;
  return t;
}

// The pointer node at pre-order position `pos` (the order of Tree::preorder()).
PNode* at_preorder(PNode* root, int pos) {
  std::vector<PNode*> order;
  std::function<void(PNode*)> rec = [&](PNode* n) {
    order.push_back(n);
    if (n->left) {
      rec(n->left.get());
      rec(n->right.get());
    }
  };
  rec(root);
  return order[static_cast<std::size_t>(pos)];
}

// The pre-order position of node i.
int preorder_pos(const Tree& t, int i) {
  const auto pre = t.preorder();
  return static_cast<int>(std::find(pre.begin(), pre.end(), i) - pre.begin());
}

void replace_pointer(PNode* n, const PNode& with) {
  auto c = clone(with);
  *n = std::move(*c);
}

}  // namespace

TEST(GmtTree, LeafAndJoinKeepTheBreadthFirstLayout) {
  const Tree leaf = Tree::leaf({1, 3});
  EXPECT_EQ(leaf.size(), 1);
  EXPECT_TRUE(leaf.node(0).is_leaf());
  EXPECT_EQ(leaf.node(0).dirty, 1);
  EXPECT_EQ(leaf.node(0).has_coef, 0);
  EXPECT_TRUE(leaf.leaf_needs_refit(0));
  EXPECT_EQ(std::vector<int>(leaf.attrs(0).begin(), leaf.attrs(0).end()), (std::vector<int>{1, 3}));
  EXPECT_TRUE(leaf.coef(0).empty());
  EXPECT_EQ(Tree().size(), 1);
  EXPECT_EQ(Tree().attrs(0).size(), 0u);
  Rng rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    std::int64_t tag = 1;
    const Tree l = random_tree(rng, 6, tag), r = random_tree(rng, 6, tag);
    const Tree j = Tree::join(2, 4.5f, l, r);
    ASSERT_EQ(gmt_test::layout_error(j, kCols), "");
    EXPECT_EQ(j.size(), l.size() + r.size() + 1);
    EXPECT_EQ(j.n_leaves(), l.n_leaves() + r.n_leaves());
    EXPECT_EQ(j.n_leaves(), std::count_if(j.nodes().begin(), j.nodes().end(), [](const TreeNode& n) { return n.is_leaf(); }))
        << "n_leaves() is (size + 1) / 2: every test has two children";
    EXPECT_EQ(j.n_internal(), j.size() - j.n_leaves());
    EXPECT_EQ(j.levels(), 1 + std::max(l.levels(), r.levels()));
    EXPECT_EQ(j.model_attributes(), l.model_attributes() + r.model_attributes());
    EXPECT_EQ(j.node(0).left, 1);
    EXPECT_EQ(canon(j), "T2<=4.5#0(" + canon(l) + "," + canon(r) + ")");
    EXPECT_EQ(count_leaves(j), j.n_leaves());
    EXPECT_EQ(count_internal(j), j.n_internal());
    EXPECT_EQ(tree_depth(j), j.levels());
    EXPECT_EQ(count_model_attributes(j), j.model_attributes());
    // levels and depth agree with the pointer tree
    std::function<int(const PNode&)> height = [&](const PNode& n) { return n.left ? 1 + std::max(height(*n.left), height(*n.right)) : 1; };
    EXPECT_EQ(j.levels(), height(*to_pointer(j, 0)));
  }
}

TEST(GmtTree, SubtreeAndPreorderListTheRightNodes) {
  Rng rng(2);
  for (int trial = 0; trial < 50; ++trial) {
    std::int64_t tag = 0;
    const Tree t = random_tree(rng, 7, tag);
    const auto pre = t.preorder();
    ASSERT_EQ(static_cast<int>(pre.size()), t.size());
    // pre-order: the pointer tree's order of tags
    std::vector<std::int64_t> tags;
    std::function<void(const PNode&)> rec = [&](const PNode& n) {
      tags.push_back(n.tag);
      if (n.left) {
        rec(*n.left);
        rec(*n.right);
      }
    };
    rec(*to_pointer(t, 0));
    for (std::size_t k = 0; k < pre.size(); ++k) EXPECT_EQ(t.node(pre[k]).stats.count, tags[k]);
    for (int i = 0; i < t.size(); ++i) {
      const auto sub = t.subtree(i);
      ASSERT_FALSE(sub.empty());
      EXPECT_EQ(sub[0], i);
      // exactly the nodes whose ancestors include i, in breadth-first (ascending) order
      std::vector<int> want;
      for (int k = 0; k < t.size(); ++k) {
        int a = k;
        while (a >= 0 && a != i) a = t.node(a).parent;
        if (a == i) want.push_back(k);
      }
      std::vector<int> got = sub;
      EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
      EXPECT_EQ(got, want);
    }
  }
}

TEST(GmtTree, ExtractReplaceAndMakeLeafCarryEverythingAlong) {
  Rng rng(3);
  for (int trial = 0; trial < 100; ++trial) {
    std::int64_t tag = 0;
    const Tree t = random_tree(rng, 7, tag);
    std::int64_t tag2 = 10000;
    const Tree sub = random_tree(rng, 4, tag2);
    for (int i = 0; i < t.size(); ++i) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " node " + std::to_string(i));
      const Tree e = t.extract(i);
      ASSERT_EQ(gmt_test::layout_error(e, kCols), "");
      EXPECT_EQ(canon(e), canon(t, i));
      EXPECT_EQ(e.size(), static_cast<int>(t.subtree(i).size()));
      // replace: the same index holds the new subtree, the rest is unchanged
      Tree r = t;
      r.replace(i, sub);
      ASSERT_EQ(gmt_test::layout_error(r, kCols), "");
      EXPECT_EQ(canon(r, i), canon(sub));
      auto p = to_pointer(t, 0);
      replace_pointer(at_preorder(p.get(), preorder_pos(t, i)), *to_pointer(sub, 0));
      EXPECT_EQ(canon(r), canon(*p));
      for (int k = 0; k < i; ++k) EXPECT_EQ(r.node(k).stats.count, t.node(k).stats.count) << "nodes before i keep their index";
      // make_leaf: a dirty leaf without coefficients in its place
      Tree m = t;
      m.make_leaf(i, {0, 4});
      ASSERT_EQ(gmt_test::layout_error(m, kCols), "");
      EXPECT_TRUE(m.node(i).is_leaf());
      EXPECT_TRUE(m.leaf_needs_refit(i));
      EXPECT_EQ(std::vector<int>(m.attrs(i).begin(), m.attrs(i).end()), (std::vector<int>{0, 4}));
      EXPECT_EQ(m.size(), t.size() - static_cast<int>(t.subtree(i).size()) + 1);
      auto q = to_pointer(t, 0);
      PNode* qn = at_preorder(q.get(), preorder_pos(t, i));
      PNode leaf;
      leaf.attrs = {0, 4};
      leaf.tag = 0;  // a fresh leaf's statistics
      replace_pointer(qn, leaf);
      EXPECT_EQ(canon(m), canon(*q));
    }
  }
}

TEST(GmtTree, GraftedReplacesDisjointSubtreesAndNamesEverySource) {
  Rng rng(4);
  int grafts = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::int64_t tag = 0;
    const Tree t = random_tree(rng, 7, tag);
    if (t.size() < 5) continue;
    std::int64_t tag2 = 10000;
    const Tree other = random_tree(rng, 5, tag2);
    // Disjoint `at` nodes; sources from `other` or from this tree (a subtree holding no `at` node).
    std::vector<int> at;
    std::vector<char> covered(static_cast<std::size_t>(t.size()), 0);  // in (or above) a chosen subtree
    for (int attempt = 0; attempt < 4; ++attempt) {
      const int i = rng.below_int(t.size());
      bool ok = !covered[static_cast<std::size_t>(i)];
      for (int k : t.subtree(i)) ok = ok && !covered[static_cast<std::size_t>(k)];
      if (!ok) continue;
      at.push_back(i);
      for (int k : t.subtree(i)) covered[static_cast<std::size_t>(k)] = 1;
      for (int a = t.node(i).parent; a >= 0; a = t.node(a).parent) covered[static_cast<std::size_t>(a)] = 1;
    }
    std::vector<Tree::Source> with;
    for (std::size_t k = 0; k < at.size(); ++k) {
      if (rng.bernoulli(0.5)) {
        with.push_back({&other, rng.below_int(other.size())});
        continue;
      }
      // this tree: a node whose subtree holds no `at` node (a child of at[k] for a promote)
      std::vector<int> cand;
      for (int j = 0; j < t.size(); ++j) {
        bool ok = true;
        for (int s : t.subtree(j)) ok = ok && std::find(at.begin(), at.end(), s) == at.end();
        if (ok) cand.push_back(j);
      }
      if (!t.node(at[k]).is_leaf()) cand.push_back(t.node(at[k]).left + rng.below_int(2));
      if (cand.empty()) {  // every subtree holds an `at` leaf
        with.push_back({&other, 0});
        continue;
      }
      with.push_back({&t, cand[rng.below(cand.size())]});
    }
    std::vector<Tree::Source> src;
    const Tree g = t.grafted(at, with, &src);
    ++grafts;
    ASSERT_EQ(gmt_test::layout_error(g, kCols), "");
    // the pointer model: each at node replaced by its source's subtree (all taken from the original)
    auto p = to_pointer(t, 0);
    std::vector<std::pair<PNode*, std::unique_ptr<PNode>>> todo;
    for (std::size_t k = 0; k < at.size(); ++k)
      todo.emplace_back(at_preorder(p.get(), preorder_pos(t, at[k])), to_pointer(*with[k].tree, with[k].node));
    for (auto& [n, w] : todo) replace_pointer(n, *w);
    EXPECT_EQ(canon(g), canon(*p));
    // sources: one per node, each carrying the same test / model / tag
    ASSERT_EQ(static_cast<int>(src.size()), g.size());
    for (int i = 0; i < g.size(); ++i) {
      const Tree& st = *src[static_cast<std::size_t>(i)].tree;
      const int sn = src[static_cast<std::size_t>(i)].node;
      EXPECT_TRUE(&st == &t || &st == &other);
      EXPECT_EQ(st.node(sn).attr, g.node(i).attr);
      EXPECT_EQ(st.node(sn).stats.count, g.node(i).stats.count);
      if (g.node(i).is_leaf()) {
        EXPECT_EQ(std::vector<int>(st.attrs(sn).begin(), st.attrs(sn).end()), std::vector<int>(g.attrs(i).begin(), g.attrs(i).end()));
        EXPECT_EQ(std::vector<double>(st.coef(sn).begin(), st.coef(sn).end()), std::vector<double>(g.coef(i).begin(), g.coef(i).end()));
      } else {
        EXPECT_EQ(st.node(sn).threshold, g.node(i).threshold);
      }
    }
    // without substitutions: a copy
    EXPECT_EQ(canon(t.grafted({}, {})), canon(t));
  }
  EXPECT_GT(grafts, 100);
  EXPECT_THROW((void)Tree().grafted({0}, {}), Error);
}

TEST(GmtTree, ModelsFollowTheirLeaves) {
  // set_model / set_fit / mark_dirty / compact_pools on the leaves of a three-leaf tree
  Tree t = Tree::join(0, 1.0f, Tree::leaf({1, 2, 3}), Tree::join(1, 2.0f, Tree::leaf({}), Tree::leaf({0, 4})));
  ASSERT_EQ(gmt_test::layout_error(t, kCols), "");
  t.set_fit(1, {1, 3}, {0.5, 1.5, -2.0}, 3);  // the rank rule dropped x3: a subset, in place
  t.set_fit(3, {}, {7.0}, 1);
  t.set_fit(4, {0, 4}, {1.0, 2.0, 3.0}, 3);
  EXPECT_EQ(std::vector<int>(t.attrs(1).begin(), t.attrs(1).end()), (std::vector<int>{1, 3}));
  EXPECT_EQ(std::vector<double>(t.coef(1).begin(), t.coef(1).end()), (std::vector<double>{0.5, 1.5, -2.0}));
  EXPECT_EQ(t.node(1).rank, 3);
  EXPECT_FALSE(t.leaf_needs_refit(1));
  EXPECT_EQ(t.model_attributes(), 4);
  // a test's model cannot be set (it would orphan the test's children; n_leaves() counts on that)
  EXPECT_THROW(t.set_model(2, {0}), Error);
  EXPECT_EQ(gmt_test::layout_error(t, kCols), "");
  // a refit with more attributes than the leaf had (a new model) goes to the end of the pools
  t.set_model(3, {0, 1, 2});
  EXPECT_TRUE(t.leaf_needs_refit(3));
  EXPECT_TRUE(t.coef(3).empty());
  EXPECT_EQ(t.node(3).rank, -1);
  t.set_fit(3, {0, 1, 2}, {4.0, 3.0, 2.0, 1.0}, 4);
  EXPECT_EQ(std::vector<double>(t.coef(3).begin(), t.coef(3).end()), (std::vector<double>{4.0, 3.0, 2.0, 1.0}));
  EXPECT_EQ(std::vector<double>(t.coef(1).begin(), t.coef(1).end()), (std::vector<double>{0.5, 1.5, -2.0}));  // untouched
  EXPECT_EQ(std::vector<double>(t.coef(4).begin(), t.coef(4).end()), (std::vector<double>{1.0, 2.0, 3.0}));
  EXPECT_THROW(t.set_fit(4, {0}, {1.0, 2.0, 3.0}, 2), Error);  // one coefficient per attribute + intercept
  // A fitted leaf given a fit of more attributes than it had (set_fit without set_model): its
  // coefficients cannot stay in place (they would run into the next leaf's).
  {
    Tree u = Tree::join(0, 1.0f, Tree::leaf({1}), Tree::leaf({2}));
    u.set_fit(1, {1}, {1.0, 2.0}, 2);
    u.set_fit(2, {2}, {3.0, 4.0}, 2);
    u.set_fit(1, {0, 1, 3}, {5.0, 6.0, 7.0, 8.0}, 4);
    EXPECT_EQ(std::vector<int>(u.attrs(1).begin(), u.attrs(1).end()), (std::vector<int>{0, 1, 3}));
    EXPECT_EQ(std::vector<double>(u.coef(1).begin(), u.coef(1).end()), (std::vector<double>{5.0, 6.0, 7.0, 8.0}));
    EXPECT_EQ(std::vector<int>(u.attrs(2).begin(), u.attrs(2).end()), (std::vector<int>{2}));
    EXPECT_EQ(std::vector<double>(u.coef(2).begin(), u.coef(2).end()), (std::vector<double>{3.0, 4.0}));
    u.set_fit(2, {}, {9.0}, 1);  // fewer: in place
    EXPECT_EQ(std::vector<double>(u.coef(1).begin(), u.coef(1).end()), (std::vector<double>{5.0, 6.0, 7.0, 8.0}));
    EXPECT_EQ(std::vector<double>(u.coef(2).begin(), u.coef(2).end()), (std::vector<double>{9.0}));
    EXPECT_EQ(gmt_test::layout_error(u, kCols), "");
  }
  // mark_dirty: only the leaves below the node
  t.mark_dirty(2);
  EXPECT_FALSE(t.leaf_needs_refit(1));
  EXPECT_TRUE(t.node(3).dirty && t.node(4).dirty);
  EXPECT_EQ(t.node(3).has_coef, 1);  // dirty keeps the coefficients until the refit
  // many edits, then compact_pools: the pools shrink, every leaf keeps its model
  for (int k = 0; k < 40; ++k) {
    t.set_model(4, {k % kCols});
    t.set_fit(4, {k % kCols}, {double(k), 1.0}, 2);
  }
  const std::string before = canon(t);
  const std::size_t pool = t.attr_pool().size(), cpool = t.coef_pool().size();
  Tree given = t;  // the count handed in (as the EA's fitness step does) compacts the same way
  given.compact_pools(given.model_attributes());
  t.compact_pools();
  EXPECT_EQ(canon(given), canon(t));
  EXPECT_EQ(given.attr_pool(), t.attr_pool());
  EXPECT_EQ(given.coef_pool(), t.coef_pool());
  EXPECT_EQ(canon(t), before);
  EXPECT_LT(t.attr_pool().size(), pool);
  EXPECT_LT(t.coef_pool().size(), cpool);
  EXPECT_EQ(t.attr_pool().size(), static_cast<std::size_t>(t.model_attributes()));
  EXPECT_EQ(gmt_test::layout_error(t, kCols), "");
  // A tree copy is independent (three vectors).
  Tree c = t;
  c.set_fit(1, {1}, {9.0, 9.0}, 2);
  EXPECT_EQ(canon(t), before);
  // same_model: structure, thresholds and models; statistics and flags ignored
  Tree s = t;
  s.node(1).stats.count = 12345;
  s.mark_dirty(0);
  EXPECT_TRUE(s.same_model(t));
  s.node(2).threshold = 2.5f;
  EXPECT_FALSE(s.same_model(t));
  EXPECT_FALSE(c.same_model(t));
  Tree u = t;
  u.set_model(3, {0, 1, 2});  // same attributes, no coefficients
  EXPECT_FALSE(u.same_model(t));
  EXPECT_FALSE(Tree::leaf({}).same_model(t));
}

TEST(GmtTree, RouteAndPredictFollowTheTests) {
  Dataset d = gmt_test::make_dataset(300, kCols, 6, gmt_test::piecewise, 0.1);
  for (std::size_t r = 0; r < d.rows(); r += 7) d.set_missing(r, r % kCols);  // NaN goes right
  Rng rng(6);
  for (int trial = 0; trial < 20; ++trial) {
    std::int64_t tag = 0;
    Tree t = random_tree(rng, 6, tag);
    for (int i = 0; i < t.size(); ++i)
      if (t.node(i).is_leaf() && !t.node(i).has_coef) {
        const auto a = t.attrs(i);
        t.set_fit(i, {a.begin(), a.end()}, std::vector<double>(a.size() + 1, 0.25 * i), 1);
      }
    const auto p = to_pointer(t, 0);
    for (std::size_t r = 0; r < d.rows(); ++r) {
      const PNode* n = p.get();
      while (n->left) {
        const float x = d.at(r, static_cast<std::size_t>(n->attr));
        n = x <= n->threshold ? n->left.get() : n->right.get();
      }
      const int leaf = t.route(d, r);
      ASSERT_TRUE(t.node(leaf).is_leaf());
      EXPECT_EQ(t.node(leaf).stats.count, n->tag);
      double y = n->coef[0];
      for (std::size_t k = 0; k < n->attrs.size(); ++k) y += n->coef[k + 1] * static_cast<double>(d.at(r, static_cast<std::size_t>(n->attrs[k])));
      const double got = t.predict(d, r);
      if (std::isnan(y)) {
        EXPECT_TRUE(std::isnan(got)) << "row " << r;  // a NaN cell in the leaf's model
      } else {
        EXPECT_EQ(got, y) << "row " << r;
      }
    }
  }
}

TEST(GmtTree, FromPartsAcceptsWellFormedArraysAndRecomputesParentAndDepth) {
  Rng rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::int64_t tag = 0;
    const Tree t = random_tree(rng, 7, tag);
    std::vector<TreeNode> nodes = t.nodes();
    for (TreeNode& n : nodes) {  // garbage where from_parts recomputes
      n.parent = 77;
      n.depth = -3;
    }
    const Tree b = Tree::from_parts(nodes, t.attr_pool(), t.coef_pool(), kCols, "parts");
    EXPECT_EQ(gmt_test::layout_error(b, kCols), "");
    EXPECT_EQ(canon(b), canon(t));
    EXPECT_TRUE(b.same_model(t));
    for (int i = 0; i < t.size(); ++i) {
      EXPECT_EQ(b.node(i).parent, t.node(i).parent);
      EXPECT_EQ(b.node(i).depth, t.node(i).depth);
    }
  }
}

TEST(GmtTree, FromPartsRejectsMalformedArrays) {
  // x1 <= 1 ? LM(x2) [clean] : (x2 <= 2 ? LM() : LM(x1, x5)) over 5 attributes
  Tree t = Tree::join(0, 1.0f, Tree::leaf({1}), Tree::join(1, 2.0f, Tree::leaf({}), Tree::leaf({0, 4})));
  t.set_fit(1, {1}, {0.5, 1.5}, 2);
  auto error_of = [&](auto edit, int cols = kCols) {
    std::vector<TreeNode> nodes = t.nodes();
    std::vector<std::int32_t> attrs = t.attr_pool();
    std::vector<double> coef = t.coef_pool();
    edit(nodes, attrs, coef);
    try {
      (void)Tree::from_parts(nodes, attrs, coef, cols, "parts.bin");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  using N = std::vector<TreeNode>;
  using A = std::vector<std::int32_t>;
  using C = std::vector<double>;
  EXPECT_EQ(error_of([](N&, A&, C&) {}), "");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n[3].has_coef = 7; }, kCols), "");  // flags are booleans: normalised
  EXPECT_EQ(error_of([](N& n, A&, C&) { n.resize(0); }), "parts.bin: a tree without nodes");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n[0].attr = 5; }), "parts.bin: node 0 tests attribute 5 of 5");
  EXPECT_EQ(error_of([](N&, A&, C&) {}, 4), "parts.bin: leaf 4 has model attributes out of range or order");  // x5 of 4
  EXPECT_EQ(error_of([](N& n, A&, C&) { n[2].left = 4; }), "parts.bin: node 2 has its children out of place");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n[0].left = 2; }), "parts.bin: node 0 has its children out of place");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n.pop_back(); }), "parts.bin: node 2 has its children out of place");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n.push_back(TreeNode{}); }), "parts.bin: nodes that no test reaches");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n[2].attr = kLeafNode; }), "parts.bin: nodes that no test reaches");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n[3].attr = -7; }), "parts.bin: node 3 has attribute -7");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n[4].m_off = -1; }), "parts.bin: leaf 4 has its model outside the pool");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n[4].m_len = 6; }), "parts.bin: leaf 4 has its model outside the pool");
  EXPECT_EQ(error_of([](N& n, A& a, C&) { a.resize(static_cast<std::size_t>(n[4].m_off) + 1); }),
            "parts.bin: leaf 4 has its model outside the pool");
  EXPECT_EQ(error_of([](N& n, A& a, C&) { std::swap(a[static_cast<std::size_t>(n[4].m_off)], a[static_cast<std::size_t>(n[4].m_off) + 1]); }),
            "parts.bin: leaf 4 has model attributes out of range or order");
  EXPECT_EQ(error_of([](N& n, A& a, C&) { a[static_cast<std::size_t>(n[1].m_off)] = -1; }),
            "parts.bin: leaf 1 has model attributes out of range or order");
  EXPECT_EQ(error_of([](N& n, A& a, C&) { a[static_cast<std::size_t>(n[4].m_off) + 1] = 0; }),  // a repeated attribute
            "parts.bin: leaf 4 has model attributes out of range or order");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n[1].c_off = -1; }), "parts.bin: leaf 1 has its coefficients outside the pool");
  EXPECT_EQ(error_of([](N&, A&, C& c) { c.pop_back(); }), "parts.bin: leaf 1 has its coefficients outside the pool");
  EXPECT_EQ(error_of([](N& n, A&, C&) { n[4].has_coef = 1; n[4].c_off = 0; }), "parts.bin: leaf 4 has its coefficients outside the pool");
}

// flatten (the CUDA faithful path's 2^levels layout): node at position p has its children at 2p + 1
// and 2p + 2; leaf slots are the leaves in breadth-first order, with their models.
TEST(GmtTree, FlattenPlacesEveryNodeAtItsHeapPosition) {
  Rng rng(8);
  for (int trial = 0; trial < 60; ++trial) {
    std::int64_t tag = 0;
    const Tree t = random_tree(rng, 8, tag);
    FlatTree f;
    flatten(t, 99 + static_cast<std::uint64_t>(trial), kCols, f);
    EXPECT_EQ(f.levels, t.levels());
    EXPECT_EQ(f.cols, kCols);
    EXPECT_EQ(f.salt, 99u + static_cast<std::uint64_t>(trial));
    ASSERT_EQ(f.n_nodes(), (1 << t.levels()) - 1);
    ASSERT_EQ(f.n_leaves(), t.n_leaves());
    std::vector<char> used(static_cast<std::size_t>(f.n_nodes()), 0);
    std::vector<int> compact_leaves;
    std::function<void(int, std::size_t)> walk = [&](int i, std::size_t p) {
      used[p] = 1;
      const TreeNode& n = t.node(i);
      if (!n.is_leaf()) {
        EXPECT_EQ(f.attr[p], n.attr);
        EXPECT_EQ(f.threshold[p], n.threshold);
        EXPECT_EQ(f.leaf_slot[p], -1);
        walk(n.left, 2 * p + 1);
        walk(n.left + 1, 2 * p + 2);
        return;
      }
      EXPECT_EQ(f.attr[p], kLeafNode);
      const int slot = f.leaf_slot[p];
      ASSERT_GE(slot, 0);
      const auto s = static_cast<std::size_t>(slot);
      EXPECT_EQ(f.leaf_node[s], static_cast<std::int32_t>(p));
      EXPECT_EQ(f.compact[s], i);
      EXPECT_EQ(f.refit[s], t.leaf_needs_refit(i) ? 1 : 0);
      std::vector<std::uint8_t> mask(kCols, 0);
      std::vector<double> coef(kCols + 1, 0.0);
      for (std::size_t k = 0; k < t.attrs(i).size(); ++k) mask[static_cast<std::size_t>(t.attrs(i)[k])] = 1;
      if (!t.leaf_needs_refit(i)) {
        coef[0] = t.coef(i)[0];
        for (std::size_t k = 0; k < t.attrs(i).size(); ++k) coef[static_cast<std::size_t>(t.attrs(i)[k]) + 1] = t.coef(i)[k + 1];
      }
      EXPECT_EQ(std::vector<std::uint8_t>(f.mask.begin() + slot * kCols, f.mask.begin() + (slot + 1) * kCols), mask);
      EXPECT_EQ(std::vector<double>(f.coef.begin() + slot * (kCols + 1), f.coef.begin() + (slot + 1) * (kCols + 1)), coef);
    };
    walk(0, 0);
    for (int p = 0; p < f.n_nodes(); ++p)
      if (!used[static_cast<std::size_t>(p)]) {
        EXPECT_EQ(f.attr[static_cast<std::size_t>(p)], kAbsentNode);
      }
    // slots: the compact tree's leaves in breadth-first order
    EXPECT_TRUE(std::is_sorted(f.compact.begin(), f.compact.end()));
    EXPECT_TRUE(std::is_sorted(f.leaf_node.begin(), f.leaf_node.end()));
  }
  // More than 24 levels: an error, not 2^25 slots.
  Tree deep = Tree::leaf({});
  for (int k = 0; k < 24; ++k) deep = Tree::join(0, float(k), Tree::leaf({}), deep);
  EXPECT_EQ(deep.levels(), 25);
  FlatTree f;
  EXPECT_THROW(flatten(deep, 1, kCols, f), Error);
}
