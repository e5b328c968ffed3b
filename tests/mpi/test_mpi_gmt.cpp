// Issue 26: GMT across MPI ranks (sharded_evaluator.hpp): every rank runs the EA from the same seed;
// the rows split (each rank its row chunks of every tree, the parts combined) and the individuals
// split (each rank its block of each generation's trees, the others' gathered) must both induce
// one process's tree bit for bit at any rank count, on both CPU backends.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/registry.hpp"
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

TEST(MpiGmt, InducedTreeEqualsOneProcessAtAnyRankCount) {
  Comm& c = world();
  const Dataset d = gmt_test::make_dataset(3000, 4, 17, gmt_test::piecewise, 0.2);
  GmtParams p;
  p.iterations = 60;
  p.population = 24;
  p.seed = 5;
  p.min_leaf_rows = 40;  // repairs, with leaves under the limit whose rows lie on several ranks
  // 12 row chunks (some ranks hold more than one, a rank of 3 holds 4), blocks of up to 100 rows
  EvalOptions o;
  o.chunk_rows = 256;
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
      EXPECT_TRUE(same_tree(got.best.tree, want.best.tree)) << "the induced trees differ";
      EXPECT_EQ(got.best.fitness, want.best.fitness);
      EXPECT_EQ(got.summary.iterations, want.summary.iterations);
      EXPECT_EQ(ranks->counters().trees, one->counters().trees);  // every evaluation counted once over the ranks
      EXPECT_EQ(ranks->counters().repairs, one->counters().repairs);
      if (c.size() > 1) {
        EXPECT_EQ(ranks->describe().value("rank_split", std::string("individuals")), split == S::kRows ? "rows" : "individuals");
      }
    }
  }
}

}  // namespace
}  // namespace gpudm::gmt
