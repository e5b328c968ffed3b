// The evaluator's six procedures against a brute-force reference on hand-made trees.
#include <gtest/gtest.h>

#include <algorithm>

#include <Eigen/Dense>

#include "algorithms/core/phase_timer.hpp"
#include "algorithms/gmt/tree.hpp"
#include "common.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {

// x1 <= 3 ? LM(x1) : (x2 <= 5 ? LM(x2) : LM(x1, x2)); breadth-first: 0 root, 1 LM(x1), 2 the x2 test,
// 3 LM(x2), 4 LM(x1, x2).
Tree optimal_tree() { return Tree::join(0, 3.0f, Tree::leaf({0}), Tree::join(1, 5.0f, Tree::leaf({1}), Tree::leaf({0, 1}))); }

// The row of minimum dipole_key among `rows` (the definition of dipole_rand).
std::int64_t min_key_row(const std::vector<std::size_t>& rows, std::uint64_t salt) {
  std::int64_t best = -1;
  for (std::size_t r : rows)
    if (best < 0 || dipole_key(salt, r) < dipole_key(salt, static_cast<std::uint64_t>(best))) best = static_cast<std::int64_t>(r);
  return best;
}

struct Reference {
  std::int64_t count;
  double sse;
};

// Brute force: rows of each leaf, Eigen least squares, SSE.
Reference brute_leaf(const Dataset& d, const std::vector<std::size_t>& rows, const std::vector<int>& attrs) {
  Eigen::MatrixXd X(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(attrs.size() + 1));
  Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    X(static_cast<Eigen::Index>(i), 0) = 1.0;
    for (std::size_t k = 0; k < attrs.size(); ++k)
      X(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k + 1)) = d.at(rows[i], static_cast<std::size_t>(attrs[k]));
    y(static_cast<Eigen::Index>(i)) = d.target(rows[i]);
  }
  const Eigen::VectorXd c = X.colPivHouseholderQr().solve(y);
  return {static_cast<std::int64_t>(rows.size()), (X * c - y).squaredNorm()};
}

}  // namespace

class GmtEvaluatorTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GmtEvaluatorTest, MatchesBruteForceAndRecoversExactModels) {
  const Dataset d = gmt_test::make_dataset(3000, 3, 11, gmt_test::piecewise, 0.05);
  auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", GetParam());
  EvalOptions o;
  o.chunk_rows = 256;      // many chunks
  o.qr_block_rows = 100;   // many TSQR blocks per leaf
  eval->configure(o);
  eval->prepare(d);
  Tree tree = optimal_tree();
  // The compact layout: 5 nodes, breadth-first, children adjacent.
  EXPECT_EQ(tree.size(), 5);
  EXPECT_EQ(tree.n_leaves(), 3);
  EXPECT_EQ(tree.levels(), 3);
  EXPECT_EQ(tree.node(0).attr, 0);
  EXPECT_EQ(tree.node(0).left, 1);
  EXPECT_EQ(tree.node(1).attr, kLeafNode);
  EXPECT_EQ(tree.node(2).attr, 1);
  EXPECT_EQ(tree.node(2).left, 3);
  EXPECT_EQ(tree.node(2).parent, 0);
  EXPECT_EQ(tree.node(3).attr, kLeafNode);
  EXPECT_EQ(tree.node(4).attr, kLeafNode);
  EXPECT_EQ(tree.node(4).parent, 2);
  EXPECT_EQ(tree.node(4).depth, 2);
  EXPECT_EQ(gmt_test::layout_error(tree, 3), "");
  PhaseTimer t;
  const std::uint64_t salt = 1;
  eval->evaluate(single(tree, salt), t);
  for (const char* phase : {"transfers", "redistribute", "separate", "reorganize", "calc_models", "estimate_errors", "reduction"}) {
    bool found = false;
    for (const auto& ph : t.phases()) found = found || (ph.name == phase && ph.calls == 1);
    EXPECT_TRUE(found) << "phase " << phase << " not recorded once";
  }
  EXPECT_EQ(t.seconds("repair"), 0.0) << "no repair rule given";
  std::vector<std::size_t> a, b, c, all;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    all.push_back(r);
    if (d.at(r, 0) <= 3.0f) a.push_back(r);
    else if (d.at(r, 1) <= 5.0f) b.push_back(r);
    else c.push_back(r);
  }
  const Reference ra = brute_leaf(d, a, {0}), rb = brute_leaf(d, b, {1}), rc = brute_leaf(d, c, {0, 1});
  auto n = [&](int i) { return tree.node(i).stats; };
  EXPECT_EQ(n(1).count, ra.count);
  EXPECT_EQ(n(3).count, rb.count);
  EXPECT_EQ(n(4).count, rc.count);
  EXPECT_EQ(n(2).count, rb.count + rc.count);
  EXPECT_EQ(n(0).count, 3000);
  EXPECT_NEAR(n(1).sse, ra.sse, 1e-6 * ra.sse);
  EXPECT_NEAR(n(3).sse, rb.sse, 1e-6 * rb.sse);
  EXPECT_NEAR(n(4).sse, rc.sse, 1e-6 * rc.sse);
  EXPECT_NEAR(n(0).sse, ra.sse + rb.sse + rc.sse, 1e-6 * n(0).sse);
  // Noise 0.05: the models are close to the generator's.
  ASSERT_EQ(tree.attrs(1).size(), 1u);  // node 1: y = 2 x1 + 1
  EXPECT_EQ(tree.attrs(1)[0], 0);
  ASSERT_EQ(tree.coef(1).size(), 2u);
  EXPECT_NEAR(tree.coef(1)[0], 1.0, 0.02);
  EXPECT_NEAR(tree.coef(1)[1], 2.0, 0.02);
  EXPECT_EQ(gmt_test::coef_of(tree, 1, 1), 0.0);
  EXPECT_EQ(tree.node(1).rank, 2);
  EXPECT_EQ(tree.node(4).rank, 3);
  for (int i : {1, 3, 4}) {
    EXPECT_EQ(tree.node(i).dirty, 0);
    EXPECT_EQ(tree.node(i).has_coef, 1);
  }
  // Dipoles: lo/hi are the extreme targets of the node, rand the node's row of minimum dipole_key.
  const std::vector<std::size_t> bc = [&] {
    std::vector<std::size_t> v = b;
    v.insert(v.end(), c.begin(), c.end());
    std::sort(v.begin(), v.end());
    return v;
  }();
  const std::vector<std::size_t>* rows_of[5] = {&all, &a, &bc, &b, &c};
  for (int i : {0, 1, 2, 3, 4}) {
    ASSERT_GE(n(i).dipole_lo, 0);
    ASSERT_GE(n(i).dipole_rand, 0);
    EXPECT_LE(d.target(static_cast<std::size_t>(n(i).dipole_lo)), d.target(static_cast<std::size_t>(n(i).dipole_hi)));
    EXPECT_EQ(n(i).dipole_rand, min_key_row(*rows_of[i], salt)) << "node " << i;
  }
  float lo = 1e30f, hi = -1e30f;
  for (std::size_t r : a) lo = std::min(lo, d.target(r)), hi = std::max(hi, d.target(r));
  EXPECT_EQ(d.target(static_cast<std::size_t>(n(1).dipole_lo)), lo);
  EXPECT_EQ(d.target(static_cast<std::size_t>(n(1).dipole_hi)), hi);
  EXPECT_LE(d.at(static_cast<std::size_t>(n(1).dipole_rand), 0), 3.0f);
  // Another salt draws (almost surely) another row; the same salt the same row.
  Tree again = optimal_tree();
  eval->evaluate(single(again, salt), t);
  EXPECT_EQ(again.node(0).stats.dipole_rand, n(0).dipole_rand);
  Tree other = optimal_tree();
  eval->evaluate(single(other, salt + 1), t);
  EXPECT_EQ(other.node(0).stats.dipole_rand, min_key_row(all, salt + 1));
  EXPECT_NE(other.node(0).stats.dipole_rand, n(0).dipole_rand);
}

