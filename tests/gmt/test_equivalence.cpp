// Sequential == OpenMP: identical evaluation results (bit for bit: fixed chunks and TSQR blocks,
// merged in order) and therefore identical EA runs for the same seed.
#include <gtest/gtest.h>

#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/train.hpp"
#include "common.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {
bool have_openmp() { return gmt_test::registry().info("gmt", "openmp").available; }
}  // namespace

TEST(GmtEquivalence, OpenmpEvaluationIsEquivalentToSequential) {
  if (!have_openmp()) GTEST_SKIP() << gmt_test::registry().info("gmt", "openmp").reason;
  const Dataset d = gmt_test::make_dataset(20000, 5, 31, gmt_test::piecewise, 0.2);
  auto seq = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential");
  auto omp = gmt_test::registry().create<ModelTreeEvaluator>("gmt", "openmp");
  // omp_mode auto with chunk_rows 1000: 20 chunks, rows over threads; auto with 2^20: one chunk
  // < 4 threads, individuals over threads; then each mode forced where auto picks the other.
  using Mode = EvalOptions::OmpMode;
  const std::pair<int, Mode> cases[] = {
      {1000, Mode::kAuto}, {1 << 20, Mode::kAuto}, {1000, Mode::kIndividuals}, {1 << 20, Mode::kRows}};
  for (const auto& [chunk, mode] : cases) {
    SCOPED_TRACE("chunk_rows " + std::to_string(chunk) + " omp_mode " + std::to_string(static_cast<int>(mode)));
    EvalOptions o;
    o.chunk_rows = chunk;
    o.omp_mode = mode;
    o.qr_block_rows = 700;
    o.threads = 4;
    seq->configure(o);
    omp->configure(o);
    seq->prepare(d);
    omp->prepare(d);
    PhaseTimer t;
    GmtParams p;
    p.init_max_depth = 7;
    p.init_model_attrs = 3;
    GmtEA ea(p, *seq, d, t);
    Rng rng(77);
    std::vector<std::unique_ptr<Node>> trees;
    std::vector<FlatTree> flats(12);
    std::vector<const FlatTree*> ptrs;
    for (int i = 0; i < 12; ++i) {
      trees.push_back(ea.init_tree(rng));
      flatten(trees.back().get(), 5, static_cast<std::uint64_t>(i), flats[static_cast<std::size_t>(i)]);
      ptrs.push_back(&flats[static_cast<std::size_t>(i)]);
    }
    std::vector<EvalOutput> a, b;
    seq->evaluate(ptrs, a, t);
    omp->evaluate(ptrs, b, t);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      ASSERT_EQ(a[k].nodes.size(), b[k].nodes.size());
      for (std::size_t i = 0; i < a[k].nodes.size(); ++i) {
        EXPECT_EQ(a[k].nodes[i].count, b[k].nodes[i].count);
        EXPECT_EQ(a[k].nodes[i].sse, b[k].nodes[i].sse);  // exact: same summation order
        EXPECT_EQ(a[k].nodes[i].sae, b[k].nodes[i].sae);
        EXPECT_EQ(a[k].nodes[i].dipole_lo, b[k].nodes[i].dipole_lo);
        EXPECT_EQ(a[k].nodes[i].dipole_hi, b[k].nodes[i].dipole_hi);
        EXPECT_EQ(a[k].nodes[i].dipole_rand, b[k].nodes[i].dipole_rand);
      }
      EXPECT_EQ(a[k].coef, b[k].coef);
      EXPECT_EQ(a[k].rank, b[k].rank);
    }
  }
}

TEST(GmtEquivalence, SameSeedSameTreeOnEveryCpuBackend) {
  if (!have_openmp()) GTEST_SKIP() << gmt_test::registry().info("gmt", "openmp").reason;
  const Dataset d = gmt_test::make_dataset(4000, 3, 5, gmt_test::piecewise, 0.1);
  GmtParams p;
  p.population = 16;
  p.iterations = 60;
  p.seed = 123;
  std::vector<std::string> models;
  for (const std::string b : {"sequential", "openmp"}) {
    auto e = gmt_test::registry().create<ModelTreeEvaluator>("gmt", b);
    EvalOptions o;
    o.chunk_rows = 512;
    o.threads = 3;
    e->configure(o);
    TrainResult r = train(d, p, *e, false);
    models.push_back(to_json(r.best.root.get(), d).dump() + " fitness " + std::to_string(r.best.fitness) + " history " +
                     std::to_string(r.summary.best_history.back()));
  }
  EXPECT_EQ(models[0], models[1]);
}
