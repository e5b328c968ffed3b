// CUDA backend (faithful and fast paths, 1..N devices) against the sequential oracle.
// Label gpu: skipped visibly without a device.
#include <gtest/gtest.h>

#include "algorithms/pittsburgh/evaluator.hpp"
#include "backends/cuda/common/device_info.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::pittsburgh;

namespace {
EvaluationResult run(const std::string& backend, const Dataset& d, const Population& p, EvaluatorOptions o = {}) {
  Registry r;
  register_pittsburgh(r);
  auto ev = r.create<RuleSetEvaluator>(kFamilyName, backend);
  ev->configure(o);
  ev->prepare(d);
  EvaluationResult res;
  ev->evaluate(p, res);
  return res;
}
}  // namespace

class CudaPaths : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  void SetUp() override {
    if (cuda_info::device_count() == 0) GTEST_SKIP() << "no CUDA device: " << cuda_info::unavailable_reason();
    if (std::get<1>(GetParam()) > cuda_info::device_count())
      GTEST_SKIP() << "needs " << std::get<1>(GetParam()) << " devices, " << cuda_info::device_count() << " present";
  }
};

TEST_P(CudaPaths, IsEquivalentToSequential) {
  const auto [path, devices] = GetParam();
  EvaluatorOptions o;
  o.path = path;
  o.devices = devices;
  struct Case {
    std::size_t rows, numeric;
    int classes;
    std::size_t pop;
  };
  // Shapes cover: tiny data, a partial last tile, R = 4/2/1 and the 128-thread block (wide data).
  for (const Case c : {Case{6, 1, 2, 3}, Case{150, 4, 3, 10}, Case{5000, 9, 7, 25}, Case{20000, 20, 3, 8},
                       Case{4099, 41, 23, 5}, Case{3000, 60, 4, 4}}) {
    const Dataset d = pitt_test::random_dataset(c.rows, c.numeric, c.classes, c.rows + c.numeric);
    const Population p = random_population(d, c.pop, RandomRuleSpec{}, c.rows * 3 + 1);
    const EvaluationResult want = run("sequential", d, p);
    const EvaluationResult got = run("cuda", d, p, o);
    EXPECT_EQ(pitt_test::first_difference(want, got), "")
        << path << " devices " << devices << " rows " << c.rows << " cols " << c.numeric + 1;
    EXPECT_EQ(got.checksum(), want.checksum());
    for (std::size_t i = 0; i < want.accuracy.size(); ++i) EXPECT_DOUBLE_EQ(got.accuracy[i], want.accuracy[i]);
    EXPECT_GT(got.phases.seconds("transfers"), 0.0);
  }
}

TEST_P(CudaPaths, EmptyRulesDeepStacksAndEmptyIndividuals) {
  const auto [path, devices] = GetParam();
  EvaluatorOptions o;
  o.path = path;
  o.devices = devices;
  const Dataset d = pitt_test::random_dataset(1000, 3, 3, 5);
  Population p = random_population(d, 6, RandomRuleSpec{}, 8);
  p.individuals[1].rules.clear();                              // default class only
  p.individuals[2].rules[0].tokens = {rules::make_word(rules::kEnd)};  // covers everything
  // Depth 40 > the fast path's 32-bit stack: the evaluator must fall back, still exact.
  std::vector<std::uint32_t> deep;
  for (int i = 0; i < 40; ++i) {
    deep.push_back(rules::make_word(rules::kGe, static_cast<std::uint32_t>(i % 3)));
    deep.push_back(rules::float_as_word(-3.0f));
  }
  for (int i = 0; i < 39; ++i) deep.push_back(rules::make_word(rules::kOr));
  deep.push_back(rules::make_word(rules::kEnd));
  p.individuals[4].rules[1].tokens = deep;
  const EvaluationResult want = run("sequential", d, p);
  const EvaluationResult got = run("cuda", d, p, o);
  EXPECT_EQ(pitt_test::first_difference(want, got), "");
}

INSTANTIATE_TEST_SUITE_P(Pittsburgh, CudaPaths,
                         ::testing::Combine(::testing::Values("faithful", "fast"), ::testing::Values(1, 2)));

#include "shared_data.hpp"

TEST(PittsburghSharedDataGpu, BothPathsAreEquivalentToSequential) {
  if (cuda_info::device_count() == 0) GTEST_SKIP() << "no CUDA device: " << cuda_info::unavailable_reason();
  if (const std::string why = pitt_test::ensure_data_dir(); !why.empty()) GTEST_SKIP() << why;
  datasets::CatalogProvider provider;
  for (const auto& c : pitt_test::shared_cases()) {
    const auto d = pitt_test::load_shared(provider, c);
    const Population p = random_population(*d, 25, RandomRuleSpec{}, 3);
    const EvaluationResult want = run("sequential", *d, p);
    for (const char* path : {"faithful", "fast"}) {
      EvaluatorOptions o;
      o.path = path;
      const EvaluationResult got = run("cuda", *d, p, o);
      EXPECT_EQ(pitt_test::first_difference(want, got), "") << c.name << " " << path;
    }
  }
}
