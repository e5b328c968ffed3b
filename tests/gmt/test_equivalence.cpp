// Sequential == OpenMP: identical evaluation results (bit for bit: fixed chunks and TSQR blocks,
// merged in order) and therefore identical EA runs for the same seed.
#include <gtest/gtest.h>

#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/train.hpp"
#include "algorithms/gmt/tree.hpp"
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
    std::vector<Tree> trees;
    for (int i = 0; i < 12; ++i) trees.push_back(ea.init_tree(rng));
    gmt_test::make_clean(trees[5]);  // a tree whose leaves keep their models
    // Without and with the repair rule (the initial trees' leaves hold 5 or more of 500 sampled
    // rows, about 200 of the 20,000: min_rows 400 repairs many of them, in both modes).
    const RepairSpec rules[] = {{}, {400, RepairMode::promote}, {400, RepairMode::collapse}};
    for (const RepairSpec& rule : rules) {
      SCOPED_TRACE("repair min_rows " + std::to_string(rule.min_rows) + (rule.mode == RepairMode::promote ? " promote" : " collapse"));
      std::vector<Tree> a = trees, b = trees;
      const std::int64_t repairs0 = seq->counters().repairs;
      seq->evaluate(gmt_test::batch_of(a, 0, rule), t);
      omp->evaluate(gmt_test::batch_of(b, 0, rule), t);
      if (rule.min_rows > 0) {
        EXPECT_GT(seq->counters().repairs, repairs0) << "the rule must repair some trees";
      }
      for (std::size_t k = 0; k < a.size(); ++k) {
        ASSERT_EQ(a[k].size(), b[k].size());
        EXPECT_TRUE(a[k].same_model(b[k]));  // structure, models and coefficients bit for bit
        for (int i = 0; i < a[k].size(); ++i) {
          const TreeNode &x = a[k].node(i), &y = b[k].node(i);
          EXPECT_EQ(x.stats.count, y.stats.count);
          EXPECT_EQ(x.stats.sse, y.stats.sse);  // exact: same summation order
          EXPECT_EQ(x.stats.sae, y.stats.sae);
          EXPECT_EQ(x.stats.dipole_lo, y.stats.dipole_lo);
          EXPECT_EQ(x.stats.dipole_hi, y.stats.dipole_hi);
          EXPECT_EQ(x.stats.dipole_rand, y.stats.dipole_rand);
          EXPECT_EQ(x.rank, y.rank);
          EXPECT_EQ(x.dirty, y.dirty);
        }
      }
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
    models.push_back(to_json(r.best.tree, d).dump() + " fitness " + std::to_string(r.best.fitness) + " history " +
                     std::to_string(r.summary.best_history.back()) + " evaluations " + std::to_string(r.summary.evaluations) +
                     " calls " + std::to_string(r.summary.evaluate_calls) + " repairs " + std::to_string(r.summary.repairs));
  }
  EXPECT_EQ(models[0], models[1]);
}

namespace {
// The sequential evaluator, but offering the EA a pool of `threads` host threads.
class ThreadedHost final : public ModelTreeEvaluator {
 public:
  ThreadedHost(std::unique_ptr<ModelTreeEvaluator> inner, int threads)
      : inner_(std::move(inner)), pool_(static_cast<std::size_t>(threads - 1)) {}
  std::string name() const override { return inner_->name(); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  void configure(const EvalOptions& o) override { inner_->configure(o); }
  void prepare(const Dataset& d) override { inner_->prepare(d); }
  void evaluate(const EvalBatch& b, PhaseTimer& t) override { inner_->evaluate(b, t); }
  HostWorkers* host_pool() override { return &pool_; }

 private:
  std::unique_ptr<ModelTreeEvaluator> inner_;
  HostWorkers pool_;
};
}  // namespace

// The EA's operators run per pair on host threads (the GPU backend gives it the host's
// cores); each individual's operators draw from their own stream, so the run is the same for any
// number of host threads.
TEST(GmtEquivalence, SameSeedSameRunForAnyNumberOfEaHostThreads) {
  const Dataset d = gmt_test::make_dataset(3000, 3, 8, gmt_test::piecewise, 0.1);
  GmtParams p;
  p.population = 24;
  p.iterations = 80;
  p.seed = 77;
  std::vector<std::string> runs;
  for (int threads : {1, 2, 5, 16}) {
    ThreadedHost e(gmt_test::registry().create<ModelTreeEvaluator>("gmt", "sequential"), threads);
    TrainResult r = train(d, p, e, false);
    std::string h;
    for (double f : r.summary.best_history) h += std::to_string(f) + ",";
    runs.push_back(to_json(r.best.tree, d).dump() + " history " + h + " evaluations " + std::to_string(r.summary.evaluations));
  }
  for (std::size_t i = 1; i < runs.size(); ++i) EXPECT_EQ(runs[i], runs[0]) << "host threads run " << i;
}
