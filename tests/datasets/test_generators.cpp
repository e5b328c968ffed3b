#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <map>
#include <numeric>

#include "datasets/catalog.hpp"
#include "datasets/generators.hpp"
#include "datasets/portable_random.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::datasets;
using gpudm::datasets::test_support::expect_error;

namespace {

struct Moments {
  double mean = 0, sd = 0;
};
template <typename F>
Moments residual_moments(const Dataset& d, F mean_of) {
  double s = 0, s2 = 0;
  std::vector<float> x(d.cols());
  for (std::size_t r = 0; r < d.rows(); ++r) {
    for (std::size_t c = 0; c < d.cols(); ++c) x[c] = d.at(r, c);
    const double e = d.target(r) - mean_of(x.data());
    s += e;
    s2 += e * e;
  }
  const double n = static_cast<double>(d.rows());
  Moments m;
  m.mean = s / n;
  m.sd = std::sqrt(s2 / n - m.mean * m.mean);
  return m;
}

bool same_data(const Dataset& a, const Dataset& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  if (a.features() != b.features()) return false;
  return a.task() == Task::classification ? a.labels() == b.labels() : a.targets() == b.targets();
}

}  // namespace

// ---- foreign RNG ports --------------------------------------------------------------------

TEST(JavaRandom, MatchesTheJdk) {
  // Values printed by tests/datasets/reference/MoaRandomTreeReference.java on OpenJDK.
  struct Row {
    std::int64_t seed;
    std::int32_t i, i10, i16;
    double d;
    std::int64_t l;
  };
  const Row rows[] = {{0, -1155484576, 8, 3, 0.6063452159973596, 5700976833288827063LL},
                      {1, -1155869325, 8, 6, 0.4074398012118764, 668424937071768037LL},
                      {42, -1170105035, 3, 10, 0.047939305137387644, -1068554554583376509LL},
                      {-7, 1155869324, 7, 10, 0.9458454776032215, 2701079913633722686LL}};
  for (const Row& r : rows) {
    JavaRandom j(r.seed);
    EXPECT_EQ(j.next_int(), r.i) << r.seed;
    EXPECT_EQ(j.next_int(10), r.i10) << r.seed;
    EXPECT_EQ(j.next_int(16), r.i16) << r.seed;
    EXPECT_EQ(j.next_double(), r.d) << r.seed;
    EXPECT_EQ(j.next_long(), r.l) << r.seed;
  }
}

TEST(GlibcRandom, MatchesThisLibc) {
  for (unsigned seed : {1u, 100u, 4200u, 123456789u}) {
    srandom(seed);
    GlibcRandom g(seed);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(g.next(), static_cast<std::int32_t>(random())) << "seed " << seed << " draw " << i;
  }
}

// ---- MOA RandomTreeGenerator ----------------------------------------------------------------

TEST(MoaRandomTree, FirstInstancesDefaultOptionsEqualReference) {
  // Reference: MoaRandomTreeReference.java (JDK java.util.Random), -r 1 -i 1 and MOA's defaults.
  MoaRandomTreeParams p;
  const MoaRandomTree tree(p);
  EXPECT_EQ(tree.nodes(), 406u);
  EXPECT_EQ(tree.leaves(), 277u);
  const Dataset d = make_moa_random_tree(100000, p);
  ASSERT_EQ(d.cols(), 10u);
  const double expect[5][10] = {
      {0, 3, 2, 3, 4, 0.0362353821503677, 0.6588672394716129, 0.7107396275716601, 0.15273620134152177, 0.15957805424728078},
      {4, 2, 2, 1, 4, 0.3971743421847056, 0.34751802920311026, 0.29405703200403677, 0.5064836273262351, 0.11596708803265776},
      {0, 4, 0, 1, 3, 0.7616746929019993, 0.623972537215988, 0.8792629643521901, 0.4502184063975181, 0.004852533415334981},
      {2, 0, 3, 0, 2, 0.14202270321592614, 0.481728301575598, 0.5445548088936737, 0.5771002613742765, 0.20491354575856158},
      {0, 1, 1, 3, 3, 0.6835265034592647, 0.48625958231173216, 0.4875150254427949, 0.12657499274364126, 0.13020870455245015}};
  const int labels[5] = {0, 1, 1, 0, 1};
  for (std::size_t r = 0; r < 5; ++r) {
    for (std::size_t c = 0; c < 10; ++c) EXPECT_EQ(d.at(r, c), static_cast<float>(expect[r][c])) << r << "," << c;
    EXPECT_EQ(d.label(r), labels[r]) << r;
    double att[10];
    for (std::size_t c = 0; c < 10; ++c) att[c] = expect[r][c];
    EXPECT_EQ(tree.classify(att), labels[r]);
  }
  std::size_t ones = 0;
  for (auto y : d.labels()) ones += static_cast<std::size_t>(y);
  EXPECT_EQ(ones, 57817u);  // class counts 42183 / 57817 over the first 100,000
  EXPECT_EQ(d.attribute(0).name, "nominal1");
  EXPECT_EQ(d.attribute(5).name, "numeric1");
  EXPECT_EQ(d.class_names()[1], "class2");
}

