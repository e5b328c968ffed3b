// The --evaluate JSON. The backends' equivalence (hand-computed
// decision lists, random populations, missing values, invalid populations) is in
// test_equivalence.cpp, over every registered backend.
#include <gtest/gtest.h>

#include "algorithms/pittsburgh/evaluator.hpp"
#include "algorithms/pittsburgh/evaluate_cli.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::pittsburgh;

TEST(EvaluationJson, ListsEveryRuleAndIndividual) {
  const Dataset d = pitt_test::six_rows();
  Registry r;
  register_pittsburgh(r);
  auto ev = r.create<RuleSetEvaluator>(kFamilyName, r.reference(kFamilyName));
  ev->prepare(d);
  const Population p = pitt_test::hand_population();
  const EvaluationResult res = pitt_test::evaluate(*ev, p);
  const ojson j = evaluation_to_json(p, res, d, ev->name());
  EXPECT_EQ(j["individuals"].size(), 4u);
  EXPECT_EQ(j["individuals"][0]["rules"][1]["fp"], 3);
  EXPECT_EQ(j["individuals"][1]["correct"], 3);
  EXPECT_EQ(j["gpops"], 17 * 6);
}
