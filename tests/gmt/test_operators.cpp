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

void expect_valid(const Node* n, int cols, int depth, int max_depth, int min_rows, bool evaluated) {
  ASSERT_LE(depth, max_depth);
  if (n->is_leaf()) {
    EXPECT_FALSE(n->left || n->right);
    for (std::size_t k = 0; k < n->model_attrs.size(); ++k) {
      EXPECT_GE(n->model_attrs[k], 0);
      EXPECT_LT(n->model_attrs[k], cols);
      if (k > 0) EXPECT_LT(n->model_attrs[k - 1], n->model_attrs[k]);
    }
    if (evaluated) {
      EXPECT_EQ(n->coef.size(), n->model_attrs.size() + 1);
      EXPECT_GE(n->stats.count, min_rows);
    }
    return;
  }
  ASSERT_TRUE(n->left && n->right);
  EXPECT_GE(n->attr, 0);
  EXPECT_LT(n->attr, cols);
  if (evaluated) EXPECT_EQ(n->stats.count, n->left->stats.count + n->right->stats.count);
  expect_valid(n->left.get(), cols, depth + 1, max_depth, min_rows, evaluated);
  expect_valid(n->right.get(), cols, depth + 1, max_depth, min_rows, evaluated);
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
    ind.root = ea->init_tree(rng);
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
    expect_valid(ind.root.get(), 4, 1, fx.p.max_depth, fx.p.min_leaf_rows, true);
    EXPECT_LE(tree_depth(ind.root.get()), fx.p.init_max_depth);
    internal += count_internal(ind.root.get());
    EXPECT_TRUE(std::isfinite(ind.fitness));
  }
  EXPECT_GT(internal, 0);  // the piecewise target is split
}

TEST(GmtOperators, EveryMutationVariantKeepsTheTreeValid) {
  Fixture fx;
  Rng rng(2);
  using Op = std::function<bool(Node*, int, Rng&)>;
  const std::vector<std::pair<std::string, Op>> ops = {
      {"new_test", [&](Node* n, int, Rng& r) { return fx.ea->mutate_new_test(n, r); }},
      {"shift_threshold", [&](Node* n, int, Rng& r) { return fx.ea->mutate_shift_threshold(n, r); }},
      {"swap_test", [&](Node* n, int, Rng& r) { return fx.ea->mutate_swap_test(n, r); }},
      {"prune", [&](Node* n, int, Rng& r) { return fx.ea->mutate_prune(n, r); }},
      {"change_model", [&](Node* n, int, Rng& r) { return fx.ea->mutate_change_model(n, r); }},
      {"expand", [&](Node* n, int depth, Rng& r) { return fx.ea->mutate_expand(n, depth + 1, r); }},
  };
  for (const auto& [name, op] : ops) {
    int applied = 0;
    for (int trial = 0; trial < 15; ++trial) {
      Individual ind = fx.fresh(rng);
      auto nodes = collect_nodes(ind.root.get());
      const NodeRef& target = nodes[rng.below(nodes.size())];
      if (!op(target.node, target.depth, rng)) continue;
      ++applied;
      expect_valid(ind.root.get(), 4, 1, fx.p.max_depth, 0, false);
      fx.ea->evaluate({&ind});
      expect_valid(ind.root.get(), 4, 1, fx.p.max_depth, fx.p.min_leaf_rows, true);
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
    Node* root = ind.root.get();
    if (root->is_leaf()) {
      if (!fx.ea->mutate_expand(root, 0, rng)) continue;
    } else if (!fx.ea->mutate_new_test(root, rng)) {
      continue;
    }
    // The dipole was (rand, farther extreme) of the node before the change.
    const auto a = static_cast<std::size_t>(root->stats.dipole_rand);
    const auto lo = static_cast<std::size_t>(root->stats.dipole_lo), hi = static_cast<std::size_t>(root->stats.dipole_hi);
    const auto b = std::fabs(fx.d.target(hi) - fx.d.target(a)) >= std::fabs(fx.d.target(lo) - fx.d.target(a)) ? hi : lo;
    const bool a_left = fx.d.at(a, static_cast<std::size_t>(root->attr)) <= root->threshold;
    const bool b_left = fx.d.at(b, static_cast<std::size_t>(root->attr)) <= root->threshold;
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
      if (variant == 3) EXPECT_TRUE(c == 1 || c == 2);
      ea.evaluate({&a, &b});
      expect_valid(a.root.get(), 4, 1, p.max_depth, p.min_leaf_rows, true);
      expect_valid(b.root.get(), 4, 1, p.max_depth, p.min_leaf_rows, true);
    }
    EXPECT_GT(changed, 0) << "crossover variant " << variant << " never applied";
  }
}