TEST(MoaRandomTree, FirstInstancesOtherOptionsEqualReference) {
  MoaRandomTreeParams p;
  p.tree_seed = 7;
  p.instance_seed = 3;
  p.num_classes = 3;
  p.num_nominals = 2;
  p.num_numerics = 3;
  p.num_vals_per_nominal = 4;
  p.max_tree_depth = 4;
  p.first_leaf_level = 2;
  p.leaf_fraction = 0.3;
  const MoaRandomTree tree(p);
  EXPECT_EQ(tree.nodes(), 41u);
  EXPECT_EQ(tree.leaves(), 24u);
  const Dataset d = make_moa_random_tree(100000, p);
  const double expect[5][5] = {{2, 2, 0.07099203475193139, 0.06712000939049956, 0.768156984078079},
                               {0, 3, 0.6603196166875382, 0.806673557557068, 0.029817676716547004},
                               {3, 0, 0.9454162249694203, 0.15273360478742526, 0.910276257643282},
                               {3, 0, 0.539992632542705, 0.9775124263642735, 0.15843782637336135},
                               {2, 1, 0.09354586616359473, 0.44339036056222936, 0.4128618847449528}};
  const int labels[5] = {0, 2, 0, 2, 2};
  for (std::size_t r = 0; r < 5; ++r) {
    for (std::size_t c = 0; c < 5; ++c) EXPECT_EQ(d.at(r, c), static_cast<float>(expect[r][c]));
    EXPECT_EQ(d.label(r), labels[r]);
  }
  std::vector<int> counts(3, 0);
  for (auto y : d.labels()) ++counts[static_cast<std::size_t>(y)];
  EXPECT_EQ(counts, (std::vector<int>{29859, 29620, 40521}));
}

TEST(MoaRandomTree, ShortCircuitLeafDrawOnlyBetweenFirstLeafLevelAndMaxDepth) {
  // With first_leaf_level >= max depth no nextDouble() is drawn: a complete tree results.
  MoaRandomTreeParams p;
  p.num_nominals = 0;
  p.num_numerics = 3;
  p.max_tree_depth = 4;
  p.first_leaf_level = 4;
  const MoaRandomTree t(p);
  EXPECT_EQ(t.leaves(), 16u);
  EXPECT_EQ(t.depth(), 4);
}

// ---- formulas with published files ------------------------------------------------------------

TEST(Generators2dplanesFried, ResidualsHaveTheStatedNoise) {
  const Dataset p = make_2dplanes(200000, 5);
  const Moments mp = residual_moments(p, planes2d_mean);
  EXPECT_NEAR(mp.mean, 0.0, 0.01);
  EXPECT_NEAR(mp.sd, 1.0, 0.01);
  for (std::size_t r = 0; r < 1000; ++r) {
    EXPECT_TRUE(p.at(r, 0) == 1.0f || p.at(r, 0) == -1.0f);
    EXPECT_TRUE(p.at(r, 5) == -1.0f || p.at(r, 5) == 0.0f || p.at(r, 5) == 1.0f);
  }
  const Dataset f = make_fried(200000, 5);
  const Moments mf = residual_moments(f, fried_mean);
  EXPECT_NEAR(mf.mean, 0.0, 0.01);
  EXPECT_NEAR(mf.sd, 1.0, 0.01);
  const Dataset f0 = make_fried(1000, 5, 0.0);
  EXPECT_NEAR(residual_moments(f0, fried_mean).sd, 0.0, 1e-5);
}

