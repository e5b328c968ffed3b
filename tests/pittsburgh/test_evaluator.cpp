// Hand-computed decision lists and the CPU backends' equivalence (sequential is the oracle).
#include <gtest/gtest.h>

#include "algorithms/pittsburgh/evaluator.hpp"
#include "algorithms/pittsburgh/evaluate_cli.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::pittsburgh;
using nlohmann::json;

namespace {

Dataset six_rows() {
  Dataset d("six", Task::classification, 6, {{"x0", AttributeKind::numeric, {}}}, {"a", "b", "c"});
  for (int i = 0; i < 6; ++i) {
    d.at(i, 0) = static_cast<float>(i + 1);
    d.set_label(i, i / 2);
  }
  return d;
}

Population hand_population() {
  return population_from_json(json::parse(R"({"individuals": [
    {"default_class": 2, "rules": [{"antecedent": ["<=", 0, 2], "consequent": 0},
                                   {"antecedent": [">=", 0, 2], "consequent": 1}]},
    {"default_class": 2, "rules": [{"antecedent": [">=", 0, 2], "consequent": 1},
                                   {"antecedent": ["<=", 0, 2], "consequent": 0}]},
    {"default_class": 2, "rules": []},
    {"default_class": 1, "rules": [{"antecedent": ["IN", 0, 3, 4, "NOT"], "consequent": 2}]}
  ]})"));
}

std::vector<std::string> cpu_backends() {
  std::vector<std::string> b{"sequential"};
#ifdef GPUDM_HAVE_OPENMP
  b.push_back("openmp");
#endif
  return b;
}

std::unique_ptr<RuleSetEvaluator> make(const std::string& backend, EvaluatorOptions o = {}) {
  Registry r;
  register_pittsburgh(r);
  auto ev = r.create<RuleSetEvaluator>(kFamilyName, backend);
  ev->configure(o);
  return ev;
}

}  // namespace

class CpuBackends : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuBackends, HandComputedDecisionLists) {
  const Dataset d = six_rows();
  auto ev = make(GetParam());
  ev->prepare(d);
  PhaseTimer phases;
  const EvaluationResult res = pitt_test::evaluate(*ev, hand_population(), &phases);
  using CM = rules::ConfusionMatrix;
  auto cm = [](std::uint32_t tp, std::uint32_t tn, std::uint32_t fp, std::uint32_t fn) {
    CM m;
    m.tp = tp; m.tn = tn; m.fp = fp; m.fn = fn;
    return m;
  };
  EXPECT_EQ(res.rule(0, 0), cm(2, 4, 0, 0));  // x0 <= 2 -> a
  EXPECT_EQ(res.rule(0, 1), cm(2, 1, 3, 0));  // x0 >= 2 -> b
  EXPECT_EQ(res.rule(1, 0), cm(2, 1, 3, 0));
  EXPECT_EQ(res.rule(1, 1), cm(2, 4, 0, 0));
  EXPECT_EQ(res.rule(3, 0), cm(2, 2, 2, 0));  // NOT x0 IN [3,4] -> c
  EXPECT_FLOAT_EQ(res.rule_fitness[0], 1.0f);
  EXPECT_FLOAT_EQ(res.rule_fitness[1], 1.0f * 0.25f);
  // Decision-list order matters (4 vs 3 correct); an empty list predicts the default class.
  EXPECT_EQ(res.correct, (std::vector<std::uint32_t>{4, 3, 2, 4}));
  EXPECT_DOUBLE_EQ(res.accuracy[0], 4.0 / 6.0);
  // GPops: rules have 3, 3, 3, 3, 5 primitives over 6 rows.
  EXPECT_EQ(res.gpops, (3u + 3 + 3 + 3 + 5) * 6u);
  EXPECT_GE(phases.seconds("coverage"), 0.0);
  EXPECT_EQ(phases.phases().size(), 5u);  // encode + the paper's four steps
}

TEST_P(CpuBackends, MissingValuesNeverCover) {
  Dataset d = six_rows();
  d.set_missing(0, 0);
  auto ev = make(GetParam());
  ev->prepare(d);
  const EvaluationResult res = pitt_test::evaluate(*ev, hand_population());
  // Row 0 (label a) is no longer covered by x0 <= 2: one TP becomes an FN.
  EXPECT_EQ(res.rule(0, 0).tp, 1u);
  EXPECT_EQ(res.rule(0, 0).fn, 1u);
  // NOT (missing IN [3,4]) is true: row 0 still covered by individual 3's rule.
  EXPECT_EQ(res.rule(3, 0).fp, 2u);
}

TEST_P(CpuBackends, IsEquivalentToSequentialOnRandomPopulations) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const std::size_t rows = seed == 2 ? 9001 : 517;  // crosses the OpenMP chunk size
    const Dataset d = pitt_test::random_dataset(rows, 5, 2 + static_cast<int>(seed), seed);
    const Population p = random_population(d, 13, RandomRuleSpec{}, seed * 77);
    auto ref = make("sequential");
    ref->prepare(d);
    const EvaluationResult want = pitt_test::evaluate(*ref, p);
    for (int threads : {1, 3}) {
      EvaluatorOptions o;
      o.threads = threads;
      auto ev = make(GetParam(), o);
      ev->prepare(d);
      const EvaluationResult got = pitt_test::evaluate(*ev, p);
      EXPECT_EQ(pitt_test::first_difference(want, got), "") << GetParam() << " seed " << seed << " threads " << threads;
      EXPECT_EQ(got.checksum(), want.checksum());
    }
  }
}

TEST_P(CpuBackends, RejectsInvalidPopulationBeforeEvaluating) {
  const Dataset d = six_rows();
  auto ev = make(GetParam());
  ev->prepare(d);
  Population p = hand_population();
  p.individuals[1].rules[1].tokens[0] = rules::make_word(rules::kGt, 4);
  try {
    pitt_test::evaluate(*ev, p);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("individual 1, rule 1"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Pittsburgh, CpuBackends, ::testing::ValuesIn(cpu_backends()));

TEST(EvaluationJson, ListsEveryRuleAndIndividual) {
  const Dataset d = six_rows();
  auto ev = make("sequential");
  ev->prepare(d);
  const Population p = hand_population();
  const EvaluationResult res = pitt_test::evaluate(*ev, p);
  const ojson j = evaluation_to_json(p, res, d, "sequential");
  EXPECT_EQ(j["individuals"].size(), 4u);
  EXPECT_EQ(j["individuals"][0]["rules"][1]["fp"], 3);
  EXPECT_EQ(j["individuals"][1]["correct"], 3);
  EXPECT_EQ(j["gpops"], 17 * 6);
}
