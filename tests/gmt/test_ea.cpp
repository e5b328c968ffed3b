// The EA recovers a tiny dataset's known optimal tree (3 leaves, exact linear models); along a run
// every clean leaf keeps its statistics (what EvalBatch::clean_sse_known relies on).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/train.hpp"
#include "common.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {
double two_regions(const std::vector<double>& x) { return x[0] <= 5.0 ? 1.0 + x[1] : 20.0 - x[0]; }
}  // namespace

// A short run (300 iterations) is a gamble on the seed: with the default operators and the
// per-individual operator streams all of seeds 1..10 find the two leaves and 9 of 10 the
// exact models (seed 6 keeps a redundant x0 in the left model). The test asks for 2 of 3 seeds
// and checks every recovered tree exactly.
TEST(GmtEa, RecoversATwoLeafTreeExactly) {
  const Dataset d = gmt_test::make_dataset(1000, 3, 17, two_regions, 0.05);
  int recovered = 0;
  for (std::uint64_t seed : {4, 5, 7}) {
    auto e = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
    GmtParams p;
    p.population = 24;
    p.iterations = 300;
    p.seed = seed;
    TrainResult r = train(d, p, *e, false);
    const Tree& root = r.best.tree;
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + to_text(root, d));
    EXPECT_EQ(gmt_test::layout_error(root, 3), "");
    if (count_leaves(root) != 2) continue;
    ++recovered;
    EXPECT_EQ(root.node(0).attr, 0);
    EXPECT_NEAR(root.node(0).threshold, 5.0, 0.1);
    EXPECT_EQ(std::vector<int>(root.attrs(1).begin(), root.attrs(1).end()), std::vector<int>{1});
    EXPECT_EQ(std::vector<int>(root.attrs(2).begin(), root.attrs(2).end()), std::vector<int>{0});
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
  const Tree& root = r.best.tree;
  const Scores s = score(root, d);
  SCOPED_TRACE(to_text(root, d));
  EXPECT_LE(count_leaves(root), 8);
  EXPECT_GE(count_leaves(root), 3);
  EXPECT_LT(s.rmse, 0.05 * 1.2);  // the noise level, +20 %
  // Fitness never got worse across iterations (elitism).
  for (std::size_t i = 1; i < r.summary.best_history.size(); ++i)
    EXPECT_LE(r.summary.best_history[i], r.summary.best_history[i - 1]);
  // The six procedures, the repair rule and the EA are all in the breakdown (no flattening: the
  // CPU backends read the compact trees).
  for (const char* ph : {"redistribute", "separate", "repair", "reorganize", "calc_models", "estimate_errors", "reduction",
                         "transfers", "cpu_ea"})
    EXPECT_GT(r.timer.seconds(ph), 0.0) << ph;
  EXPECT_EQ(r.timer.seconds("flattening"), 0.0);
  // One evaluator call per generation, repairs folded into it.
  EXPECT_EQ(r.summary.evaluate_calls, r.summary.iterations + 1);
  EXPECT_GE(r.summary.evaluations, r.summary.evaluate_calls);
  EXPECT_GT(r.summary.repairs, 0);
}

namespace {

// Wraps an evaluator: before each call it tags every clean leaf (dirty == 0 with coefficients)
// through TreeNode::rank (which the edits carry along and only a refit overwrites), after the call
// it finds the tagged leaves again (those the repairs did not touch) and checks that each has
// the same model, row count and errors as before the call, bit for bit.
class CleanLeafChecker final : public ModelTreeEvaluator {
 public:
  explicit CleanLeafChecker(std::unique_ptr<ModelTreeEvaluator> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "clean-leaf-checker"; }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  void configure(const EvalOptions& o) override {
    options_ = o;
    inner_->configure(o);
  }
  void prepare(const Dataset& d) override { inner_->prepare(d); }
  void evaluate(const EvalBatch& batch, PhaseTimer& timer) override {
    EXPECT_TRUE(batch.clean_sse_known) << "the EA sets it";
    struct Clean {
      int rank;
      NodeStats stats;
      std::vector<int> attrs;
      std::vector<double> coef;
    };
    std::vector<std::vector<Clean>> before(batch.size());
    for (std::size_t k = 0; k < batch.size(); ++k) {
      Tree& t = *batch.trees[k];
      for (int i = 0; i < t.size(); ++i) {
        TreeNode& n = t.node(i);
        if (!n.is_leaf() || n.dirty || !n.has_coef) continue;
        const auto a = t.attrs(i);
        const auto c = t.coef(i);
        before[k].push_back({n.rank, n.stats, {a.begin(), a.end()}, {c.begin(), c.end()}});
        n.rank = kTag + static_cast<int>(before[k].size()) - 1;
      }
      clean_before_ += static_cast<std::int64_t>(before[k].size());
    }
    inner_->evaluate(batch, timer);
    counters_ = inner_->counters();
    auto bits = [](double v) {
      std::uint64_t b;
      std::memcpy(&b, &v, sizeof b);
      return b;
    };
    for (std::size_t k = 0; k < batch.size(); ++k) {
      Tree& t = *batch.trees[k];
      std::vector<char> seen(before[k].size(), 0);
      for (int i = 0; i < t.size(); ++i) {
        TreeNode& n = t.node(i);
        if (!n.is_leaf() || n.rank < kTag) continue;
        const auto id = static_cast<std::size_t>(n.rank - kTag);
        ASSERT_LT(id, before[k].size());
        EXPECT_EQ(seen[id], 0) << "a clean leaf was copied";
        seen[id] = 1;
        const Clean& c = before[k][id];
        n.rank = c.rank;  // untag
        ++checked_;
        EXPECT_EQ(n.dirty, 0);
        EXPECT_EQ(n.has_coef, 1);
        EXPECT_EQ(std::vector<int>(t.attrs(i).begin(), t.attrs(i).end()), c.attrs);
        EXPECT_EQ(std::vector<double>(t.coef(i).begin(), t.coef(i).end()), c.coef);
        EXPECT_EQ(n.stats.count, c.stats.count) << "tree " << k << " leaf " << i;
        EXPECT_EQ(bits(n.stats.sse), bits(c.stats.sse)) << "tree " << k << " leaf " << i << ": " << n.stats.sse << " vs " << c.stats.sse;
        EXPECT_EQ(bits(n.stats.sae), bits(c.stats.sae)) << "tree " << k << " leaf " << i;
        EXPECT_EQ(n.stats.dipole_lo, c.stats.dipole_lo);
        EXPECT_EQ(n.stats.dipole_hi, c.stats.dipole_hi);
      }
      for (char s : seen) touched_ += s ? 0 : 1;  // in a repaired subtree: refit on other rows
    }
  }
  std::int64_t clean_before_ = 0, checked_ = 0, touched_ = 0;