TEST(GeneratorsMv, FollowsTorgosDescription) {
  const Dataset d = make_mv(50000, 9);
  ASSERT_EQ(d.cols(), 10u);
  EXPECT_EQ(d.attribute(2).values, (std::vector<std::string>{"brown", "red", "green"}));
  std::size_t red = 0, nonpos = 0;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    const float x1 = d.at(r, 0), x2 = d.at(r, 1), x3 = d.at(r, 2), x4 = d.at(r, 3);
    ASSERT_EQ(x3 == 2.0f, x1 > 0) << r;  // green iff X1 > 0
    if (x1 <= 0) {
      ++nonpos;
      red += x3 == 1.0f;
    }
    if (x3 == 2.0f) {
      EXPECT_NEAR(x4, x1 + 2 * x2, 1e-4);
    }
    EXPECT_EQ(d.at(r, 7), d.at(r, 4) < 0.5f ? 0.0f : 1.0f);
    const float x10 = d.at(r, 9);
    EXPECT_EQ(x10, std::floor(x10));
    EXPECT_GE(x10, 1000.0f);
    EXPECT_LE(x10, 1200.0f);
  }
  EXPECT_NEAR(static_cast<double>(red) / static_cast<double>(nonpos), 0.4, 0.02);
}

// ---- Armchair reconstruction -------------------------------------------------------------------

TEST(GeneratorsArmchair, FiveLinearRegionsAndStatedNoise) {
  const Dataset d = make_armchair(100000, 3);
  ASSERT_EQ(d.cols(), 2u);
  std::vector<std::size_t> per_region(kArmchairRegionCount, 0);
  double s2 = 0;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    const float x1 = d.at(r, 0), x2 = d.at(r, 1);
    ASSERT_GE(x1, 0.0f);
    ASSERT_LT(x1, 10.0f);
    const int g = armchair_region(x1, x2);
    const ArmchairRegion& reg = kArmchairRegions[g];
    ASSERT_TRUE(x1 >= reg.x1_lo && x1 < reg.x1_hi && x2 >= reg.x2_lo && x2 < reg.x2_hi);
    ++per_region[static_cast<std::size_t>(g)];
    const double e = d.target(r) - armchair_mean(x1, x2);
    s2 += e * e;
  }
  for (auto n : per_region) EXPECT_GT(n, 5000u);
  EXPECT_NEAR(std::sqrt(s2 / static_cast<double>(d.rows())), kArmchairNoiseSd, 0.002);
  // Noise attributes do not change x1, x2 or y.
  const Dataset e = make_armchair(1000, 3, 4);
  ASSERT_EQ(e.cols(), 6u);
  const Dataset base = make_armchair(1000, 3);
  for (std::size_t r = 0; r < 1000; ++r) {
    EXPECT_EQ(e.at(r, 1), base.at(r, 1));
    EXPECT_EQ(e.target(r), base.target(r));
  }
}

TEST(GeneratorsArmchair, GreedyFirstSplitIsNotTheOptimalTreesRoot) {
  const Dataset d = make_armchair(20000, 11);
  // Best single split by SSE with constant leaves (CART / M5 greedy criterion) over a 0.25 grid.
  double best = INFINITY;
  int best_att = -1;
  double best_t = 0;
  for (int att = 0; att < 2; ++att)
    for (int k = 1; k < 40; ++k) {
      const float t = 0.25f * static_cast<float>(k);
      double n[2] = {0, 0}, s[2] = {0, 0}, s2[2] = {0, 0};
      for (std::size_t r = 0; r < d.rows(); ++r) {
        const int side = d.at(r, static_cast<std::size_t>(att)) < t ? 0 : 1;
        const double y = d.target(r);
        n[side] += 1;
        s[side] += y;
        s2[side] += y * y;
      }
      double sse = 0;
      for (int q = 0; q < 2; ++q)
        if (n[q] > 0) sse += s2[q] - s[q] * s[q] / n[q];
      if (sse < best) {
        best = sse;
        best_att = att;
        best_t = t;
      }
    }
  EXPECT_EQ(best_att, 0) << "greedy split x" << best_att + 1 << " < " << best_t;
  EXPECT_FALSE(best_att == 1 && best_t == 8.0);
}

