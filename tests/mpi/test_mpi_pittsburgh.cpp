// Pittsburgh rule sets across MPI ranks. The evaluator's rule engine is split over the
// ranks (rows), the engine hands each rank back only its own rows' coverage words, the decision list
// runs on those rows and the correct counts are summed. Every confusion matrix, correct count and
// accuracy must equal the independent one-instance-at-a-time reference (tests/pittsburgh) on the
// whole dataset at 1, 2 and 3 ranks — including a dataset of fewer than 32 rows (one rank holds
// every row, the others none, and all must still join the sums). Also the engine's local coverage
// itself: each rank's words are its slice of one process's coverage.
#include <gtest/gtest.h>

#include <string>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/pittsburgh/evaluator.hpp"
#include "algorithms/pittsburgh/population.hpp"
#include "algorithms/pittsburgh/sharded.hpp"
#include "algorithms/rules/sharded.hpp"
#include "tests/pittsburgh/reference.hpp"
#include "tests/pittsburgh/test_util.hpp"
#include "tests/rules/engine_helpers.hpp"

namespace gpudm {
namespace {

Registry& pitt_registry() {
  static Registry r = [] {
    Registry x;
    register_pittsburgh(x);
    register_rules(x);
    return x;
  }();
  return r;
}

TEST(MpiPittsburgh, DecisionListsOnEachRanksRowsEqualTheReference) {
  Comm& c = world();
  std::uint64_t seed = 4100;
  for (const std::size_t rows : {std::size_t{20}, std::size_t{1000}, std::size_t{4133}})
    for (const char* backend : {"sequential", "openmp", "cuda"}) {
      if (!pitt_registry().info(pittsburgh::kFamilyName, backend).available) continue;
      SCOPED_TRACE(std::string(backend) + ", " + std::to_string(rows) + " rows, " + std::to_string(c.size()) + " ranks");
      const Dataset d = pitt_test::random_dataset(rows, 5, 4, ++seed);
      pittsburgh::RandomRuleSpec spec;
      spec.rules_per_individual = 5;
      const pittsburgh::Population pop = pittsburgh::random_population(d, 12, spec, seed);
      // (the CPU backends split their rule engine's rows; CUDA is wrapped in a RowShardedEvaluator)
      auto ev = pittsburgh::across_ranks(pitt_registry().create<pittsburgh::RuleSetEvaluator>(pittsburgh::kFamilyName, backend));
      ev->prepare(d);
      pittsburgh::EvaluationResult res;
      PhaseTimer t;
      ev->evaluate(pop, res, t);
      const pitt_test::ReferenceResult ref = pitt_test::reference_evaluate(pop, d);
      EXPECT_EQ(res.correct, ref.correct);
      EXPECT_EQ(res.accuracy, ref.accuracy);
      std::size_t r = 0;
      for (std::size_t i = 0; i < ref.rules.size(); ++i)
        for (const auto& m : ref.rules[i]) {
          EXPECT_EQ(res.rule_confusion[r].tp, m.tp) << "individual " << i << ", rule " << r;
          EXPECT_EQ(res.rule_confusion[r].fp, m.fp) << "individual " << i << ", rule " << r;
          ++r;
        }
      if (c.size() > 1) {
        const nlohmann::ordered_json info = ev->describe();
        EXPECT_EQ(info.value("ranks", 0), c.size()) << "the evaluator's rows are split over the ranks";
      }
    }
}

TEST(MpiPittsburgh, LocalCoverageIsThisRanksSliceOfTheWhole) {
  Comm& c = world();
  const Dataset d = rules::test::random_dataset(2049, 5, 3, 77, 0.02, true);
  const rules::RulePopulation pop = rules::test::random_population(d, 17, 4, 78);
  auto one = pitt_registry().create<rules::RuleEvaluator>(rules::kEngineFamily, "sequential");
  one->prepare(d);
  rules::ShardedEvaluator ranks(pitt_registry().create<rules::RuleEvaluator>(rules::kEngineFamily, "openmp"), c);
  ranks.set_local_coverage(true);
  ranks.prepare(d);
  PhaseTimer t;
  rules::RuleCounts a, b;
  one->evaluate(pop, a, t, rules::Want::counts_and_coverage);
  ranks.evaluate(pop, b, t, rules::Want::counts_and_coverage);
  EXPECT_EQ(b.covered, a.covered);  // counts: summed over the ranks as ever
  const std::size_t w0 = ranks.row_begin() / 32, words = (ranks.row_end() - ranks.row_begin() + 31) / 32;
  ASSERT_EQ(b.words_per_rule, words);
  for (std::size_t r = 0; r < pop.size(); ++r)
    for (std::size_t k = 0; k < words; ++k)
      ASSERT_EQ(b.coverage_of(r)[k], a.coverage_of(r)[w0 + k]) << "rule " << r << ", word " << k;
}


// A backend that knows nothing of ranks: the independent reference on whatever rows it was prepared
// with. RowShardedEvaluator over it (each rank its block of rows, the counts summed) must give the
// reference's answer on the whole dataset at any rank count, ranks without rows included.
class ReferenceBackend final : public pittsburgh::RuleSetEvaluator {
 public:
  std::string name() const override { return "reference"; }
  Capabilities capabilities() const override { return {}; }
  void prepare(const Dataset& d) override { d_ = &d; }
  void evaluate(const pittsburgh::Population& pop, pittsburgh::EvaluationResult& res, PhaseTimer&) override {
    ++calls;
    const pitt_test::ReferenceResult r = pitt_test::reference_evaluate(pop, *d_);
    std::vector<std::uint32_t> irb{0};
    for (const auto& rules : r.rules) irb.push_back(irb.back() + static_cast<std::uint32_t>(rules.size()));
    res.reset_counts(std::move(irb), d_->rows());
    std::size_t k = 0;
    for (const auto& rules : r.rules)
      for (const auto& m : rules) res.rule_confusion[k++] = rules::ConfusionMatrix{m.tp, m.tn, m.fp, m.fn};
    res.correct = r.correct;
    res.gpops = r.gpops;
    res.finish();
  }
  int calls = 0;

