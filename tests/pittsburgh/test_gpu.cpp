// CUDA backend (faithful and fast paths, f32 and the ranked f16x2 layout, 1..N devices and the
// two-slice split on one GPU) against the sequential oracle. Label gpu: skipped visibly without a
// device.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "algorithms/pittsburgh/evaluator.hpp"
#include "algorithms/core/machine.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::pittsburgh;

// Test names and failure messages print the path by name ("faithful", "fast"; KernelPath is the
// rule engine's rules::Path, so the printer lives in its namespace).
namespace gpudm::rules {
void PrintTo(Path p, std::ostream* os) { *os << '"' << to_string(p) << '"'; }
}  // namespace gpudm::rules

namespace {
EvaluationResult run(const std::string& backend, const Dataset& d, const Population& p, EvaluatorOptions o = {},
                     nlohmann::ordered_json* info = nullptr, PhaseTimer* phases = nullptr) {
  Registry r;
  register_pittsburgh(r);
  auto ev = r.create<RuleSetEvaluator>(kFamilyName, backend);
  ev->configure(o);
  ev->prepare(d);
  const EvaluationResult res = pitt_test::evaluate(*ev, p, phases);
  if (info) *info = ev->describe();
  return res;
}
// A CUDA evaluator configured for the f16x2 layout (not yet prepared).
std::unique_ptr<RuleSetEvaluator> f16x2_evaluator(Registry& reg) {
  register_pittsburgh(reg);
  auto ev = reg.create<RuleSetEvaluator>(kFamilyName, "cuda");
  EvaluatorOptions o;
  o.features = FeatureLayout::f16x2;
  ev->configure(o);
  return ev;
}
}  // namespace

// The split of a case: "1" and "2" devices, or "0,0": two slices on device 0 (the two-device code
// path on one GPU).
void set_split(EvaluatorOptions& o, const std::string& split) {
  o.devices = 1;
  o.device_ids.clear();
  if (split == "0,0") o.device_ids = {0, 0};
  else o.devices = std::stoi(split);
}

class CudaPaths : public ::testing::TestWithParam<std::tuple<KernelPath, std::string>> {
 protected:
  void SetUp() override {
    if (machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << machine::gpu_unavailable_reason();
    const std::string& split = std::get<1>(GetParam());
    if (split != "0,0" && std::stoi(split) > machine::gpu_count())
      GTEST_SKIP() << "needs " << split << " devices, " << machine::gpu_count() << " present";
  }
};

TEST_P(CudaPaths, IsEquivalentToSequential) {
  const auto [path, devices] = GetParam();
  EvaluatorOptions o;
  o.path = path;
  set_split(o, devices);
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
    // Few distinct values per column: "auto" takes the f16x2 layout (ranked codes) on the fast path.
    for (const FeatureLayout features : {FeatureLayout::automatic, FeatureLayout::f32}) {
      o.features = features;
      nlohmann::ordered_json info;
      PhaseTimer phases;
      const EvaluationResult got = run("cuda", d, p, o, &info, &phases);
      if (path == KernelPath::fast) {  // missing values and shallow stacks: "auto" must take f16x2
        EXPECT_EQ(info.value("features", std::string()), features == FeatureLayout::automatic ? "f16x2" : "f32")
            << info.dump();
      }
      EXPECT_EQ(pitt_test::first_difference(want, got), "")
          << to_string(path) << " features " << to_string(features) << " devices " << devices << " rows " << c.rows
          << " cols " << c.numeric + 1;
      EXPECT_EQ(got.checksum(), want.checksum());
      for (std::size_t i = 0; i < want.accuracy.size(); ++i) EXPECT_DOUBLE_EQ(got.accuracy[i], want.accuracy[i]);
      EXPECT_GT(phases.seconds("transfers"), 0.0);
      if (path == KernelPath::faithful) break;
    }
  }
}

