// The EA recovers a tiny dataset's known optimal tree (3 leaves, exact linear models).
#include <gtest/gtest.h>

#include "algorithms/gmt/train.hpp"
#include "common.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {
double two_regions(const std::vector<double>& x) { return x[0] <= 5.0 ? 1.0 + x[1] : 20.0 - x[0]; }
}  // namespace

// A short run (300 iterations) is a gamble on the seed: with the default operators 9 of seeds
// 1..10 recover the tree (seed 5 stops at 6 leaves with a redundant split). The test asks for 2
// of 3 seeds and checks every recovered tree exactly.
TEST(GmtEa, RecoversATwoLeafTreeExactly) {
  const Dataset d = gmt_test::make_dataset(1000, 3, 17, two_regions, 0.05);
  int recovered = 0;
  for (std::uint64_t seed : {4, 5, 6}) {
    auto e = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
    GmtParams p;
    p.population = 24;
    p.iterations = 300;
    p.seed = seed;
    TrainResult r = train(d, p, *e, false);
    const Node* root = r.best.root.get();
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + to_text(root, d));
    if (count_leaves(root) != 2) continue;
    ++recovered;
    EXPECT_EQ(root->attr, 0);
    EXPECT_NEAR(root->threshold, 5.0, 0.1);
    EXPECT_EQ(root->left->model_attrs, std::vector<int>{1});
    EXPECT_EQ(root->right->model_attrs, std::vector<int>{0});
    EXPECT_LT(score(root, d).rmse, 0.05 * 1.1);
  }
  EXPECT_GE(recovered, 2);
}

// Three regions: the optimum has 3 leaves (4 when the first split is on x2); the short run
// must get close in error and size.
TEST(GmtEa, ApproachesAThreeLeafOptimum) {
  const Dataset d = gmt_test::make_dataset(1200, 2, 17, gmt_test::piecewise, 0.05);
  auto e = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
  GmtParams p;
  p.population = 32;
  p.iterations = 400;
  p.seed = 3;
  TrainResult r = train(d, p, *e, false);
  const Node* root = r.best.root.get();
  const Scores s = score(root, d);
  SCOPED_TRACE(to_text(root, d));
  EXPECT_LE(count_leaves(root), 8);
  EXPECT_GE(count_leaves(root), 3);
  EXPECT_LT(s.rmse, 0.05 * 1.2);  // the noise level, +20 %
  // Fitness never got worse across iterations (elitism).
  for (std::size_t i = 1; i < r.summary.best_history.size(); ++i)
    EXPECT_LE(r.summary.best_history[i], r.summary.best_history[i - 1]);
  // The six procedures, flattening and the EA are all in the breakdown.
  for (const char* ph : {"redistribute", "separate", "reorganize", "calc_models", "estimate_errors", "reduction",
                         "flattening", "transfers", "cpu_ea"})
    EXPECT_GT(r.timer.seconds(ph), 0.0) << ph;
}
