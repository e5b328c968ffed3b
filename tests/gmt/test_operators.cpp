// Every operator keeps a valid tree that respects the data (no node under min_leaf_rows after
// evaluation and repair); dipolar tests split their dipole.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <memory>

#include "algorithms/gmt/ea.hpp"
#include "common.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {

void expect_valid(const Tree& t, int cols, int max_depth, int min_rows, bool evaluated) {
  ASSERT_EQ(gmt_test::layout_error(t, cols), "");
  ASSERT_LE(t.levels(), max_depth);
  for (int i = 0; i < t.size(); ++i) {
    const TreeNode& n = t.node(i);
    if (n.is_leaf()) {
      if (evaluated) {
        EXPECT_EQ(n.has_coef, 1) << "node " << i;
        EXPECT_EQ(n.dirty, 0) << "node " << i;
        EXPECT_EQ(t.coef(i).size(), t.attrs(i).size() + 1) << "node " << i;
        EXPECT_GE(n.stats.count, min_rows) << "node " << i;
      }
      continue;
    }
    if (evaluated) {
      EXPECT_EQ(n.stats.count, t.node(n.left).stats.count + t.node(n.left + 1).stats.count) << "node " << i;
    }
  }
}

struct Fixture {
  Dataset d = gmt_test::make_dataset(1500, 4, 21, gmt_test::piecewise, 0.1);
  std::unique_ptr<ModelTreeEvaluator> eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
  PhaseTimer timer;
  GmtParams p;
  std::unique_ptr<GmtEA> ea;
  Fixture() {
    p.population = 8;
    p.max_depth = 8;
    eval->prepare(d);
    ea = std::make_unique<GmtEA>(p, *eval, d, timer);
  }
  Individual fresh(Rng& rng) {
    Individual ind;
    ind.tree = ea->init_tree(rng);
    ea->evaluate({&ind});
    return ind;
  }
};

}  // namespace

TEST(GmtOperators, InitialTreesAreValidAndDipolar) {
  Fixture fx;
  Rng rng(1);
  int internal = 0;
  for (int i = 0; i < 20; ++i) {
    Individual ind = fx.fresh(rng);
    expect_valid(ind.tree, 4, fx.p.max_depth, fx.p.min_leaf_rows, true);
    EXPECT_LE(tree_depth(ind.tree), fx.p.init_max_depth);
    internal += count_internal(ind.tree);
    EXPECT_TRUE(std::isfinite(ind.fitness));
  }
  EXPECT_GT(internal, 0);  // the piecewise target is split
}

TEST(GmtOperators, EveryMutationVariantKeepsTheTreeValid) {
  Fixture fx;
  Rng rng(2);
  using Op = std::function<bool(Tree&, int, Rng&)>;
  const std::vector<std::pair<std::string, Op>> ops = {
      {"new_test", [&](Tree& t, int n, Rng& r) { return fx.ea->mutate_new_test(t, n, r); }},
      {"shift_threshold", [&](Tree& t, int n, Rng& r) { return fx.ea->mutate_shift_threshold(t, n, r); }},
      {"swap_test", [&](Tree& t, int n, Rng& r) { return fx.ea->mutate_swap_test(t, n, r); }},
      {"prune", [&](Tree& t, int n, Rng& r) { return fx.ea->mutate_prune(t, n, r); }},
      {"change_model", [&](Tree& t, int n, Rng& r) { return fx.ea->mutate_change_model(t, n, r); }},
      {"expand", [&](Tree& t, int n, Rng& r) { return fx.ea->mutate_expand(t, n, r); }},
  };
  for (const auto& [name, op] : ops) {
    int applied = 0;
    for (int trial = 0; trial < 15; ++trial) {
      Individual ind = fx.fresh(rng);
      const int target = rng.below_int(ind.tree.size());
      if (!op(ind.tree, target, rng)) continue;
      ++applied;
      expect_valid(ind.tree, 4, fx.p.max_depth, 0, false);
      // The changed subtree (at the same index: nodes before it keep theirs) is dirty.
      for (int k : ind.tree.subtree(target))
        if (ind.tree.node(k).is_leaf()) {
          EXPECT_TRUE(ind.tree.leaf_needs_refit(k)) << name << " node " << k;
        }
      fx.ea->evaluate({&ind});
      expect_valid(ind.tree, 4, fx.p.max_depth, fx.p.min_leaf_rows, true);
    }
    EXPECT_GT(applied, 0) << name << " never applied";
  }
}