TEST_P(CudaPaths, EmptyRulesDeepStacksAndEmptyIndividuals) {
  const auto [path, devices] = GetParam();
  EvaluatorOptions o;
  o.path = path;
  set_split(o, devices);
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
  // A malformed individual in the last slice (each slice validates its own part):
  // the error names it, and the evaluator stays usable.
  Registry reg;
  register_pittsburgh(reg);
  auto ev = reg.create<RuleSetEvaluator>(kFamilyName, "cuda");
  ev->configure(o);
  ev->prepare(d);
  Population bad = p;
  bad.individuals[5].default_class = 9;
  EvaluationResult r;
  PhaseTimer phases;
  try {
    ev->evaluate(bad, r, phases);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("individual 5: default class 9"), std::string::npos) << e.what();
  }
  ev->evaluate(p, r, phases);
  EXPECT_EQ(pitt_test::first_difference(want, r), "");
}

// A dataset whose column 0 has more distinct values than the ranked layout's codes
// (rules::kMaxRanks): the one case where "auto" must take f32 and "f16x2" is refused.
Dataset too_many_values() {
  Dataset d = pitt_test::random_dataset(31000, 2, 3, 19);
  for (std::size_t i = 0; i < d.rows(); ++i) d.at(i, 0) = static_cast<float>(i) * 0.25f - 3000.0f;
  return d;
}