TEST(GmtOperators, EmptyLeavesAllowedOnlyWhenAsked) {
  Fixture fx;
  auto make = [] {
    auto root = std::make_unique<Node>();
    root->attr = 0;
    root->threshold = 1000.0f;  // right side empty
    root->left = std::make_unique<Node>();
    root->left->make_leaf({0});
    root->right = std::make_unique<Node>();
    root->right->make_leaf({});
    return root;
  };
  Individual ind;
  ind.root = make();
  fx.ea->evaluate({&ind});
  EXPECT_TRUE(ind.root->is_leaf());  // repaired: the split with an empty side was pruned
  GmtParams p = fx.p;
  p.min_leaf_rows = 0;
  GmtEA allow(p, *fx.eval, fx.d, fx.timer);
  Individual keep;
  keep.root = make();
  allow.evaluate({&keep});
  EXPECT_FALSE(keep.root->is_leaf());
  EXPECT_EQ(keep.root->right->stats.count, 0);
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
// x1 <= t1 ? leaf : (x2 <= t2 ? leaf : leaf)
std::unique_ptr<Node> two_tests(float t1, float t2) {
  auto root = std::make_unique<Node>();
  root->attr = 0;
  root->threshold = t1;
  root->left = std::make_unique<Node>();
  root->left->make_leaf({0});
  root->right = std::make_unique<Node>();
  root->right->attr = 1;
  root->right->threshold = t2;
  root->right->left = std::make_unique<Node>();
  root->right->left->make_leaf({});
  root->right->right = std::make_unique<Node>();
  root->right->right->make_leaf({0, 1});
  return root;
}
}  // namespace

TEST(GmtOperators, SwapTestExchangesTheTestWithADescendant) {
  Fixture fx;
  Rng rng(6);
  Individual ind;
  ind.root = two_tests(3.0f, 5.0f);
  fx.ea->evaluate({&ind});
  ASSERT_FALSE(ind.root->right->is_leaf());
  ASSERT_TRUE(fx.ea->mutate_swap_test(ind.root.get(), rng));
  EXPECT_EQ(ind.root->attr, 1);
  EXPECT_EQ(ind.root->threshold, 5.0f);
  EXPECT_EQ(ind.root->right->attr, 0);
  EXPECT_EQ(ind.root->right->threshold, 3.0f);
  EXPECT_TRUE(ind.root->left->dirty && ind.root->right->left->dirty && ind.root->right->right->dirty);
  // A node without internal descendants has nothing to swap with.
  EXPECT_FALSE(fx.ea->mutate_swap_test(ind.root->right.get(), rng));
  fx.ea->evaluate({&ind});
  expect_valid(ind.root.get(), 4, 1, fx.p.max_depth, fx.p.min_leaf_rows, true);
}

