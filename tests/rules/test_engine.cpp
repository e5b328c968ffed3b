// The rule engine on every registered backend (the "/cuda" instances carry the ctest label gpu):
// per-rule per-class counts and coverage bits identical to the one-instance reference on random
// populations over random datasets (every path, feature layout, rows per thread and thread count
// a backend offers), identical to the reference backend on every shared classification dataset,
// malformed rules rejected before evaluation with the rule named.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "algorithms/rules/batch.hpp"
#include "algorithms/rules/ranked.hpp"
#include "datasets/catalog.hpp"
#include "engine_helpers.hpp"
#include "tests/common/equivalence.hpp"

namespace gpudm::rules {
namespace {

struct EngineTraits {
  using Interface = RuleEvaluator;
  static constexpr const char* kFamily = kEngineFamily;
  static void register_backends(Registry& r) { register_rules(r); }
};
using RuleEngineEquivalence = gpudm::testing::IsEquivalentToRef<EngineTraits>;

using test::configurations;
using test::describe;

struct Shape {
  std::size_t rows, cols;
  int classes, depth;
  std::size_t rules;
};
const std::vector<Shape> kShapes = {{1, 3, 2, 2, 5},      {31, 4, 3, 3, 9},    {33, 5, 2, 4, 17},  {300, 9, 5, 5, 40},
                                    {1000, 12, 7, 6, 64}, {2049, 4, 40, 3, 12}, {4133, 25, 10, 4, 30}, {70, 60, 3, 3, 11}};

TEST_P(RuleEngineEquivalence, CountsAndCoverageEqualTheReference) {
  auto engine = backend();
  std::uint64_t seed = 500;
  for (const Shape& sh : kShapes)
    for (const bool half_exact : {true, false})
      for (const double missing : {0.0, 0.03})
      for (const int deep : {0, 14, 33}) {  // packed fast path, f32 fast path, faithful fallback
        const Dataset d = test::random_dataset(sh.rows, sh.cols, sh.classes, ++seed, missing, half_exact);
        const RulePopulation pop = test::random_population(d, sh.rules, sh.depth, seed, deep);
        const RuleCounts want = reference_counts(pop, d, Want::counts_and_coverage);
        const RuleCounts want_counts = reference_counts(pop, d, Want::counts);
        for (const EngineOptions& o : configurations(engine->capabilities())) {
          engine->configure(o);
          engine->prepare(d);
          PhaseTimer t;
          RuleCounts got;
          got.coverage.assign(pop.size() * ((d.rows() + 31) / 32), 0xA5A5A5A5u);  // every word must be rewritten
          engine->evaluate(pop, got, t, Want::counts_and_coverage);
          const std::string ctx = backend_name() + " " + describe(o) + " rows " + std::to_string(sh.rows) + " cols " +
                                  std::to_string(sh.cols) + " classes " + std::to_string(sh.classes) + " half_exact " +
                                  std::to_string(half_exact) + " missing " + std::to_string(missing) + " deep " +
                                  std::to_string(deep) + " -> " + engine->describe().dump();
          EXPECT_EQ(first_difference(want, got), "") << ctx;
          if (engine->capabilities().device() && o.path == Path::fast) {  // the documented fallbacks
            const auto j = engine->describe();
            const bool fast_ok = deep != 33 && sh.classes <= 32;
            EXPECT_EQ(j.value("path_used", std::string()), fast_ok ? "fast" : "faithful") << ctx;
            if (fast_ok) {
              EXPECT_EQ(j.value("features", std::string()),
                        deep == 0 && o.features != Features::f32 ? "f16x2 (ranked codes)" : "f32")
                  << ctx;
            }
          }
          RuleCounts counts_only;
          engine->evaluate(pop, counts_only, t, Want::counts);
          EXPECT_EQ(first_difference(want_counts, counts_only), "") << ctx << " (counts only)";
          EXPECT_TRUE(counts_only.coverage.empty());
          EXPECT_EQ(got.gpops, want.gpops);
        }
      }
}

TEST_P(RuleEngineEquivalence, ConfusionFollowsForAnyConsequent) {
  auto engine = backend();
  const Dataset d = test::random_dataset(257, 6, 4, 3, 0.02, true);
  const RulePopulation pop = test::random_population(d, 20, 4, 9);
  engine->prepare(d);
  RuleCounts c;
  PhaseTimer t;
  engine->evaluate(pop, c, t);
  for (std::size_t r = 0; r < pop.size(); ++r)
    for (int k = 0; k < d.num_classes(); ++k) {
      ConfusionMatrix want;
      for (std::size_t i = 0; i < d.rows(); ++i)
        want.add(outcome(evaluate(pop.rule(r), [&](std::uint32_t a) { return d.column(a)[i]; }), d.label(i) == k));
      EXPECT_TRUE(c.confusion(r, k) == want) << backend_name() << " rule " << r << " class " << k;
    }
}

TEST_P(RuleEngineEquivalence, MalformedRulesAreRejectedWithTheRuleNamed) {
  auto engine = backend();
  const Dataset d = test::random_dataset(100, 4, 3, 1, 0.0, true);
  engine->prepare(d);
  const auto expect_named = [&](std::vector<std::uint32_t> bad, const std::string& what) {
    RulePopulation pop = test::random_population(d, 3, 2, 4);
    pop.add(bad);
    RuleCounts c;
    PhaseTimer t;
    try {
      engine->evaluate(pop, c, t);
      ADD_FAILURE() << backend_name() << ": no error for " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("rule 3 of 4"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_named({make_word(kGt, 9), float_as_word(1.0f)}, "attribute 9 out of range");
  expect_named({make_word(kGt, 0), float_as_word(1.0f), make_word(kAnd)}, "stack underflow");
  expect_named({make_word(kGt, 0), float_as_word(NAN)}, "NaN");
  expect_named({make_word(kIn, 0), float_as_word(2.0f), float_as_word(1.0f)}, "interval bounds reversed");
  expect_named({make_word(kEq, 0), float_as_word(1.0f)}, "nominal operator on numeric attribute 0");
  expect_named({make_word(kGt, 0), float_as_word(1.0f), make_word(kLt, 1), float_as_word(1.0f)}, "missing AND/OR");
  expect_named({make_word(kOpcodeCount, 0)}, "unknown opcode");
}

TEST_P(RuleEngineEquivalence, EmptyPopulationAndDescribe) {
  auto engine = backend();
  const Dataset d = test::random_dataset(50, 3, 2, 2, 0.0, true);
  engine->prepare(d);
  RuleCounts c;
  PhaseTimer t;
  engine->evaluate(RulePopulation{}, c, t, Want::counts_and_coverage);
  EXPECT_EQ(c.rules, 0u);
  EXPECT_TRUE(c.covered.empty());
  EXPECT_EQ(c.class_rows.size(), 2u);
  EXPECT_TRUE(engine->describe().is_object());
}

// The paper's datasets through the catalog: counts and coverage equal the reference backend's.
TEST_P(RuleEngineEquivalence, SharedClassificationDatasets) {
  if (std::getenv("GPUDM_DATA_DIR") == nullptr) {
#ifdef GPUDM_SOURCE_DIR
    const auto shared = std::filesystem::path(GPUDM_SOURCE_DIR) / ".." / "shared" / "datasets";
    if (!std::filesystem::exists(shared / "STATS.tsv")) GTEST_SKIP() << "GPUDM_DATA_DIR is not set and ../shared/datasets is absent";
    setenv("GPUDM_DATA_DIR", shared.string().c_str(), 0);
#else
    GTEST_SKIP() << "GPUDM_DATA_DIR is not set";
#endif
  }
  if (is_reference()) GTEST_SKIP() << "the reference backend is the oracle here";
  auto engine = backend();
  auto ref = reference();
  datasets::CatalogProvider provider;
  struct Case {
    const char* name;
    long long rows;
  };
  const Case cases[] = {{"iris", 0},     {"new_thyroid", 0}, {"ecoli", 0},   {"contraceptive", 0},  {"thyroid", 0},
                        {"penbased", 0}, {"shuttle", 0},     {"connect4", 0}, {"kddcup", 60000},  {"poker", 0},
                        {"poker_full", 60000}};
  for (const Case& c : cases) {
    nlohmann::json o = nlohmann::json::object();
    if (c.rows > 0) o["rows"] = c.rows;
    std::shared_ptr<const Dataset> d;
    try {
      d = provider.get(c.name, o);
    } catch (const Error& e) {
      ADD_FAILURE() << c.name << ": " << e.what();
      continue;
    }
    const RulePopulation pop = test::random_population(*d, 40, 5, 77);
    ref->prepare(*d);
    RuleCounts want;
    PhaseTimer t;
    ref->evaluate(pop, want, t, Want::counts_and_coverage);
    for (const EngineOptions& opt : configurations(engine->capabilities())) {
      engine->configure(opt);
      engine->prepare(*d);
      RuleCounts got;
      engine->evaluate(pop, got, t, Want::counts_and_coverage);
      EXPECT_EQ(first_difference(want, got), "") << c.name << " " << backend_name() << " " << describe(opt);
    }
  }
}

// The device split: slices of the population on one GPU ([0, 0]) and, where the machine has
// them, on two ([0, 1], devices = 2): counts and coverage identical to one device, every rule in
// its place (slice boundaries inside a rule group, a slice per rule, more slices than rules).
TEST_P(RuleEngineEquivalence, DeviceSplitEqualsOneDevice) {
  auto engine = backend();
  if (!engine->capabilities().device()) GTEST_SKIP() << "host backends have no device split";
  const Dataset d = test::random_dataset(5000, 7, 5, 41, 0.02, false);
  for (const std::size_t rules : {1u, 2u, 3u, 57u}) {
    const RulePopulation pop = test::random_population(d, rules, 5, 100 + rules, rules > 2 ? 14 : 0);
    const RuleCounts want = reference_counts(pop, d, Want::counts_and_coverage);
    std::vector<EngineOptions> splits;
    for (const auto& ids : {std::vector<int>{0, 0}, std::vector<int>{0, 0, 0, 0}}) {
      EngineOptions o;
      o.device_ids = ids;
      splits.push_back(o);
    }
    const int gpus = engine->capabilities().devices;
    if (gpus >= 2) {
      EngineOptions o;
      o.devices = 2;
      splits.push_back(o);
      o.path = Path::faithful;
      splits.push_back(o);
    }
    for (const EngineOptions& o : splits) {
      engine->configure(o);
      engine->prepare(d);
      RuleCounts got;
      PhaseTimer t;
      engine->evaluate(pop, got, t, Want::counts_and_coverage);
      const auto j = engine->describe();
      const std::string ctx = describe(o) + " rules " + std::to_string(rules) + " -> " + j.dump();
      EXPECT_EQ(first_difference(want, got), "") << ctx;
      const std::size_t slices = o.device_ids.empty() ? static_cast<std::size_t>(o.devices) : o.device_ids.size();
      EXPECT_EQ(j.value("slices_used", std::size_t{1}), std::min(slices, rules)) << ctx;
    }
    if (gpus < 2) std::cout << "[ note ] " << gpus << " GPU(s): the two-device cases ran as [0, 0] only\n";
  }
  // A device the machine does not have is Unavailable (a run skips, it does not fail).
  EngineOptions missing;
  missing.device_ids = {0, 4096};
  EXPECT_THROW(engine->configure(missing), Unavailable);
  EngineOptions both;
  both.devices = 3;
  both.device_ids = {0, 0};
  EXPECT_THROW(engine->configure(both), Error);
}

GPUDM_INSTANTIATE_EQUIVALENCE(RuleEngineEquivalence, EngineTraits);

// The batch interpreter on its own: every row of a batch, partial batches, NOT past the end.
TEST(RuleBatch, MatchesOneInstanceAtATime) {
  for (std::size_t rows : {1u, 63u, 64u, 65u, 255u, 256u, 300u}) {
    const Dataset d = test::random_dataset(rows, 5, 3, rows, 0.05, true);
    const RulePopulation pop = test::random_population(d, 30, 5, rows + 1, 33);
    for (std::size_t r = 0; r < pop.size(); ++r)
      for (std::size_t b = 0; b < rows; b += kBatchRows) {
        const std::size_t n = std::min(kBatchRows, rows - b);
        std::uint64_t m[kBatchWords];
        evaluate_batch(pop.rule(r), d, b, n, m);
        for (std::size_t j = 0; j < kBatchRows; ++j) {
          const bool want = j < n && evaluate(pop.rule(r), [&](std::uint32_t a) { return d.column(a)[b + j]; });
          ASSERT_EQ(((m[j / 64] >> (j % 64)) & 1u) != 0, want) << "rows " << rows << " rule " << r << " row " << b + j;
        }
      }
  }
}

TEST(RuleCounts, ConfusionFromCounts) {
  RuleCounts c;
  c.reset(1, 10, {4, 6}, false);
  c.covered = {3, 2};  // covers 3 of class 0, 2 of class 1
  const ConfusionMatrix m0 = c.confusion(0, 0), m1 = c.confusion(0, 1);
  EXPECT_EQ(m0.tp, 3u);
  EXPECT_EQ(m0.fp, 2u);
  EXPECT_EQ(m0.fn, 1u);
  EXPECT_EQ(m0.tn, 4u);
  EXPECT_EQ(m1.tp, 2u);
  EXPECT_EQ(m1.fp, 3u);
  EXPECT_EQ(m1.fn, 4u);
  EXPECT_EQ(m1.tn, 1u);
  EXPECT_EQ(c.covered_total(0), 5u);
}

// The ranked fp16 layout: every comparison, rewritten to codes, answers what rules::compare
// answers on the original values (missing values, +-inf, -0, thresholds between, on, below and
// above the values). This is the arithmetic the CUDA fast path relies on, checked on the host.
TEST(RuleRanked, RewrittenComparisonsAnswerAsTheOriginals) {
  for (const bool half_exact : {true, false}) {
    const Dataset d = test::random_dataset(3000, 6, 2, half_exact ? 3 : 4, 0.05, half_exact);
    const RankedColumns rc = rank_columns(d);
    ASSERT_FALSE(rc.codes.empty()) << rc.reason;
    Rng rng(9);
    for (std::size_t c = 0; c < d.cols(); ++c) {
      const float* v = rc.values.data() + rc.begin[c];
      const std::uint32_t n = rc.begin[c + 1] - rc.begin[c];
      ASSERT_TRUE(std::is_sorted(v, v + n));
      std::vector<float> thresholds = {-INFINITY, INFINITY, -0.0f, 0.0f, 1e30f, -1e30f};
      for (std::uint32_t i = 0; i < n; ++i) {
        thresholds.push_back(v[i]);
        thresholds.push_back(std::nextafter(v[i], INFINITY));
        thresholds.push_back(std::nextafter(v[i], -INFINITY));
      }
      for (int k = 0; k < 20; ++k) thresholds.push_back(static_cast<float>(rng.uniform(-6, 6)));
      for (std::uint32_t op = kGt; op <= kOut; ++op)
        for (std::size_t t = 0; t < thresholds.size(); t += 1 + (op >= kIn ? 3 : 0)) {
          const float a = thresholds[t], b = thresholds[(t * 7 + 3) % thresholds.size()];
          const float lo = std::min(a, b), hi = std::max(a, b);
          const float x0 = op >= kIn ? lo : a, x1 = op >= kIn ? hi : 0.0f;
          const RankedComparison rcmp = rank_comparison(op, x0, x1, v, n);
          for (std::size_t i = 0; i < d.rows(); ++i) {
            const bool want = compare(op, d.column(c)[i], x0, x1);
            const bool got = ranked_compare(rcmp, rc.codes[c * d.padded_rows() + i]);
            ASSERT_EQ(got, want) << "column " << c << " op " << opcode_name(op) << " a " << x0 << " b " << x1 << " x "
                                 << d.column(c)[i];
          }
        }
    }
  }
  // A column with more distinct values than codes is refused with the reason.
  Dataset wide("wide", Task::classification, kMaxRanks + 5, {Attribute{"w", AttributeKind::numeric, {}}}, {"a"});
  for (std::size_t i = 0; i < wide.rows(); ++i) wide.at(i, 0) = static_cast<float>(i);
  const RankedColumns rw = rank_columns(wide);
  EXPECT_TRUE(rw.codes.empty());
  EXPECT_NE(rw.reason.find("30725 distinct values"), std::string::npos) << rw.reason;
}

}  // namespace
}  // namespace gpudm::rules
