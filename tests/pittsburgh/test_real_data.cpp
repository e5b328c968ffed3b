// Every registered backend (every option variant its capabilities allow) against the independent
// reference evaluator and the family's reference backend on every shared classification dataset.
// The ".../cuda" instance carries the ctest label gpu.
#include <gtest/gtest.h>

#include "reference.hpp"
#include "shared_data.hpp"
#include "test_util.hpp"
#include "tests/common/equivalence.hpp"

namespace gpudm::pittsburgh {
namespace {

using PittsburghSharedData = gpudm::testing::IsEquivalentToRef<pitt_test::PittsburghTraits>;

TEST_P(PittsburghSharedData, MatchesTheReferenceOnEverySharedDataset) {
  if (const std::string why = pitt_test::ensure_data_dir(); !why.empty()) GTEST_SKIP() << why;
  datasets::CatalogProvider provider;
  auto ev = backend();
  auto oracle = reference();
  for (const auto& c : pitt_test::shared_cases()) {
    std::shared_ptr<const Dataset> d;
    try {
      d = pitt_test::load_shared(provider, c);
    } catch (const Error& e) {
      ADD_FAILURE() << c.name << ": " << e.what();
      continue;
    }
    const Population p = random_population(*d, 10, RandomRuleSpec{}, 7);
    const pitt_test::ReferenceResult ref = pitt_test::reference_evaluate(p, *d);
    oracle->prepare(*d);
    const EvaluationResult want = pitt_test::evaluate(*oracle, p);
    EXPECT_EQ(pitt_test::reference_difference(ref, want), "") << c.name << ": the reference backend";
    EXPECT_GT(want.gpops, 0u);
    for (const auto& v : pitt_test::variants(ev->capabilities())) {
      ev->configure(v.options);
      ev->prepare(*d);
      const EvaluationResult got = pitt_test::evaluate(*ev, p);
      EXPECT_EQ(pitt_test::reference_difference(ref, got), "") << c.name << " " << backend_name() << " " << v.label;
      EXPECT_EQ(pitt_test::first_difference(want, got), "") << c.name << " " << backend_name() << " " << v.label;
    }
  }
}

GPUDM_INSTANTIATE_EQUIVALENCE(PittsburghSharedData, pitt_test::PittsburghTraits);

}  // namespace
}  // namespace gpudm::pittsburgh