TEST(GmtOperators, RepairPromotesThePopulatedSubtreeOrCollapses) {
  Fixture fx;
  // The root's test sends no row left (x1 >= 0): 'promote' puts the right subtree in its place,
  // 'collapse' turns the root into a leaf.
  Individual ind;
  ind.root = two_tests(-1.0f, 5.0f);
  fx.ea->evaluate({&ind});
  ASSERT_FALSE(ind.root->is_leaf());
  EXPECT_EQ(ind.root->attr, 1);
  EXPECT_EQ(ind.root->threshold, 5.0f);
  EXPECT_EQ(ind.root->stats.count, static_cast<std::int64_t>(fx.d.rows()));
  EXPECT_EQ(ind.root->right->model_attrs, (std::vector<int>{0, 1}));
  expect_valid(ind.root.get(), 4, 1, fx.p.max_depth, fx.p.min_leaf_rows, true);
  GmtParams p = fx.p;
  p.repair = RepairMode::collapse;
  GmtEA ea(p, *fx.eval, fx.d, fx.timer);
  Individual c;
  c.root = two_tests(-1.0f, 5.0f);
  ea.evaluate({&c});
  EXPECT_TRUE(c.root->is_leaf());
}

TEST(GmtOperators, ShiftThresholdMovesTowardsARowOfTheNode) {
  Fixture fx;
  Rng rng(7);
  int moved = 0;
  for (int trial = 0; trial < 20; ++trial) {
    Individual ind;
    ind.root = two_tests(3.0f, 5.0f);
    fx.ea->evaluate({&ind});
    Node* n = ind.root->right.get();  // rows with x1 > 3
    const auto r = static_cast<std::size_t>(n->stats.dipole_rand);
    ASSERT_GT(fx.d.at(r, 0), 3.0f);  // dipole_rand is a row of the node
    const float x = fx.d.at(r, 1), before = n->threshold;
    if (!fx.ea->mutate_shift_threshold(n, rng)) continue;
    ++moved;
    EXPECT_GE(n->threshold, std::min(before, x));
    EXPECT_LE(n->threshold, std::max(before, x));
    EXPECT_EQ(n->attr, 1);
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
    ind.root = two_tests(1.0f, 5.0f);
    fx.ea->evaluate({&ind});  // a new salt each time
    const auto r = static_cast<std::size_t>(ind.root->stats.dipole_rand);
    if (fx.d.at(r, 0) <= 1.0f) ++left;
  }
  const double share = double(left) / trials;
  EXPECT_GT(share, 0.04);
  EXPECT_LT(share, 0.18);
}

// center_thresholds: every test moves to the midpoint of its training gap, the training partition
// (and so every training prediction) is unchanged, and a second call moves nothing.
TEST(GmtTree, CenterThresholdsKeepsTheTrainingPartition) {
  const Dataset d = gmt_test::make_dataset(400, 2, 5, gmt_test::piecewise, 0.1);
  auto root = std::make_unique<Node>();
  root->attr = 0;
  root->threshold = d.at(17, 0);  // exactly on a training value: the gap is to its right
  root->left = std::make_unique<Node>();
  root->right = std::make_unique<Node>();
  root->right->attr = 1;
  root->right->threshold = 4.0f;
  root->right->left = std::make_unique<Node>();
  root->right->right = std::make_unique<Node>();
  Node* leaves[] = {root->left.get(), root->right->left.get(), root->right->right.get()};
  for (int k = 0; k < 3; ++k) {
    leaves[k]->model_attrs = {0};
    leaves[k]->coef = {1.0 + k, 0.5 - k};
  }
  std::vector<double> before(d.rows());
  for (std::size_t r = 0; r < d.rows(); ++r) before[r] = predict(root.get(), d, r);
  const float t0 = root->threshold;
  EXPECT_EQ(center_thresholds(root.get(), d), 2);
  EXPECT_GT(root->threshold, t0);
  float next_above = std::numeric_limits<float>::infinity();
  for (std::size_t r = 0; r < d.rows(); ++r)
    if (d.at(r, 0) > t0) next_above = std::min(next_above, d.at(r, 0));
  EXPECT_LT(root->threshold, next_above);
  EXPECT_FLOAT_EQ(root->threshold, static_cast<float>(0.5 * (double(t0) + double(next_above))));
  for (std::size_t r = 0; r < d.rows(); ++r) EXPECT_EQ(predict(root.get(), d, r), before[r]) << "row " << r;
  EXPECT_EQ(center_thresholds(root.get(), d), 0);
}