TEST_P(GmtEvaluatorTest, UnchangedLeavesKeepTheirModels) {
  const Dataset d = gmt_test::make_dataset(500, 3, 2, gmt_test::piecewise, 0.1);
  auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", GetParam());
  eval->prepare(d);
  Tree tree = optimal_tree();
  PhaseTimer t;
  eval->evaluate(single(tree, 1), t);
  // Pretend leaf 1's model is something else and not dirty: it must be passed through (its
  // zero coefficient included: only a refit drops attributes).
  tree.set_fit(1, {0}, {5.0, 0.0}, 2);
  EXPECT_FALSE(tree.leaf_needs_refit(1));
  const std::vector<double> right3(tree.coef(3).begin(), tree.coef(3).end());
  tree.mark_dirty(3);  // leaf 3 refits: the same rows, the same model as before
  eval->evaluate(single(tree, 1), t);
  ASSERT_EQ(tree.coef(1).size(), 2u);
  EXPECT_EQ(tree.coef(1)[0], 5.0);
  EXPECT_EQ(tree.coef(1)[1], 0.0);
  EXPECT_EQ(std::vector<int>(tree.attrs(1).begin(), tree.attrs(1).end()), std::vector<int>{0});
  EXPECT_EQ(tree.node(1).rank, 2);
  EXPECT_EQ(std::vector<double>(tree.coef(3).begin(), tree.coef(3).end()), right3);
  double sse = 0;
  for (std::size_t r = 0; r < d.rows(); ++r)
    if (d.at(r, 0) <= 3.0f) sse += (d.target(r) - 5.0) * (d.target(r) - 5.0);
  EXPECT_NEAR(tree.node(1).stats.sse, sse, 1e-9 * sse);
}

TEST_P(GmtEvaluatorTest, EmptyLeafAndConstantAttribute) {
  Dataset d = gmt_test::make_dataset(200, 2, 4, gmt_test::piecewise, 0.0);
  for (std::size_t r = 0; r < d.rows(); ++r) d.at(r, 1) = 7.0f;  // constant attribute
  auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", GetParam());
  eval->prepare(d);
  // everything goes left: the right leaf is empty
  Tree tree = Tree::join(0, 100.0f, Tree::leaf({0, 1}), Tree::leaf({1}));
  PhaseTimer t;
  eval->evaluate(single(tree, 1), t);
  EXPECT_EQ(tree.node(2).stats.count, 0);
  EXPECT_EQ(tree.node(2).stats.sse, 0.0);
  EXPECT_EQ(tree.node(2).stats.dipole_rand, -1);
  EXPECT_EQ(tree.node(2).stats.dipole_lo, -1);
  EXPECT_EQ(tree.node(2).stats.dipole_hi, -1);
  EXPECT_EQ(tree.node(2).rank, 0);
  EXPECT_EQ(tree.node(1).rank, 2);  // intercept + x1; the constant x2 is dropped
  EXPECT_EQ(gmt_test::coef_of(tree, 1, 1), 0.0);
  // dropped attributes are removed from the model (the empty leaf's too: every coefficient is 0)
  EXPECT_EQ(std::vector<int>(tree.attrs(1).begin(), tree.attrs(1).end()), std::vector<int>{0});
  EXPECT_EQ(tree.attrs(2).size(), 0u);
  ASSERT_EQ(tree.coef(2).size(), 1u);
  EXPECT_EQ(tree.coef(2)[0], 0.0);
  EXPECT_EQ(gmt_test::layout_error(tree, 2), "");
}

INSTANTIATE_TEST_SUITE_P(Cpu, GmtEvaluatorTest, ::testing::ValuesIn(gmt_test::cpu_backends()));
