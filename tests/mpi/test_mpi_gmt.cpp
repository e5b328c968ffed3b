// GMT across MPI ranks (sharded_evaluator.hpp): every rank runs the EA from the same seed;
// the rows split (each rank its row chunks of every tree, the parts combined) and the individuals
// split (each rank its block of each generation's trees, the others' gathered) must both induce
// one process's tree bit for bit at any rank count, on both CPU backends.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/gmt/eval_steps.hpp"
#include "algorithms/gmt/sharded_evaluator.hpp"
#include "algorithms/gmt/train.hpp"
#include "tests/gmt/common.hpp"

namespace gpudm::gmt {
namespace {

// Field by field (a node's padding bytes are not part of it), floats bit for bit.
bool same_tree(const Tree& a, const Tree& b) {
  if (a.nodes().size() != b.nodes().size() || a.attr_pool() != b.attr_pool() || a.coef_pool() != b.coef_pool()) return false;
  for (std::size_t i = 0; i < a.nodes().size(); ++i) {
    const TreeNode &x = a.nodes()[i], &y = b.nodes()[i];
    const NodeStats &s = x.stats, &t = y.stats;
    const bool same_sae = std::memcmp(&s.sae, &t.sae, sizeof s.sae) == 0;  // (NaN where not computed)
    if (x.attr != y.attr || std::memcmp(&x.threshold, &y.threshold, sizeof x.threshold) != 0 || x.left != y.left ||
        x.m_off != y.m_off || x.m_len != y.m_len || x.c_off != y.c_off || x.rank != y.rank || x.dirty != y.dirty ||
        x.has_coef != y.has_coef || s.count != t.count || std::memcmp(&s.sse, &t.sse, sizeof s.sse) != 0 || !same_sae ||
        s.dipole_lo != t.dipole_lo || s.dipole_hi != t.dipole_hi || s.dipole_rand != t.dipole_rand)
      return false;
  }
  return true;
}

// A run across the ranks against one process's: the same tree bit for bit, fitness, iterations,
// and every evaluation counted once over the ranks.
void expect_same_run(const TrainResult& got, const TrainResult& want, const ModelTreeEvaluator& ranks, const ModelTreeEvaluator& one) {
  EXPECT_TRUE(same_tree(got.best.tree, want.best.tree)) << "the induced trees differ";
  EXPECT_EQ(got.best.fitness, want.best.fitness);
  EXPECT_EQ(got.summary.iterations, want.summary.iterations);
  EXPECT_EQ(ranks.counters().trees, one.counters().trees);
  EXPECT_EQ(ranks.counters().repairs, one.counters().repairs);
}

TEST(MpiGmt, InducedTreeEqualsOneProcessAtAnyRankCount) {
  Comm& c = world();
  const Dataset d = gmt_test::make_dataset(3000, 4, 17, gmt_test::piecewise, 0.2);
  GmtParams p;
  p.iterations = 60;
  p.population = 24;
  p.seed = 5;
  p.min_leaf_rows = 40;  // repairs, with leaves under the limit whose rows lie on several ranks
  // 12 row chunks (a rank of 3 holds 4), blocks of up to 100 rows; then 2 chunks (at 3 ranks one
  // rank holds none)
  for (const int chunk_rows : {256, 1500}) {
    SCOPED_TRACE("chunk_rows " + std::to_string(chunk_rows));
    EvalOptions o;
    o.chunk_rows = chunk_rows;
    o.qr_block_rows = 100;
    auto one = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
    one->configure(o);
    one->prepare(d);
    const TrainResult want = train(d, p, *one, false);
    EXPECT_GT(want.best.tree.n_leaves(), 1) << "the case is what it claims: a tree grows";
    EXPECT_GT(one->counters().repairs, 0) << "the case is what it claims: repairs happen";
    using S = EvalOptions::RankSplit;
    for (const char* backend : {"sequential", "openmp"}) {
      if (!gmt_test::registry().info("gmt", backend).available) continue;
      for (S split : {S::kRows, S::kIndividuals}) {
        SCOPED_TRACE(std::string(backend) + (split == S::kRows ? ", rows split" : ", individuals split"));
        std::unique_ptr<ModelTreeEvaluator> ranks = across_ranks(gmt_test::registry().create<ModelTreeEvaluator>("gmt", backend), split);
        ranks->configure(o);
        ranks->prepare(d);
        const TrainResult got = train(d, p, *ranks, false);
        expect_same_run(got, want, *ranks, *one);
        if (c.size() > 1) {
          EXPECT_EQ(ranks->describe().value("rank_split", std::string("individuals")), split == S::kRows ? "rows" : "individuals");
        }
      }
    }
  }
}

// The CUDA fast path's rows split (its merge's groups exchanged between the ranks, fused.cuh
// FusedGroups): every rank's run equals one GPU process's bit for bit at 1, 2 and 3 ranks (the
// ranks may share one GPU), on 12 chunks (12 merge groups: a rank of 3 holds 4), on 40 (32 groups
// of one or two chunks) and on ~74 (groups of 8-12 partials: level 1 in two runs), with leaves
// under the repair limit whose rows lie on several ranks, with every fitted leaf sent to the exact
// solver (fast_pivot_guard 1), batched and one by one (exact_batch_max_rows 0): its rows gathered
// from the ranks, and without noise (near-exact fits: the residuals' SSE combined). Skips without
// a GPU.
TEST(MpiGmt, CudaRowsSplitEqualsOneGpuProcessAtAnyRankCount) {
  Comm& c = world();
  if (!gmt_test::registry().info("gmt", "cuda").available) GTEST_SKIP() << "no CUDA device";
  struct Case {
    std::size_t rows;
    int exact;     // 0: the fast path's solves; 1: every fitted leaf to the exact solver, batched; 2: one by one
    double noise;  // 0: near-exact fits (the residual pass)
    int iterations;
  };
  for (const Case& k : {Case{3000, 0, 0.2, 50}, Case{3000, 1, 0.2, 50}, Case{3000, 2, 0.2, 50}, Case{3000, 0, 0.0, 50},
                        Case{40000, 0, 0.2, 30}, Case{300000, 0, 0.2, 8}}) {
      const std::size_t rows = k.rows;
      const int exact = k.exact;
      SCOPED_TRACE(std::to_string(rows) + " rows, exact solver " + std::to_string(exact) + ", noise " + std::to_string(k.noise) + ", " +
                   std::to_string(c.size()) + " ranks");
      const Dataset d = gmt_test::make_dataset(rows, 4, 17, gmt_test::piecewise, k.noise);
      GmtParams p;
      p.iterations = k.iterations;
      p.population = 24;
      p.seed = 5;
      p.min_leaf_rows = 40;
      EvalOptions o;
      if (exact > 0) o.fast_pivot_guard = 1.0;  // (every pivot is at most its column's norm: every fitted leaf with attributes)
      if (exact == 2) o.exact_batch_max_rows = 0;
      auto one = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "cuda");
      one->configure(o);
      one->prepare(d);
      const TrainResult want = train(d, p, *one, false);
      EXPECT_GT(want.best.tree.n_leaves(), 1) << "the case is what it claims: a tree grows";
      if (rows <= 40000) {
        EXPECT_GT(one->counters().repairs, 0) << "the case is what it claims: repairs happen";
      }
      const nlohmann::ordered_json info1 = one->describe();
      if (exact > 0) {
        EXPECT_GT(info1.value("exact_solver_leaves", 0LL), 0) << "the case is what it claims: the exact solver runs";
      }
      if (exact == 2) {
        EXPECT_EQ(info1.value("exact_solver_batched_leaves", 0LL), 0) << "one by one";
      }
      if (k.noise == 0.0) {
        EXPECT_GT(info1.value("residual_pass_leaves", 0LL), 0) << "the case is what it claims: near-exact fits";
      }
      std::unique_ptr<ModelTreeEvaluator> ranks = across_ranks(gmt_test::registry().create<ModelTreeEvaluator>("gmt", "cuda"), EvalOptions::RankSplit::kRows);
      ranks->configure(o);
      ranks->prepare(d);
      const TrainResult got = train(d, p, *ranks, false);
      expect_same_run(got, want, *ranks, *one);
      const nlohmann::ordered_json info = ranks->describe();
      EXPECT_EQ(info.value("exact_solver_leaves", 0LL), info1.value("exact_solver_leaves", 0LL));
      EXPECT_EQ(info.value("residual_pass_leaves", 0LL), info1.value("residual_pass_leaves", 0LL));
      if (c.size() > 1) {
        EXPECT_EQ(info.value("rank_split", std::string()), "rows");
        EXPECT_GT(info.value("combine_calls", 0LL), 0);
        const auto rr = info.at("rank_rows");
        EXPECT_LT(rr.at(1).get<long long>() - rr.at(0).get<long long>(), static_cast<long long>(rows)) << "the device holds its block only";
      }
    }
}

// The combine steps themselves: a tree with leaves under the repair limit whose rows lie on
// several ranks (and, with 2 chunks at 3 ranks, a rank without chunks) gives every rank one
// process's counts and small leaves' rows.
TEST(MpiGmt, RowsSplitCombinesCountsAndSmallLeavesRows) {
  Comm& c = world();
  const Dataset d = gmt_test::make_dataset(3000, 4, 17, gmt_test::piecewise, 0.2);
  // x1 <= 0.05 (~15 rows over the whole range), x1 > 9.97 (~9 rows), the rest split at x2 <= 5
  const Tree t = Tree::join(0, 0.05f, Tree::leaf({1}), Tree::join(0, 9.97f, Tree::join(1, 5.0f, Tree::leaf({0}), Tree::leaf({2})), Tree::leaf({3})));
  for (const int chunk_rows : {256, 1500}) {
    SCOPED_TRACE("chunk_rows " + std::to_string(chunk_rows));
    EvalOptions o;
    o.chunk_rows = chunk_rows;
    const auto routed = [&](Comm* comm) {
      EvalWork w;
      w.set_ranks(comm);
      w.begin(d, t, o, 3);
      for (int k = w.chunk_begin(); k < w.chunk_end(); ++k) w.redistribute_chunk(k);
      if (w.split()) combine_counts({&w});
      w.separate_offsets();
      for (int k = w.chunk_begin(); k < w.chunk_end(); ++k) w.separate_chunk(k);
      if (w.split()) combine_small_rows({&w}, 40);
      RoutedCounts r;
      w.routed_counts(40, r);
      return r;
    };
    const RoutedCounts want = routed(nullptr), got = routed(&c);
    EXPECT_EQ(got.count, want.count);
    EXPECT_EQ(got.small_begin, want.small_begin);
    EXPECT_EQ(got.small_rows, want.small_rows);
    EXPECT_GE(want.small_rows.size(), 10u) << "the case is what it claims: small leaves with rows";
  }
}

}  // namespace
}  // namespace gpudm::gmt