TEST(GmtOperators, NewTestSplitsItsDipole) {
  Fixture fx;
  Rng rng(3);
  int checked = 0;
  for (int trial = 0; trial < 30 && checked < 10; ++trial) {
    Individual ind = fx.fresh(rng);
    Tree& t = ind.tree;
    if (t.node(0).is_leaf()) {
      if (!fx.ea->mutate_expand(t, 0, rng)) continue;
    } else if (!fx.ea->mutate_new_test(t, 0, rng)) {
      continue;
    }
    // The dipole was (rand, farther extreme) of the node before the change.
    const TreeNode& root = t.node(0);
    const auto a = static_cast<std::size_t>(root.stats.dipole_rand);
    const auto lo = static_cast<std::size_t>(root.stats.dipole_lo), hi = static_cast<std::size_t>(root.stats.dipole_hi);
    const auto b = std::fabs(fx.d.target(hi) - fx.d.target(a)) >= std::fabs(fx.d.target(lo) - fx.d.target(a)) ? hi : lo;
    const bool a_left = fx.d.at(a, static_cast<std::size_t>(root.attr)) <= root.threshold;
    const bool b_left = fx.d.at(b, static_cast<std::size_t>(root.attr)) <= root.threshold;
    EXPECT_NE(a_left, b_left);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(GmtOperators, EveryCrossoverVariantKeepsTreesValid) {
  Fixture fx;
  Rng rng(4);
  for (int variant = 0; variant < 4; ++variant) {
    GmtParams p = fx.p;
    p.cx_subtrees = variant == 0;
    p.cx_tests = variant == 1;
    p.cx_branches = variant == 2;
    p.cx_asymmetric = variant == 3;
    GmtEA ea(p, *fx.eval, fx.d, fx.timer);
    int changed = 0;
    for (int trial = 0; trial < 20; ++trial) {
      Individual a = fx.fresh(rng), b = fx.fresh(rng);
      const int c = ea.crossover(a, b, rng);
      if (c == 0) continue;
      ++changed;
      if (variant == 3) {
        EXPECT_TRUE(c == 1 || c == 2);
      }
      expect_valid(a.tree, 4, p.max_depth, 0, false);
      expect_valid(b.tree, 4, p.max_depth, 0, false);
      ea.evaluate({&a, &b});
      expect_valid(a.tree, 4, p.max_depth, p.min_leaf_rows, true);
      expect_valid(b.tree, 4, p.max_depth, p.min_leaf_rows, true);
    }
    EXPECT_GT(changed, 0) << "crossover variant " << variant << " never applied";
  }
}

TEST(GmtOperators, EmptyLeavesAllowedOnlyWhenAsked) {
  Fixture fx;
  // right side empty
  auto make = [] { return Tree::join(0, 1000.0f, Tree::leaf({0}), Tree::leaf({})); };
  Individual ind;
  ind.tree = make();
  fx.ea->evaluate({&ind});
  EXPECT_TRUE(ind.tree.node(0).is_leaf());  // repaired: the split with an empty side was pruned
  EXPECT_EQ(ind.tree.size(), 1);
  EXPECT_EQ(ind.tree.node(0).stats.count, static_cast<std::int64_t>(fx.d.rows()));
  EXPECT_EQ(std::vector<int>(ind.tree.attrs(0).begin(), ind.tree.attrs(0).end()), std::vector<int>{0});  // the big leaf's model
  GmtParams p = fx.p;
  p.min_leaf_rows = 0;
  GmtEA allow(p, *fx.eval, fx.d, fx.timer);
  Individual keep;
  keep.tree = make();
  allow.evaluate({&keep});
  EXPECT_FALSE(keep.tree.node(0).is_leaf());
  EXPECT_EQ(keep.tree.node(2).stats.count, 0);
}

TEST(GmtOperators, LinearRankingFavoursTheBest) {
  Fixture fx;
  Rng rng(5);
  std::vector<int> hits(10, 0);
  for (int i = 0; i < 20000; ++i) ++hits[fx.ea->rank_select(10, rng)];
  EXPECT_GT(hits[0], hits[9] * 5);  // pressure 2: P(best) = 2/n, P(worst) = 0
  EXPECT_LT(hits[9], 5);
}

namespace {
// x1 <= t1 ? leaf : (x2 <= t2 ? leaf : leaf); breadth-first 0 root, 1 LM(x1), 2 the x2 test,
// 3 LM(), 4 LM(x1, x2)
Tree two_tests(float t1, float t2) { return Tree::join(0, t1, Tree::leaf({0}), Tree::join(1, t2, Tree::leaf({}), Tree::leaf({0, 1}))); }
}  // namespace

TEST(GmtOperators, SwapTestExchangesTheTestWithADescendant) {
  Fixture fx;
  Rng rng(6);
  Individual ind;
  ind.tree = two_tests(3.0f, 5.0f);
  fx.ea->evaluate({&ind});
  Tree& t = ind.tree;
  ASSERT_FALSE(t.node(2).is_leaf());
  ASSERT_TRUE(fx.ea->mutate_swap_test(t, 0, rng));
  EXPECT_EQ(t.node(0).attr, 1);
  EXPECT_EQ(t.node(0).threshold, 5.0f);
  EXPECT_EQ(t.node(2).attr, 0);
  EXPECT_EQ(t.node(2).threshold, 3.0f);
  EXPECT_TRUE(t.node(1).dirty && t.node(3).dirty && t.node(4).dirty);
  // A node without internal descendants has nothing to swap with.
  EXPECT_FALSE(fx.ea->mutate_swap_test(t, 2, rng));
  fx.ea->evaluate({&ind});
  expect_valid(t, 4, fx.p.max_depth, fx.p.min_leaf_rows, true);
}

TEST(GmtOperators, RepairPromotesThePopulatedSubtreeOrCollapses) {
  Fixture fx;
  // The root's test sends no row left (x1 >= 0): 'promote' puts the right subtree in its place,
  // 'collapse' turns the root into a leaf.
  Individual ind;
  ind.tree = two_tests(-1.0f, 5.0f);
  const std::int64_t repairs0 = fx.eval->counters().repairs;
  fx.ea->evaluate({&ind});
  EXPECT_EQ(fx.eval->counters().repairs, repairs0 + 1);
  const Tree& t = ind.tree;
  ASSERT_FALSE(t.node(0).is_leaf());
  EXPECT_EQ(t.size(), 3);
  EXPECT_EQ(t.node(0).attr, 1);
  EXPECT_EQ(t.node(0).threshold, 5.0f);
  EXPECT_EQ(t.node(0).stats.count, static_cast<std::int64_t>(fx.d.rows()));
  EXPECT_EQ(std::vector<int>(t.attrs(2).begin(), t.attrs(2).end()), (std::vector<int>{0, 1}));
  expect_valid(t, 4, fx.p.max_depth, fx.p.min_leaf_rows, true);
  GmtParams p = fx.p;
  p.repair = RepairMode::collapse;
  GmtEA ea(p, *fx.eval, fx.d, fx.timer);
  Individual c;
  c.tree = two_tests(-1.0f, 5.0f);
  ea.evaluate({&c});
  EXPECT_TRUE(c.tree.node(0).is_leaf());
  EXPECT_EQ(c.tree.size(), 1);
  EXPECT_EQ(c.tree.attrs(0).size(), 0u);  // the big child was not a leaf: a constant leaf
  EXPECT_EQ(c.tree.node(0).stats.count, static_cast<std::int64_t>(fx.d.rows()));
}

TEST(GmtOperators, ShiftThresholdMovesTowardsARowOfTheNode) {
  Fixture fx;
  Rng rng(7);
  int moved = 0;
  for (int trial = 0; trial < 20; ++trial) {
    Individual ind;
    ind.tree = two_tests(3.0f, 5.0f);
    fx.ea->evaluate({&ind});
    Tree& t = ind.tree;
    const int n = 2;  // rows with x1 > 3
    const auto r = static_cast<std::size_t>(t.node(n).stats.dipole_rand);
    ASSERT_GT(fx.d.at(r, 0), 3.0f);  // dipole_rand is a row of the node
    const float x = fx.d.at(r, 1), before = t.node(n).threshold;
    if (!fx.ea->mutate_shift_threshold(t, n, rng)) continue;
    ++moved;
    EXPECT_GE(t.node(n).threshold, std::min(before, x));
    EXPECT_LE(t.node(n).threshold, std::max(before, x));
    EXPECT_EQ(t.node(n).attr, 1);
    EXPECT_TRUE(t.node(3).dirty && t.node(4).dirty);
    EXPECT_FALSE(t.node(1).dirty);  // outside the changed subtree
  }
  EXPECT_GT(moved, 10);
}

TEST(GmtOperators, DipoleRandIsAUniformRowOfTheNode) {
  // Root x1 <= 1: about 10 % of the rows go left. The random dipole row of the root must come
  // from the left child about 10 % of the time (a fair coin between the children gave 50 %).
  Fixture fx;
  int left = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    Individual ind;
    ind.tree = two_tests(1.0f, 5.0f);
    fx.ea->evaluate({&ind});  // a new salt each time
    const auto r = static_cast<std::size_t>(ind.tree.node(0).stats.dipole_rand);
    if (fx.d.at(r, 0) <= 1.0f) ++left;
    // the root's draw is the smaller of its children's (a min-reduction)
    const NodeStats &a = ind.tree.node(1).stats, &b = ind.tree.node(2).stats;
    EXPECT_TRUE(ind.tree.node(0).stats.dipole_rand == a.dipole_rand || ind.tree.node(0).stats.dipole_rand == b.dipole_rand);
  }
  const double share = double(left) / trials;
  EXPECT_GT(share, 0.04);
  EXPECT_LT(share, 0.18);
}

// center_thresholds: every test moves to the midpoint of its training gap, the training partition
// (and so every training prediction) is unchanged, and a second call moves nothing.
TEST(GmtTree, CenterThresholdsKeepsTheTrainingPartition) {
  const Dataset d = gmt_test::make_dataset(400, 2, 5, gmt_test::piecewise, 0.1);
  // exactly on a training value: the gap is to its right
  Tree t = Tree::join(0, d.at(17, 0), Tree::leaf({0}), Tree::join(1, 4.0f, Tree::leaf({0}), Tree::leaf({0})));
  const int leaves[] = {1, 3, 4};
  for (int k = 0; k < 3; ++k) t.set_fit(leaves[k], {0}, {1.0 + k, 0.5 - k}, 2);
  std::vector<double> before(d.rows());
  for (std::size_t r = 0; r < d.rows(); ++r) before[r] = t.predict(d, r);
  const float t0 = t.node(0).threshold;
  EXPECT_EQ(center_thresholds(t, d), 2);
  EXPECT_GT(t.node(0).threshold, t0);
  float next_above = std::numeric_limits<float>::infinity();
  for (std::size_t r = 0; r < d.rows(); ++r)
    if (d.at(r, 0) > t0) next_above = std::min(next_above, d.at(r, 0));
  EXPECT_LT(t.node(0).threshold, next_above);
  EXPECT_FLOAT_EQ(t.node(0).threshold, static_cast<float>(0.5 * (double(t0) + double(next_above))));
  for (std::size_t r = 0; r < d.rows(); ++r) EXPECT_EQ(t.predict(d, r), before[r]) << "row " << r;
  EXPECT_EQ(center_thresholds(t, d), 0);
}
