// The evaluator's six procedures against a brute-force reference on hand-made trees.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include "algorithms/core/phase_timer.hpp"
#include "algorithms/gmt/tree.hpp"
#include "common.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {

// x1 <= 3 ? LM(x1) : (x2 <= 5 ? LM(x2) : LM(x1, x2))
std::unique_ptr<Node> optimal_tree() {
  auto root = std::make_unique<Node>();
  root->attr = 0;
  root->threshold = 3.0f;
  root->left = std::make_unique<Node>();
  root->left->make_leaf({0});
  root->right = std::make_unique<Node>();
  root->right->attr = 1;
  root->right->threshold = 5.0f;
  root->right->left = std::make_unique<Node>();
  root->right->left->make_leaf({1});
  root->right->right = std::make_unique<Node>();
  root->right->right->make_leaf({0, 1});
  return root;
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
  auto root = optimal_tree();
  FlatTree f;
  flatten(root.get(), 3, 1, f);
  EXPECT_EQ(f.levels, 3);
  EXPECT_EQ(f.n_nodes(), 7);
  EXPECT_EQ(f.n_leaves(), 3);
  EXPECT_EQ(f.attr[0], 0);
  EXPECT_EQ(f.attr[1], kLeafNode);
  EXPECT_EQ(f.attr[2], 1);
  EXPECT_EQ(f.attr[3], kAbsentNode);
  EXPECT_EQ(f.attr[5], kLeafNode);
  EXPECT_EQ(f.attr[6], kLeafNode);
  std::vector<EvalOutput> out;
  PhaseTimer t;
  eval->evaluate({&f}, out, t);
  for (const char* phase : {"transfers", "redistribute", "separate", "reorganize", "calc_models", "estimate_errors", "reduction"}) {
    bool found = false;
    for (const auto& ph : t.phases()) found = found || (ph.name == phase && ph.calls == 1);
    EXPECT_TRUE(found) << "phase " << phase << " not recorded once";
  }
  std::vector<std::size_t> a, b, c;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    if (d.at(r, 0) <= 3.0f) a.push_back(r);
    else if (d.at(r, 1) <= 5.0f) b.push_back(r);
    else c.push_back(r);
  }
  const Reference ra = brute_leaf(d, a, {0}), rb = brute_leaf(d, b, {1}), rc = brute_leaf(d, c, {0, 1});
  const auto& n = out[0].nodes;
  EXPECT_EQ(n[1].count, ra.count);
  EXPECT_EQ(n[5].count, rb.count);
  EXPECT_EQ(n[6].count, rc.count);
  EXPECT_EQ(n[2].count, rb.count + rc.count);
  EXPECT_EQ(n[0].count, 3000);
  EXPECT_NEAR(n[1].sse, ra.sse, 1e-6 * ra.sse);
  EXPECT_NEAR(n[5].sse, rb.sse, 1e-6 * rb.sse);
  EXPECT_NEAR(n[6].sse, rc.sse, 1e-6 * rc.sse);
  EXPECT_NEAR(n[0].sse, ra.sse + rb.sse + rc.sse, 1e-6 * n[0].sse);
  // Noise 0.05: the models are close to the generator's.
  const double* c0 = out[0].coef.data();  // leaf slot 0 = node 1: y = 2 x1 + 1
  EXPECT_NEAR(c0[0], 1.0, 0.02);
  EXPECT_NEAR(c0[1], 2.0, 0.02);
  EXPECT_EQ(c0[2], 0.0);
  // Dipoles: lo/hi are the extreme targets of the node, rand a row of the node.
  for (int i : {0, 1, 2, 5, 6}) {
    ASSERT_GE(n[static_cast<std::size_t>(i)].dipole_lo, 0);
    ASSERT_GE(n[static_cast<std::size_t>(i)].dipole_rand, 0);
    EXPECT_LE(d.target(static_cast<std::size_t>(n[static_cast<std::size_t>(i)].dipole_lo)),
              d.target(static_cast<std::size_t>(n[static_cast<std::size_t>(i)].dipole_hi)));
  }
  float lo = 1e30f, hi = -1e30f;
  for (std::size_t r : a) lo = std::min(lo, d.target(r)), hi = std::max(hi, d.target(r));
  EXPECT_EQ(d.target(static_cast<std::size_t>(n[1].dipole_lo)), lo);
  EXPECT_EQ(d.target(static_cast<std::size_t>(n[1].dipole_hi)), hi);
  EXPECT_LE(d.at(static_cast<std::size_t>(n[1].dipole_rand), 0), 3.0f);
}

TEST_P(GmtEvaluatorTest, UnchangedLeavesKeepTheirModels) {
  const Dataset d = gmt_test::make_dataset(500, 3, 2, gmt_test::piecewise, 0.1);
  auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", GetParam());
  eval->prepare(d);
  auto root = optimal_tree();
  FlatTree f;
  flatten(root.get(), 3, 1, f);
  std::vector<EvalOutput> out;
  PhaseTimer t;
  eval->evaluate({&f}, out, t);
  apply_evaluation(root.get(), f, out[0]);
  // Pretend leaf 1's model is something else and not dirty: it must be passed through.
  root->left->coef = {5.0, 0.0};
  root->left->dirty = false;
  flatten(root.get(), 3, 1, f);
  EXPECT_EQ(f.refit[0], 0);
  eval->evaluate({&f}, out, t);
  EXPECT_EQ(out[0].coef[0], 5.0);
  double sse = 0;
  for (std::size_t r = 0; r < d.rows(); ++r)
    if (d.at(r, 0) <= 3.0f) sse += (d.target(r) - 5.0) * (d.target(r) - 5.0);
  EXPECT_NEAR(out[0].nodes[1].sse, sse, 1e-9 * sse);
}

TEST_P(GmtEvaluatorTest, EmptyLeafAndConstantAttribute) {
  Dataset d = gmt_test::make_dataset(200, 2, 4, gmt_test::piecewise, 0.0);
  for (std::size_t r = 0; r < d.rows(); ++r) d.at(r, 1) = 7.0f;  // constant attribute
  auto eval = gmt_test::registry().create<ModelTreeEvaluator>("gmt", GetParam());
  eval->prepare(d);
  auto root = std::make_unique<Node>();
  root->attr = 0;
  root->threshold = 100.0f;  // everything goes left: the right leaf is empty
  root->left = std::make_unique<Node>();
  root->left->make_leaf({0, 1});
  root->right = std::make_unique<Node>();
  root->right->make_leaf({1});
  FlatTree f;
  flatten(root.get(), 2, 1, f);
  std::vector<EvalOutput> out;
  PhaseTimer t;
  eval->evaluate({&f}, out, t);
  EXPECT_EQ(out[0].nodes[2].count, 0);
  EXPECT_EQ(out[0].nodes[2].sse, 0.0);
  EXPECT_EQ(out[0].nodes[2].dipole_rand, -1);
  EXPECT_EQ(out[0].rank[1], 0);
  EXPECT_EQ(out[0].rank[0], 2);           // intercept + x1; the constant x2 is dropped
  EXPECT_EQ(out[0].coef[0 * 3 + 2], 0.0);
  apply_evaluation(root.get(), f, out[0]);
  EXPECT_EQ(root->left->model_attrs, std::vector<int>{0});  // dropped attribute removed from the model
}

INSTANTIATE_TEST_SUITE_P(Cpu, GmtEvaluatorTest, ::testing::ValuesIn(gmt_test::cpu_backends()));
