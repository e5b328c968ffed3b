// Every CPU backend against the sequential oracle on every shared classification dataset.
#include <gtest/gtest.h>

#include "shared_data.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::pittsburgh;

TEST(PittsburghSharedData, OpenMPIsEquivalentToSequential) {
  if (const std::string why = pitt_test::ensure_data_dir(); !why.empty()) GTEST_SKIP() << why;
#ifndef GPUDM_HAVE_OPENMP
  GTEST_SKIP() << "OpenMP backend not built";
#endif
  datasets::CatalogProvider provider;
  Registry r;
  register_pittsburgh(r);
  for (const auto& c : pitt_test::shared_cases()) {
    std::shared_ptr<const Dataset> d;
    try {
      d = pitt_test::load_shared(provider, c);
    } catch (const Error& e) {
      ADD_FAILURE() << c.name << ": " << e.what();
      continue;
    }
    const Population p = random_population(*d, 10, RandomRuleSpec{}, 7);
    auto ref = r.create<RuleSetEvaluator>(kFamilyName, "sequential");
    ref->prepare(*d);
    const EvaluationResult want = pitt_test::evaluate(*ref, p);
    EvaluatorOptions o;
    o.threads = 2;
    auto ev = r.create<RuleSetEvaluator>(kFamilyName, "openmp");
    ev->configure(o);
    ev->prepare(*d);
    const EvaluationResult got = pitt_test::evaluate(*ev, p);
    EXPECT_EQ(pitt_test::first_difference(want, got), "") << c.name;
    EXPECT_GT(want.gpops, 0u);
  }
}
