// Every registered backend (the reference backend included) under every option variant its
// capabilities allow (threads; path x devices x features on a device) against the independent
// reference evaluator (reference.hpp, written from the paper) and against the family's reference
// backend: bit-identical counts, fitness and accuracy. Hand-computed decision lists check the
// reference evaluator itself. The ".../cuda" instances carry the ctest label gpu.
#include <gtest/gtest.h>

#include "algorithms/pittsburgh/evaluator.hpp"
#include "reference.hpp"
#include "test_util.hpp"
#include "tests/common/equivalence.hpp"

namespace gpudm::pittsburgh {
namespace {

using PittsburghEquivalence = gpudm::testing::IsEquivalentToRef<pitt_test::PittsburghTraits>;

rules::ConfusionMatrix cm(std::uint32_t tp, std::uint32_t tn, std::uint32_t fp, std::uint32_t fn) {
  rules::ConfusionMatrix m;
  m.tp = tp;
  m.tn = tn;
  m.fp = fp;
  m.fn = fn;
  return m;
}

// The hand-computed values of pitt_test::hand_population() on pitt_test::six_rows().
void expect_hand_values(const EvaluationResult& res, const std::string& what) {
  EXPECT_EQ(res.rule(0, 0), cm(2, 4, 0, 0)) << what;  // x0 <= 2 -> a
  EXPECT_EQ(res.rule(0, 1), cm(2, 1, 3, 0)) << what;  // x0 >= 2 -> b
  EXPECT_EQ(res.rule(1, 0), cm(2, 1, 3, 0)) << what;
  EXPECT_EQ(res.rule(1, 1), cm(2, 4, 0, 0)) << what;
  EXPECT_EQ(res.rule(3, 0), cm(2, 2, 2, 0)) << what;  // NOT x0 IN [3,4] -> c
  EXPECT_FLOAT_EQ(res.rule_fitness[0], 1.0f) << what;
  EXPECT_FLOAT_EQ(res.rule_fitness[1], 1.0f * 0.25f) << what;
  // Decision-list order matters (4 vs 3 correct); an empty list predicts the default class.
  EXPECT_EQ(res.correct, (std::vector<std::uint32_t>{4, 3, 2, 4})) << what;
  EXPECT_DOUBLE_EQ(res.accuracy[0], 4.0 / 6.0) << what;
  // GPops: rules have 3, 3, 3, 3, 5 primitives over 6 rows.
  EXPECT_EQ(res.gpops, (3u + 3 + 3 + 3 + 5) * 6u) << what;
}

TEST(PittsburghReferenceEvaluator, HandComputedDecisionLists) {
  const Dataset d = pitt_test::six_rows();
  const pitt_test::ReferenceResult r = pitt_test::reference_evaluate(pitt_test::hand_population(), d);
  ASSERT_EQ(r.rules.size(), 4u);
  const auto& m = r.rules[0][1];
  EXPECT_EQ(m.tp, 2u);
  EXPECT_EQ(m.tn, 1u);
  EXPECT_EQ(m.fp, 3u);
  EXPECT_EQ(m.fn, 0u);
  EXPECT_FLOAT_EQ(m.fitness, 0.25f);
  EXPECT_EQ(r.rules[3][0].fp, 2u);
  EXPECT_EQ(r.correct, (std::vector<std::uint32_t>{4, 3, 2, 4}));
  EXPECT_EQ(r.gpops, 17u * 6);
}

TEST_P(PittsburghEquivalence, HandComputedDecisionLists) {
  const Dataset d = pitt_test::six_rows();
  const Population p = pitt_test::hand_population();
  const pitt_test::ReferenceResult ref = pitt_test::reference_evaluate(p, d);
  auto ev = backend();
  for (const auto& v : pitt_test::variants(ev->capabilities())) {
    ev->configure(v.options);
    ev->prepare(d);
    PhaseTimer phases;
    const EvaluationResult res = pitt_test::evaluate(*ev, p, &phases);
    expect_hand_values(res, backend_name() + " " + v.label);
    EXPECT_EQ(pitt_test::reference_difference(ref, res), "") << backend_name() << " " << v.label;
    if (ev->capabilities().host()) {
      EXPECT_GE(phases.seconds("coverage"), 0.0);
      EXPECT_EQ(phases.phases().size(), 5u);  // encode + the paper's four steps
    }
  }
}

TEST_P(PittsburghEquivalence, MissingValuesNeverCover) {
  Dataset d = pitt_test::six_rows();
  d.set_missing(0, 0);
  auto ev = backend();
  ev->prepare(d);
  const EvaluationResult res = pitt_test::evaluate(*ev, pitt_test::hand_population());
  // Row 0 (label a) is no longer covered by x0 <= 2: one TP becomes an FN.
  EXPECT_EQ(res.rule(0, 0).tp, 1u);
  EXPECT_EQ(res.rule(0, 0).fn, 1u);
  // NOT (missing IN [3,4]) is true: row 0 still covered by individual 3's rule.
  EXPECT_EQ(res.rule(3, 0).fp, 2u);
  EXPECT_EQ(pitt_test::reference_difference(pitt_test::reference_evaluate(pitt_test::hand_population(), d), res), "");
}

// Random populations over random data (nominal attribute, missing values, ties) in shapes that
// cross the OpenMP chunk, a partial last tile, R = 4/2/1 and the 128-thread block (wide data).
TEST_P(PittsburghEquivalence, RandomPopulationsMatchTheReferenceAndTheReferenceBackend) {
  struct Case {
    std::size_t rows, numeric;
    int classes;
    std::size_t pop;
  };
  auto ev = backend();
  auto oracle = reference();
  std::uint64_t seed = 0;
  for (const Case c : {Case{6, 1, 2, 3}, Case{150, 4, 3, 10}, Case{517, 5, 3, 13}, Case{5000, 9, 7, 25},
                       Case{9001, 5, 4, 13}, Case{4099, 41, 23, 5}, Case{3000, 60, 4, 4}}) {
    ++seed;
    const Dataset d = pitt_test::random_dataset(c.rows, c.numeric, c.classes, seed * 101 + c.rows);
    const Population p = random_population(d, c.pop, RandomRuleSpec{}, seed * 77);
    const pitt_test::ReferenceResult ref = pitt_test::reference_evaluate(p, d);
    oracle->prepare(d);
    const EvaluationResult want = pitt_test::evaluate(*oracle, p);
    ASSERT_EQ(pitt_test::reference_difference(ref, want), "") << "the reference backend, rows " << c.rows;
    for (const auto& v : pitt_test::variants(ev->capabilities())) {
      ev->configure(v.options);
      ev->prepare(d);
      const EvaluationResult got = pitt_test::evaluate(*ev, p);
      const std::string where = backend_name() + " " + v.label + " rows " + std::to_string(c.rows) + " cols " +
                                std::to_string(c.numeric + 1);
      EXPECT_EQ(pitt_test::reference_difference(ref, got), "") << where;
      EXPECT_EQ(pitt_test::first_difference(want, got), "") << where;
      EXPECT_EQ(got.checksum(), want.checksum()) << where;
    }
  }
}

TEST_P(PittsburghEquivalence, RejectsInvalidPopulationBeforeEvaluating) {
  const Dataset d = pitt_test::six_rows();
  auto ev = backend();
  ev->prepare(d);
  Population p = pitt_test::hand_population();
  p.individuals[1].rules[1].tokens[0] = rules::make_word(rules::kGt, 4);
  try {
    pitt_test::evaluate(*ev, p);
    FAIL() << backend_name() << " accepted an attribute out of range";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("individual 1, rule 1"), std::string::npos) << e.what();
  }
}

GPUDM_INSTANTIATE_EQUIVALENCE(PittsburghEquivalence, pitt_test::PittsburghTraits);

}  // namespace
}  // namespace gpudm::pittsburgh