// ---- poker --------------------------------------------------------------------------------------

TEST(GeneratorsPoker, HandLabelledExamples) {
  struct Hand {
    int s[5], r[5], cls;
  };
  const Hand hands[] = {
      {{1, 1, 1, 1, 1}, {10, 11, 12, 13, 1}, 9},  // royal flush
      {{2, 2, 2, 2, 2}, {9, 10, 11, 12, 13}, 8},  // straight flush
      {{3, 3, 3, 3, 3}, {1, 2, 3, 4, 5}, 8},      // ace-low straight flush
      {{1, 2, 3, 4, 1}, {5, 5, 5, 5, 9}, 7},      // four of a kind
      {{1, 2, 3, 4, 1}, {5, 5, 5, 9, 9}, 6},      // full house
      {{4, 4, 4, 4, 4}, {2, 4, 6, 8, 13}, 5},     // flush
      {{1, 2, 1, 2, 1}, {1, 2, 3, 4, 5}, 4},      // straight, ace low
      {{1, 2, 1, 2, 1}, {10, 11, 12, 13, 1}, 4},  // straight, ace high
      {{1, 2, 1, 2, 1}, {11, 12, 13, 1, 2}, 0},   // no wrap-around straight
      {{1, 2, 3, 1, 2}, {7, 7, 7, 2, 13}, 3},     // three of a kind
      {{1, 2, 3, 1, 2}, {7, 7, 2, 2, 13}, 2},     // two pairs
      {{1, 2, 3, 1, 2}, {7, 7, 3, 2, 13}, 1},     // one pair
      {{1, 2, 3, 1, 2}, {1, 3, 5, 7, 9}, 0},      // nothing
  };
  for (const Hand& h : hands) EXPECT_EQ(poker_hand_class(h.s, h.r), h.cls) << "expected class " << h.cls;
}

TEST(GeneratorsPoker, ClassDistributionOfRandomHands) {
  const std::size_t n = 400000;
  const Dataset d = make_poker(n, 2024);
  std::vector<double> counts(10, 0);
  for (auto y : d.labels()) counts[static_cast<std::size_t>(y)] += 1;
  // Exact probabilities of 5-card hands (counts out of C(52,5) = 2,598,960); UCI's
  // 1,000,000-row test part follows them (501,209 / 422,498 / 47,622 / 21,121 / 3,885 / ...).
  const double combos[10] = {1302540, 1098240, 123552, 54912, 10200, 5108, 3744, 624, 36, 4};
  for (int c = 0; c < 8; ++c) {
    const double p = combos[c] / 2598960.0;
    const double sd = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(counts[static_cast<std::size_t>(c)], n * p, 5 * sd + 1) << "class " << c;
  }
  // Cards are distinct within a hand.
  for (std::size_t r = 0; r < 2000; ++r)
    for (int i = 0; i < 5; ++i)
      for (int j = i + 1; j < 5; ++j)
        EXPECT_FALSE(d.at(r, 2 * i) == d.at(r, 2 * j) && d.at(r, 2 * i + 1) == d.at(r, 2 * j + 1));
}

// ---- VFML-style random tree ---------------------------------------------------------------------

TEST(GeneratorsVfml, WithoutNoiseLabelsAreAFunctionOfTheAttributes) {
  VfmlTreeParams p;
  p.class_noise = 0;
  p.attribute_noise = 0;
  const Dataset d = make_vfml_random_tree(20000, 1, p);
  ASSERT_EQ(d.cols(), 10u);
  std::map<int, int> label_of;
  std::vector<int> counts(2, 0);
  for (std::size_t r = 0; r < d.rows(); ++r) {
    int code = 0;
    for (std::size_t c = 0; c < 10; ++c) code = code * 2 + static_cast<int>(d.at(r, c));
    auto [it, fresh] = label_of.emplace(code, d.label(r));
    ASSERT_EQ(it->second, d.label(r)) << "row " << r;
    ++counts[static_cast<std::size_t>(d.label(r))];
  }
  EXPECT_GT(counts[0], 1000);  // both classes occur: the concept is not collapsed to one leaf
  EXPECT_GT(counts[1], 1000);
}