// The f16x2 layout rewrites every threshold to a ranked code (the column's distinct values,
// binary search); these are the thresholds where a careless rewrite goes wrong: exact values,
// one float ulp either side, between two values, beyond the fp16 range, +-inf, -0, tiny, and
// != / = against values the data do not hold.
TEST(PittsburghF16x2, EdgeThresholdsMatchSequential) {
  if (machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << machine::gpu_unavailable_reason();
  Dataset d = pitt_test::random_dataset(3000, 2, 3, 17);  // halves in [-5, 5] + nominal + missing
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> thresholds = {0.0f, -0.0f, 1.0f, 1.5f, std::nextafter(1.5f, 2.0f), std::nextafter(1.5f, 1.0f),
                                         1.25f, -4.75f, 5.0f, -5.0f, 65504.0f, 70000.0f, -70000.0f, 1e-8f, -1e-8f,
                                         inf, -inf, 2.0f, 0.1f};
  Population p;
  const std::uint32_t ops[] = {rules::kGt, rules::kGe, rules::kLt, rules::kLe, rules::kEq, rules::kNe};
  for (std::size_t t = 0; t < thresholds.size(); ++t) {
    Individual ind;
    ind.default_class = static_cast<std::int32_t>(t % 3);
    for (std::uint32_t op : ops) {
      Rule r;
      r.consequent = static_cast<std::int32_t>(op % 3);
      const bool nominal = op == rules::kEq || op == rules::kNe;  // attribute 2 is the nominal one
      r.tokens = {rules::make_word(op, nominal ? 2u : static_cast<std::uint32_t>(t % 2)),
                  rules::float_as_word(thresholds[t]),
                  rules::make_word(rules::kEnd)};
      ind.rules.push_back(r);
    }
    for (std::uint32_t op : {rules::kIn, rules::kOut}) {
      Rule r;
      r.consequent = 1;
      const float lo = std::min(thresholds[t], 1.5f), hi = std::max(thresholds[t], 1.5f);
      r.tokens = {rules::make_word(op, 0), rules::float_as_word(lo), rules::float_as_word(hi),
                  rules::make_word(rules::kNot), rules::make_word(rules::kEnd)};
      ind.rules.push_back(r);
    }
    p.individuals.push_back(ind);
  }
  Registry reg;
  auto ev = f16x2_evaluator(reg);
  EvaluatorOptions o;
  o.features = FeatureLayout::f16x2;
  ev->prepare(d);
  EvaluationResult got;
  PhaseTimer phases;
  ev->evaluate(p, got, phases);
  EXPECT_EQ(ev->describe().value("features", std::string()), "f16x2") << ev->describe().dump();
  EXPECT_EQ(pitt_test::first_difference(run("sequential", d, p), got), "");

  // Stacks deeper than the 16-bit row stacks fall back to f32, still exact.
  std::vector<std::uint32_t> deep;
  for (int i = 0; i < 20; ++i) {
    deep.push_back(rules::make_word(rules::kLe, static_cast<std::uint32_t>(i % 2)));
    deep.push_back(rules::float_as_word(static_cast<float>(i % 7) - 2.7f));
  }
  for (int i = 0; i < 19; ++i) deep.push_back(rules::make_word(i % 2 ? rules::kOr : rules::kAnd));
  deep.push_back(rules::make_word(rules::kEnd));
  p.individuals[0].rules[0].tokens = deep;
  ev->evaluate(p, got, phases);
  EXPECT_EQ(ev->describe().value("features", std::string()), "f32") << ev->describe().dump();
  EXPECT_EQ(pitt_test::first_difference(run("sequential", d, p), got), "");

  // Values fp16 cannot hold (0.1, 0.07) still have ranks: f16x2, still exact.
  p.individuals[0].rules[0].tokens = {rules::make_word(rules::kLe, 1), rules::float_as_word(0.1f), rules::make_word(rules::kEnd)};
  d.at(7, 1) = 0.1f;
  d.at(8, 1) = 0.07f;
  auto ev2 = reg.create<RuleSetEvaluator>(kFamilyName, "cuda");
  ev2->prepare(d);
  ev2->evaluate(p, got, phases);
  EXPECT_EQ(ev2->describe().value("features", std::string()), "f16x2") << ev2->describe().dump();
  EXPECT_EQ(pitt_test::first_difference(run("sequential", d, p), got), "");
  // More distinct values than codes: "auto" takes f32 and says why; "f16x2" is refused.
  const Dataset big = too_many_values();
  auto ev4 = reg.create<RuleSetEvaluator>(kFamilyName, "cuda");
  ev4->prepare(big);
  ev4->evaluate(p, got, phases);
  EXPECT_EQ(ev4->describe().value("features", std::string()), "f32");
  EXPECT_NE(ev4->describe().value("features_reason", std::string()).find("distinct values"), std::string::npos)
      << ev4->describe().dump();
  EXPECT_EQ(pitt_test::first_difference(run("sequential", big, p), got), "");
  auto ev3 = reg.create<RuleSetEvaluator>(kFamilyName, "cuda");
  ev3->configure(o);
  EXPECT_THROW(ev3->prepare(big), Error);
}

// Data at the edges of fp16 (±0, the smallest subnormal and normal, 2048/2050 where the spacing
// becomes 2, the largest finite values, missing) and thresholds on, just beside and between them:
// the rewrite to ranked codes must agree with the float comparisons on every row.
TEST(PittsburghF16x2, BoundaryValuesMatchSequential) {
  if (machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << machine::gpu_unavailable_reason();
  const float sub = std::ldexp(1.0f, -24), nrm = std::ldexp(1.0f, -14);
  const std::vector<float> vals = {0.0f, -0.0f, sub, -sub, nrm, -nrm, nrm - sub, 1.0f, 2048.0f, 2050.0f, -2050.0f,
                                   65472.0f, -65472.0f, 65504.0f, -65504.0f, 0.5f, -1.5f};
  Dataset d = pitt_test::random_dataset(2000, 2, 3, 23);
  for (std::size_t i = 0; i < d.rows(); ++i) {
    d.at(i, 0) = vals[i % vals.size()];
    d.at(i, 1) = vals[(i * 7 + 3) % vals.size()];
  }
  d.set_missing(5, 0);
  d.set_missing(9, 1);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> th = {inf, -inf, 70000.0f, -70000.0f, 65520.0f, -65520.0f, 1e-40f, -1e-40f};
  for (float v : vals) {
    th.push_back(v);
    th.push_back(std::nextafter(v, inf));
    th.push_back(std::nextafter(v, -inf));
  }
  Population p;
  for (std::size_t t = 0; t < th.size(); ++t) {
    Individual ind;
    ind.default_class = static_cast<std::int32_t>(t % 3);
    for (std::uint32_t op : {rules::kGt, rules::kGe, rules::kLt, rules::kLe}) {
      Rule r;
      r.consequent = static_cast<std::int32_t>(op % 3);
      r.tokens = {rules::make_word(op, static_cast<std::uint32_t>(t % 2)), rules::float_as_word(th[t]),
                  rules::make_word(rules::kEnd)};
      ind.rules.push_back(r);
    }
    for (std::uint32_t op : {rules::kIn, rules::kOut}) {
      Rule r;
      r.consequent = 2;
      const float other = th[(t * 5 + 1) % th.size()];
      r.tokens = {rules::make_word(op, static_cast<std::uint32_t>((t + 1) % 2)),
                  rules::float_as_word(std::min(th[t], other)), rules::float_as_word(std::max(th[t], other)),
                  rules::make_word(rules::kEnd)};
      ind.rules.push_back(r);
    }
    p.individuals.push_back(ind);
  }
  EvaluatorOptions o;
  o.features = FeatureLayout::f16x2;
  nlohmann::ordered_json info;
  const EvaluationResult got = run("cuda", d, p, o, &info);
  EXPECT_EQ(info.value("features", std::string()), "f16x2") << info.dump();
  EXPECT_EQ(pitt_test::first_difference(run("sequential", d, p), got), "");
}

// The threshold rewrite runs one warp per rule over 32-word chunks and ranks 32 comparisons at a
// time: rules of 0 to 70 comparisons (every comparison opcode, one- and two-operand tokens
// straddling the chunk edges, more comparisons than lanes) in one population, against the oracle.
TEST(PittsburghF16x2, LongRulesMatchSequential) {
  if (machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << machine::gpu_unavailable_reason();
  const Dataset d = pitt_test::random_dataset(2500, 3, 3, 41);
  const std::uint32_t ops[] = {rules::kGt, rules::kGe, rules::kLt, rules::kLe,
                               rules::kEq, rules::kNe, rules::kIn, rules::kOut};
  Population p;
  int seq = 0;
  for (int comparisons : {0, 1, 15, 31, 32, 33, 47, 64, 70}) {
    Individual ind;
    ind.default_class = comparisons % 3;
    for (int shift = 0; shift < 3; ++shift) {  // three alignments of the tokens against the chunks
      Rule r;
      r.consequent = (comparisons + shift) % 3;
      for (int k = 0; k < comparisons; ++k, ++seq) {
        const std::uint32_t op = ops[(k + shift) % 8];
        const float a = static_cast<float>((seq * 7) % 13) * 0.4f - 2.6f;
        if (rules::is_nominal_op(op)) {  // = and != on the nominal column (index 3, values 0-2)
          r.tokens.push_back(rules::make_word(op, 3));
          r.tokens.push_back(rules::float_as_word(static_cast<float>(seq % 3)));
        } else {
          r.tokens.push_back(rules::make_word(op, static_cast<std::uint32_t>((k + shift) % 3)));
          r.tokens.push_back(rules::float_as_word(a));
        }
        if (rules::operand_count(op) == 2) r.tokens.push_back(rules::float_as_word(a + 1.3f));
        if (k % 5 == 3) r.tokens.push_back(rules::make_word(rules::kNot));
        if (k > 0) r.tokens.push_back(rules::make_word((k + shift) % 4 ? rules::kOr : rules::kAnd));
      }
      r.tokens.push_back(rules::make_word(rules::kEnd));
      ind.rules.push_back(r);
    }
    p.individuals.push_back(ind);
  }
  EvaluatorOptions o;
  o.features = FeatureLayout::f16x2;
  for (const std::string split : {"1", "0,0"}) {
    set_split(o, split);
    nlohmann::ordered_json info;
    const EvaluationResult got = run("cuda", d, p, o, &info);
    EXPECT_EQ(info.value("features", std::string()), "f16x2") << info.dump();
    EXPECT_EQ(pitt_test::first_difference(run("sequential", d, p), got), "") << "split " << split;
  }
}

// The packed 16-bit row stacks at their limit: depth 13 stays f16x2, depth 14 falls back to f32;
// both agree with the sequential oracle (mixed AND / OR / NOT, so every stack bit matters).
TEST(PittsburghF16x2, DeepestPackedStacks) {
  if (machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << machine::gpu_unavailable_reason();
  const Dataset d = pitt_test::random_dataset(3000, 3, 3, 31);
  for (int depth : {13, 14}) {
    Population p = random_population(d, 4, RandomRuleSpec{}, 77);
    for (std::size_t i = 0; i < p.individuals.size(); ++i) {
      std::vector<std::uint32_t> e;
      for (int k = 0; k < depth; ++k) {
        e.push_back(rules::make_word(k % 2 ? rules::kLe : rules::kGt, static_cast<std::uint32_t>(k % 3)));
        e.push_back(rules::float_as_word(static_cast<float>((k * 3 + static_cast<int>(i)) % 9) * 0.5f - 2.25f));
        if (k % 4 == 1) e.push_back(rules::make_word(rules::kNot));
      }
      for (int k = 0; k + 1 < depth; ++k) {
        e.push_back(rules::make_word((k + static_cast<int>(i)) % 3 ? rules::kOr : rules::kAnd));
        if (k % 5 == 2) e.push_back(rules::make_word(rules::kNot));
      }
      e.push_back(rules::make_word(rules::kEnd));
      p.individuals[i].rules[0].tokens = e;
    }
    nlohmann::ordered_json info;
    const EvaluationResult got = run("cuda", d, p, EvaluatorOptions{}, &info);
    EXPECT_EQ(info.value("features", std::string()), depth <= 13 ? "f16x2" : "f32") << "depth " << depth << " " << info.dump();
    EXPECT_EQ(pitt_test::first_difference(run("sequential", d, p), got), "") << "depth " << depth;
  }
}

// A prepare() that fails (f16x2 refused) leaves no half state: evaluate() says so.
TEST(PittsburghF16x2, FailedPrepareThenEvaluateIsAnError) {
  if (machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << machine::gpu_unavailable_reason();
  const Dataset d = too_many_values();
  Registry reg;
  auto ev = f16x2_evaluator(reg);
  EXPECT_THROW(ev->prepare(d), Error);
  const Population p = random_population(d, 3, RandomRuleSpec{}, 1);
  EvaluationResult res;
  PhaseTimer phases;
  try {
    ev->evaluate(p, res, phases);
    ADD_FAILURE() << "evaluate() after a failed prepare() must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("before prepare"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Pittsburgh, CudaPaths,
                         ::testing::Combine(::testing::Values(KernelPath::faithful, KernelPath::fast),
                                            ::testing::Values(std::string("1"), std::string("2"), std::string("0,0"))));

#include "shared_data.hpp"

TEST(PittsburghSharedDataGpu, BothPathsAreEquivalentToSequential) {
  if (machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << machine::gpu_unavailable_reason();
  if (const std::string why = pitt_test::ensure_data_dir(); !why.empty()) GTEST_SKIP() << why;
  datasets::CatalogProvider provider;
  for (const auto& c : pitt_test::shared_cases()) {
    const auto d = pitt_test::load_shared(provider, c);
    const Population p = random_population(*d, 25, RandomRuleSpec{}, 3);
    const EvaluationResult want = run("sequential", *d, p);
    for (const KernelPath path : {KernelPath::faithful, KernelPath::fast}) {
      EvaluatorOptions o;
      o.path = path;
      const EvaluationResult got = run("cuda", *d, p, o);
      EXPECT_EQ(pitt_test::first_difference(want, got), "") << c.name << " " << to_string(path);
    }
  }
}
