// Every registered backend x every interpreter gives coverage identical to the one-instance
// reference, on random trees over random datasets (nominal attributes, NaN, +-inf, -0, ties),
// for several depths and row counts that are not multiples of the batch or warp sizes.
// The ".../cuda" instance carries the ctest label gpu (test_subtree_cuda covers larger shapes).
#include <gtest/gtest.h>

#include <algorithm>

#include "algorithms/core/rng.hpp"
#include "tests/common/equivalence.hpp"
#include "tests/subtree/helpers.hpp"

namespace gpudm::subtree {
namespace {

struct Shape {
  std::size_t rows, cols;
  int depth, trees;
};

const std::vector<Shape> kShapes = {
    {1, 3, 1, 3},   {31, 4, 2, 5},    {33, 5, 3, 7},    {300, 9, 4, 8},
    {257, 6, 5, 4}, {1000, 12, 6, 6}, {513, 5, 7, 3},   {100, 4, 10, 2},
};

struct SubtreeTraits {
  using Interface = TreeInterpreter;
  static constexpr const char* kFamily = "subtree";
  static void register_backends(Registry& r) { register_subtree(r); }
};
using SubtreeEquivalence = gpudm::testing::IsEquivalentToRef<SubtreeTraits>;

// Every backend x interpreter (x thread count where the backend has threads) against the
// one-instance reference coverage, and against the reference backend.
TEST_P(SubtreeEquivalence, CoverageOfEveryInterpreter) {
  auto interp = backend();
  auto ref_backend = reference();
  const std::vector<int> threads = interp->capabilities().threads ? std::vector<int>{1, 3} : std::vector<int>{0};
  std::uint64_t seed = 100;
  for (const Shape& sh : kShapes)
  for (const double missing : {0.02, 0.0}) {  // with NaN, and NaN-free (the bit-level fast leaf form)
    const Dataset d = test::random_dataset(sh.rows, sh.cols, ++seed, missing);
    const Population pop = generate_population(d, sh.trees, sh.depth, Rng(seed));
    validate_population(pop, d);
    const Coverage ref = reference_coverage(pop, d);
    interp->prepare(d);
    ref_backend->prepare(d);
    PhaseTimer ref_timer, timer;  // one per backend: a host and a device backend time "interpret" on two clocks
    Coverage want;
    ref_backend->evaluate(pop, want, ref_timer);
    EXPECT_EQ(first_difference(want, ref, d.rows()), "") << "the reference backend differs from reference_coverage";
    Coverage c;  // reused: words left from the previous interpreter are poisoned, every word must be rewritten
    for (const int t : threads)
    for (Strategy s : {Strategy::postfix, Strategy::mixed, Strategy::subtree, Strategy::best}) {
      if (s == Strategy::best && sh.depth > kMaxBitDepth) continue;
      interp->configure({s, t});
      std::fill(c.bits.begin(), c.bits.end(), 0xA5A5A5A5u);
      interp->evaluate(pop, c, timer);
      ASSERT_EQ(c.rows, d.rows());
      ASSERT_EQ(c.bits.size(), ref.bits.size());
      EXPECT_EQ(first_difference(c, ref, d.rows()), "")
          << backend_name() << "/" << to_string(s) << " threads " << t << " missing " << missing << " rows " << sh.rows
          << " cols " << sh.cols << " depth " << sh.depth;
      EXPECT_EQ(interp->describe().value("interpreter", ""), to_string(s));
    }
  }
}
GPUDM_INSTANTIATE_EQUIVALENCE(SubtreeEquivalence, SubtreeTraits);

// The family end to end on a fixed dataset: every backend x interpreter passes its own
// validation and all produce the same checksum; CPU row caps are flagged as estimated.
TEST(SubtreeFamily, RunCaseChecksumsAgreeAcrossBackendsAndInterpreters) {
  test::FixedProvider provider;
  provider.add("rnd", test::random_dataset(700, 8, 9));
  const Registry reg = test::subtree_registry();
  auto family = make_subtree_family();
  std::string checksum;
  int runs = 0;
  for (const auto& b : reg.backends("subtree")) {
    if (!b.available) continue;
    for (const char* interp : {"auto", "postfix", "mixed", "subtree", "best"}) {
      CaseContext ctx;
      ctx.family = "subtree";
      ctx.backend = b.backend;
      ctx.dataset = "rnd";
      ctx.params = {{"interpreter", interp}, {"population", 12}, {"tree_size", 31}, {"threads", 2}, {"validate_rows", 0}};
      ctx.seed = 7;
      ctx.warmup = 0;
      ctx.repetitions = 2;
      ctx.registry = &reg;
      ctx.datasets = &provider;
      const CaseResult r = family->run_case(ctx);
      ASSERT_EQ(r.status, "ok") << b.backend << "/" << interp << ": " << r.reason;
      EXPECT_TRUE(r.validation["passed"].get<bool>());
      EXPECT_EQ(r.timing.samples.size(), 2u);
      EXPECT_DOUBLE_EQ(r.metrics["gpops"].get<double>(), 12.0 * 31 * 700);
      EXPECT_GT(r.metrics["gpops_per_s"].get<double>(), 0.0);
      EXPECT_FALSE(r.metrics["estimated"].get<bool>());
      EXPECT_GT(r.breakdown.seconds("interpret"), 0.0);
      if (checksum.empty()) checksum = r.checksum;
      EXPECT_EQ(r.checksum, checksum) << b.backend << "/" << interp;
      ++runs;
    }
  }
  EXPECT_GE(runs, 5);
}

// A host run on a large set evaluates a sample of the rows spread over the data and is flagged
// estimated, its method stated.
TEST(SubtreeFamily, CpuRowSampleIsFlaggedEstimated) {
  test::FixedProvider provider;
  provider.add("rnd", test::random_dataset(1000, 4, 2));
  const Registry reg = test::subtree_registry();
  auto family = make_subtree_family();
  CaseContext ctx;
  ctx.backend = "sequential";
  ctx.dataset = "rnd";
  ctx.params = {{"population", 4}, {"tree_size", 15}, {"estimate_sample_rows", 300}};
  ctx.warmup = 0;
  ctx.repetitions = 1;
  ctx.registry = &reg;
  ctx.datasets = &provider;
  const CaseResult r = family->run_case(ctx);
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.metrics["estimated"].get<bool>());
  EXPECT_EQ(r.metrics["rows_evaluated"].get<std::size_t>(), 300u);
  EXPECT_EQ(r.metrics["rows_total"].get<std::size_t>(), 1000u);
  EXPECT_EQ(r.dataset["rows"].get<std::size_t>(), 1000u);
  EXPECT_DOUBLE_EQ(r.metrics["gpops"].get<double>(), 4.0 * 15 * 300);
  EXPECT_NEAR(r.metrics["estimated_full_seconds"].get<double>(), r.timing.median() * 1000 / 300, 1e-12);
  EXPECT_NE(r.metrics["estimate_method"].get<std::string>().find("spread"), std::string::npos);
}

TEST(SubtreeFamily, RejectsBadParamsWithTheKeyName) {
  test::FixedProvider provider;
  provider.add("rnd", test::random_dataset(10, 3, 1));
  const Registry reg = test::subtree_registry();
  auto family = make_subtree_family();
  CaseContext ctx;
  ctx.backend = "sequential";
  ctx.dataset = "rnd";
  ctx.registry = &reg;
  ctx.datasets = &provider;
  ctx.params = {{"tree_size", 50}};
  try {
    family->run_case(ctx);
    FAIL() << "tree_size 50 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("params.tree_size: expects one of 3, 7, 15"), std::string::npos) << e.what();
  }
  ctx.params = {{"interpreter", "stack"}};
  try {
    family->run_case(ctx);
    FAIL() << "interpreter 'stack' accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("params.interpreter: expects one of \"auto\", \"postfix\""), std::string::npos)
        << e.what();
  }
  ctx.params = {{"interpreter", "best"}, {"tree_size", 255}};
  EXPECT_THROW(family->run_case(ctx), Error);
}

}  // namespace
}  // namespace gpudm::subtree