TEST(GeneratorsVfml, TwentyPercentNoiseBoundsTheBayesAccuracy) {
  // Accuracy of the noise-free concept on the noisy stream: class noise alone leaves 80 %,
  // attribute noise lowers it further (the VFDT paper's learners reach ~69 % on RT).
  VfmlTreeParams clean;
  clean.class_noise = clean.attribute_noise = 0;
  const Dataset truth = make_vfml_random_tree(1 << 14, 77, clean);
  std::map<int, int> concept_of;
  for (std::size_t r = 0; r < truth.rows(); ++r) {
    int code = 0;
    for (std::size_t c = 0; c < 10; ++c) code = code * 2 + static_cast<int>(truth.at(r, c));
    concept_of[code] = truth.label(r);
  }
  const Dataset noisy = make_vfml_random_tree(100000, 78, VfmlTreeParams{});
  std::size_t agree = 0, known = 0;
  for (std::size_t r = 0; r < noisy.rows(); ++r) {
    int code = 0;
    for (std::size_t c = 0; c < 10; ++c) code = code * 2 + static_cast<int>(noisy.at(r, c));
    auto it = concept_of.find(code);
    if (it == concept_of.end()) continue;
    ++known;
    agree += it->second == noisy.label(r);
  }
  const double acc = static_cast<double>(agree) / static_cast<double>(known);
  EXPECT_GT(acc, 0.55);
  EXPECT_LT(acc, 0.80);
}

// ---- surrogates -----------------------------------------------------------------------------------

TEST(GeneratorsSurrogate, ShapeClassesAndSignal) {
  SurrogateParams p;
  p.rows = 20000;
  p.continuous = 0;
  p.binary = 8;
  p.classes = 5;
  p.depth = 4;
  p.label_noise = 0;
  const Dataset d = make_surrogate("s", p);
  EXPECT_EQ(d.cols(), 8u);
  EXPECT_EQ(d.num_classes(), 5);
  EXPECT_TRUE(d.surrogate);
  std::vector<int> counts(5, 0);
  std::map<int, int> label_of;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    int code = 0;
    for (std::size_t c = 0; c < 8; ++c) code = code * 2 + static_cast<int>(d.at(r, c));
    auto [it, fresh] = label_of.emplace(code, d.label(r));
    ASSERT_EQ(it->second, d.label(r));  // noise-free labels are a function of the features
    ++counts[static_cast<std::size_t>(d.label(r))];
  }
  for (int c : counts) EXPECT_GT(c, 0);
  EXPECT_NO_THROW(d.validate());
}

TEST(GeneratorsSurrogate, AbruptDriftChangesTheConcept) {
  SurrogateParams p;
  p.rows = 40000;
  p.continuous = 0;
  p.binary = 6;
  p.classes = 2;
  p.depth = 4;
  p.label_noise = 0;
  p.drift_points = {0.5};
  const Dataset d = make_surrogate("drift", p);
  std::map<int, int> before, after;
  std::size_t conflicts = 0;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    int code = 0;
    for (std::size_t c = 0; c < 6; ++c) code = code * 2 + static_cast<int>(d.at(r, c));
    auto& m = r < d.rows() / 2 ? before : after;
    auto [it, fresh] = m.emplace(code, d.label(r));
    ASSERT_EQ(it->second, d.label(r)) << "each half has one concept";
  }
  for (const auto& [code, y] : before)
    if (after.count(code) && after[code] != y) ++conflicts;
  EXPECT_GT(conflicts, 0u) << "the concept after the drift point must differ";
}