 private:
  static constexpr int kTag = 1 << 28;
  std::unique_ptr<ModelTreeEvaluator> inner_;
};

}  // namespace

TEST(GmtEa, CleanLeavesGetBackTheirSseAndCountBitForBit) {
  // Small leaves (min_leaf_rows 8 on 600 rows, deep initial trees) so that repairs happen in both modes.
  const Dataset d = gmt_test::make_dataset(600, 4, 23, gmt_test::piecewise, 0.3);
  for (RepairMode mode : {RepairMode::promote, RepairMode::collapse}) {
    SCOPED_TRACE(mode == RepairMode::promote ? "promote" : "collapse");
    CleanLeafChecker checker(gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential"));
    EvalOptions o;
    o.chunk_rows = 128;  // several chunks: the sums are merged over chunks
    o.qr_block_rows = 50;
    checker.configure(o);
    GmtParams p;
    p.population = 16;
    p.iterations = 40;
    p.seed = 11;
    p.min_leaf_rows = 8;
    p.init_max_depth = 7;
    p.init_sample_fraction = 1.0;
    p.repair = mode;
    TrainResult r = train(d, p, checker, false);
    EXPECT_GT(checker.checked_, 100) << "clean leaves must reach the evaluator";
    EXPECT_GT(r.summary.repairs, 0);
    // In a run a repair only happens where an operator changed the routing, and every operator
    // marks the subtree whose routing it changes dirty: no clean leaf is in a repaired subtree.
    EXPECT_EQ(checker.touched_, 0);
    EXPECT_EQ(checker.checked_ + checker.touched_, checker.clean_before_);

    // Clean leaves inside repaired subtrees: a population evaluated with min_leaf_rows 1, then
    // changed and evaluated by an EA with min_leaf_rows 8 (the clean leaves of 1 .. 7 rows and
    // their neighbours are repaired and refit; the others keep their statistics).
    GmtParams p1 = p;
    p1.min_leaf_rows = 1;
    PhaseTimer t;
    GmtEA ea1(p1, checker, d, t), ea8(p, checker, d, t);
    Rng rng(3);
    std::vector<Individual> pop(16);
    std::vector<Individual*> ptrs;
    for (auto& ind : pop) {
      ind.tree = ea1.init_tree(rng);
      ptrs.push_back(&ind);
    }
    ea1.evaluate(ptrs);
    for (std::size_t k = 0; k < pop.size(); k += 2) ea8.mutate(pop[k], rng);
    const std::int64_t checked0 = checker.checked_;
    ea8.evaluate(ptrs);
    EXPECT_GT(checker.touched_, 20) << "clean leaves must be in repaired subtrees";
    EXPECT_GT(checker.checked_ - checked0, 20);
    EXPECT_EQ(checker.checked_ + checker.touched_, checker.clean_before_);
  }
}

// The initial trees' row samples: the sparse partial shuffle gives, draw for draw, the sample of
// a dense one (an n-element id array shuffled in place) without its n-element array.
TEST(GmtEa, SparseRowSampleEqualsTheDenseShuffle) {
  for (const auto& [n, m] : std::vector<std::pair<std::size_t, std::size_t>>{{1, 1}, {7, 7}, {10, 3}, {1000, 500}, {100000, 500}, {5, 9}}) {
    for (std::uint64_t seed : {1, 2, 99}) {
      Rng a(seed), b(seed);
      std::vector<std::size_t> dense(n);
      for (std::size_t i = 0; i < n; ++i) dense[i] = i;
      const std::size_t k = std::min(m, n);
      for (std::size_t i = 0; i < k; ++i) std::swap(dense[i], dense[i + a.below(n - i)]);
      dense.resize(k);
      EXPECT_EQ(sample_distinct_rows(n, m, b), dense) << "n " << n << " m " << m << " seed " << seed;
      EXPECT_EQ(a.next(), b.next()) << "the same number of draws";
    }
  }
}