 private:
  const Dataset* d_ = nullptr;
};

TEST(MpiPittsburgh, RowShardedBackendSumsToTheWholeDatasetsAnswer) {
  Comm& c = world();
  std::uint64_t seed = 5100;
  for (const std::size_t rows : {std::size_t{20}, std::size_t{1000}, std::size_t{4133}}) {
    SCOPED_TRACE(std::to_string(rows) + " rows, " + std::to_string(c.size()) + " ranks");
    const Dataset d = pitt_test::random_dataset(rows, 5, 4, ++seed);
    pittsburgh::RandomRuleSpec spec;
    spec.rules_per_individual = 4;
    const pittsburgh::Population pop = pittsburgh::random_population(d, 9, spec, seed);
    auto inner = std::make_unique<ReferenceBackend>();
    ReferenceBackend* raw = inner.get();
    pittsburgh::RowShardedEvaluator ev(std::move(inner), c);
    ev.prepare(d);
    pittsburgh::EvaluationResult res;
    PhaseTimer t;
    ev.evaluate(pop, res, t);
    const pitt_test::ReferenceResult ref = pitt_test::reference_evaluate(pop, d);
    EXPECT_EQ(res.rows, rows);
    EXPECT_EQ(res.correct, ref.correct);
    EXPECT_EQ(res.accuracy, ref.accuracy);
    EXPECT_EQ(res.gpops, ref.gpops);
    std::size_t r = 0;
    for (const auto& rules : ref.rules)
      for (const auto& m : rules) {
        EXPECT_EQ(res.rule_confusion[r], (rules::ConfusionMatrix{m.tp, m.tn, m.fp, m.fn})) << "rule " << r;
        EXPECT_EQ(res.rule_fitness[r], m.fitness) << "rule " << r;
        ++r;
      }
    // each rank evaluated its own rows only (none: not called)
    EXPECT_EQ(raw->calls, ev.row_end() > ev.row_begin() ? 1 : 0);
    if (c.size() > 1 && rows > 32) {  // more rows than one 32-row block: no rank holds them all
      EXPECT_LT(ev.row_end() - ev.row_begin(), rows);
    }
  }
}

}  // namespace
}  // namespace gpudm