TEST(GeneratorsSurrogate, RegressionAndNamedSurrogates) {
  SurrogateParams p;
  p.rows = 5000;
  p.continuous = 7;
  p.classes = 0;
  const Dataset d = make_surrogate("r", p);
  EXPECT_EQ(d.task(), Task::regression);
  EXPECT_NO_THROW(d.validate());
  const Dataset cov = generate("covertype", {{"rows", 3000}, {"binary", true}}, "covertype");
  EXPECT_EQ(cov.cols(), 45u);
  EXPECT_EQ(cov.num_classes(), 7);
  for (std::size_t c = 0; c < cov.cols(); ++c) EXPECT_TRUE(cov.attribute(c).is_nominal());
  const Dataset cov54 = generate("covertype", {{"rows", 3000}}, "covertype");
  EXPECT_EQ(cov54.cols(), 54u);
  const Dataset rec = generate("rec", {{"rows", 3000}}, "rec");
  EXPECT_EQ(rec.cols(), 9u);
  const Dataset recb = generate("rec", {{"rows", 3000}, {"binary", true}}, "rec");
  EXPECT_EQ(recb.cols(), 13u);
  for (std::size_t r = 0; r < 3000; ++r) {
    // thermometer bits are monotone: x > q3 implies x > q2 implies x > q1
    EXPECT_LE(recb.at(r, 2), recb.at(r, 1));
    EXPECT_LE(recb.at(r, 1), recb.at(r, 0));
    EXPECT_EQ(recb.label(r), rec.label(r));
  }
}

// ---- all generators: determinism and parameter checking -------------------------------------------

TEST(Generators, DeterministicPerSeedAndDifferentAcrossSeeds) {
  for (const std::string& g : generator_names()) {
    const nlohmann::json a = {{"rows", 700}, {"seed", 3}};
    const nlohmann::json b = {{"rows", 700}, {"seed", 4}};
    const Dataset x = generate(g, a, g);
    const Dataset y = generate(g, a, g);
    const Dataset z = generate(g, b, g);
    EXPECT_TRUE(same_data(x, y)) << g;
    EXPECT_FALSE(same_data(x, z)) << g;
    EXPECT_EQ(x.source, "generator") << g;
    EXPECT_EQ(x.seed, 3u) << g;
    EXPECT_NO_THROW(x.validate()) << g;
  }
}

TEST(Generators, RowsOptionGivesAPrefixOfTheLongerStream) {
  for (const std::string& g : generator_names()) {
    const Dataset a = generate(g, {{"rows", 700}, {"seed", 5}}, g);
    const Dataset b = generate(g, {{"rows", 1500}, {"seed", 5}}, g);
    ASSERT_EQ(a.cols(), b.cols()) << g;
    EXPECT_TRUE(same_data(a, b.slice(0, 700))) << g;
  }
  // Also across a drift point: drift positions are fixed rows, not fractions of `rows`.
  const nlohmann::json drift = {{"seed", 5}, {"drift_span", 2000}, {"drift_width", 100}};
  nlohmann::json small = drift, large = drift;
  small["rows"] = 3000;
  large["rows"] = 5000;
  EXPECT_TRUE(same_data(generate("rec", small, "rec"), generate("rec", large, "rec").slice(0, 3000)));
}

TEST(Generators, UnknownParameterOrGeneratorIsAnError) {
  expect_error([] { generate("fried", {{"rowz", 10}}, "fried_gen"); },
               {"dataset 'fried_gen'", "unknown parameter 'rowz'", "rows"});
  expect_error([] { generate("nope", nlohmann::json::object(), "x"); }, {"unknown generator 'nope'", "armchair"});
  expect_error([] { generate("poker", {{"rows", -5}}, "p"); }, {"rows must be positive"});
  expect_error([] { generate("surrogate", {{"rows", 10}, {"classes", 1}}, "s"); }, {"classes must be 0"});
}

TEST(Generators, OneMillionRowsIsFast) {
  // Generators run in experiment setup; keep them well under a second per million rows (Release).
  for (const char* g : {"fried", "armchair", "poker", "vfml_random_tree"}) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    const Dataset d = generate(g, {{"rows", 1000000}}, g);
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-18s 1M rows in %.3f s (cpu %.3f s)\n", g, s, cpu);
#ifdef NDEBUG
    EXPECT_LT(cpu, 2.0) << g;  // CPU time: robust on a busy shared machine
#endif
    EXPECT_EQ(d.rows(), 1000000u);
  }
}
