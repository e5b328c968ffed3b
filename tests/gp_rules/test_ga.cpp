// Token competition and Tan's steady-state replacement on small fixed cases; elitism seen in
// the runs' fitness traces; every algorithm end to end on a small dataset (sequential engine).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>

#include "algorithms/gp_rules/ga.hpp"
#include "tests/rules/engine_helpers.hpp"

namespace gpudm::gp_rules {
namespace {

// Eight rows, the positive tokens rows 0-3. Rules (raw fitness, covered rows):
//   A 0.9 {0,1,4}   B 0.8 {0,1,2}   C 0.8 {0,1}   D 0.1 {3,5}   E 0.5 {5,6}
const std::vector<std::uint32_t> kTokens = {0b00001111u};
const std::uint32_t kA = 0b00010011u, kB = 0b00000111u, kC = 0b00000011u, kD = 0b00101000u, kE = 0b01100000u;
const std::vector<const std::uint32_t*> kCov = {&kA, &kB, &kC, &kD, &kE};
const std::vector<double> kRaw = {0.9, 0.8, 0.8, 0.1, 0.5};

TEST(GpTokenCompetition, RulesSeizeTokensInFitnessOrder) {
  std::vector<double> adj;
  const auto seized = token_competition(kCov, kRaw, kTokens, adj);
  // A takes rows 0, 1; B (before C on the tie) takes 2 of its 3; C finds nothing left; D takes 3;
  // E covers no token.
  EXPECT_EQ(seized, (std::vector<std::uint64_t>{2, 1, 0, 1, 0}));
  EXPECT_DOUBLE_EQ(adj[0], 0.9);
  EXPECT_DOUBLE_EQ(adj[1], 0.8 / 3.0);
  EXPECT_DOUBLE_EQ(adj[2], 0.0);
  EXPECT_DOUBLE_EQ(adj[3], 0.1);
  EXPECT_DOUBLE_EQ(adj[4], 0.0);
}

// The definition, one dense pass over every word per rule (the implementation visits only the
// words that still hold a free token and skips rules that cannot seize any).
std::vector<std::uint64_t> dense_token_competition(const std::vector<const std::uint32_t*>& coverage,
                                                   const std::vector<double>& raw,
                                                   const std::vector<std::uint32_t>& tokens, std::vector<double>& adjusted) {
  const std::size_t n = coverage.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return raw[a] > raw[b]; });
  std::vector<std::uint32_t> free = tokens;
  std::vector<std::uint64_t> seized(n, 0);
  adjusted.assign(n, 0.0);
  for (std::size_t i : order) {
    std::uint64_t got = 0, mine = 0;
    for (std::size_t w = 0; w < tokens.size(); ++w) {
      const std::uint32_t c = coverage[i][w] & tokens[w];
      mine += static_cast<std::uint64_t>(std::popcount(c));
      got += static_cast<std::uint64_t>(std::popcount(c & free[w]));
      free[w] &= ~c;
    }
    seized[i] = got;
    adjusted[i] = mine > 0 ? raw[i] * static_cast<double>(got) / static_cast<double>(mine) : 0.0;
  }
  return seized;
}

TEST(GpTokenCompetition, EqualsTheDensePassOnRandomCompetitors) {
  std::mt19937_64 gen(5);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t words = 1 + gen() % 70, n = 1 + gen() % 60;
    // Sparse, dense, clustered and empty token sets; coverage of every density; copies sharing
    // words (the external population) and equal raw fitness (ties).
    std::vector<std::uint32_t> tokens(words, 0u);
    const int kind = trial % 4;
    for (std::size_t w = 0; w < words; ++w) {
      const std::uint32_t r = static_cast<std::uint32_t>(gen());
      tokens[w] = kind == 0 ? r : kind == 1 ? (r & static_cast<std::uint32_t>(gen()) & static_cast<std::uint32_t>(gen()))
                                : kind == 2 ? (w < words / 3 ? ~0u : 0u) : (w == words / 2 ? r : 0u);
    }
    std::vector<std::vector<std::uint32_t>> store(n, std::vector<std::uint32_t>(words));
    std::vector<const std::uint32_t*> cov(n);
    std::vector<double> raw(n);
    for (std::size_t i = 0; i < n; ++i) {
      const int density = static_cast<int>(gen() % 4);
      for (auto& x : store[i]) {
        x = static_cast<std::uint32_t>(gen());
        for (int d = 0; d < density; ++d) x &= static_cast<std::uint32_t>(gen());
      }
      cov[i] = i > 0 && gen() % 4 == 0 ? cov[gen() % i] : store[i].data();
      raw[i] = static_cast<double>(gen() % 8) / 8.0;
    }
    std::vector<double> want_adj, got_adj;
    const auto want = dense_token_competition(cov, raw, tokens, want_adj);
    const auto got = token_competition(cov, raw, tokens, got_adj);
    ASSERT_EQ(got, want) << "trial " << trial;
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(std::bit_cast<std::uint64_t>(got_adj[i]), std::bit_cast<std::uint64_t>(want_adj[i])) << "trial " << trial << " rule " << i;
  }
}

TEST(GpTokenCompetition, SteadyStateReplacementKeepsTokenHoldersAndTheElite) {
  const auto never = [](std::size_t, std::size_t) { return false; };
  Replacement r = steady_state_replacement(kCov, kRaw, covered_tokens(kCov, kTokens), kTokens, 3, 2, never);
  // Token holders first by adjusted fitness (A 0.9, B 0.267, D 0.1), then C and E by raw.
  EXPECT_EQ(r.survivors, (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_EQ(r.archive, (std::vector<std::size_t>{0, 1}));
  r = steady_state_replacement(kCov, kRaw, covered_tokens(kCov, kTokens), kTokens, 5, 5, never);
  EXPECT_EQ(r.survivors, (std::vector<std::size_t>{0, 1, 3, 2, 4}));
  EXPECT_EQ(r.archive, (std::vector<std::size_t>{0, 1, 3}));  // C and E seize nothing
  // B is a copy of A: the external population keeps distinct rules.
  r = steady_state_replacement(kCov, kRaw, covered_tokens(kCov, kTokens), kTokens, 3, 2, [](std::size_t i, std::size_t j) { return i + j == 1; });
  EXPECT_EQ(r.archive, (std::vector<std::size_t>{0, 3}));
}

// Every algorithm end to end with the sequential engine: the elitist traces are monotone, the
// classifier is complete, the run is reproducible.
TEST(GpRun, EveryAlgorithmEndToEnd) {
  Registry reg = rules::test::engine_registry();
  const Dataset d = rules::test::random_dataset(400, 6, 3, 21, 0.02, true);
  for (const auto& [name, alg] : algorithm_names()) {
    GpParams p;
    p.algorithm = alg;
    p.population = 40;
    p.generations = 12;
    p.stop_when_perfect = false;
    auto e = reg.create<rules::RuleEvaluator>("gp_rules", reg.reference("gp_rules"));
    e->prepare(d);
    RunStats s1, s2;
    const Classifier c1 = train(d, p, 5, *e, s1);
    const Classifier c2 = train(d, p, 5, *e, s2);
    ASSERT_EQ(s1.trace, s2.trace) << name;
    ASSERT_EQ(c1.rules.size(), c2.rules.size()) << name;
    for (std::size_t i = 0; i < c1.rules.size(); ++i) EXPECT_EQ(c1.rules[i].tokens, c2.rules[i].tokens) << name;
    const int runs = alg == Algorithm::bojarczuk ? 1 : d.num_classes();
    EXPECT_EQ(s1.evaluations, static_cast<std::uint64_t>(runs * (1 + p.generations))) << name;
    EXPECT_EQ(s1.planned_evaluations, s1.evaluations) << name;
    EXPECT_EQ(s1.generations, runs * p.generations) << name;
    EXPECT_GT(s1.gpops, 0u);
    for (const char* ph : {"init_creation", "init_evaluation", "selection", "crossover", "evaluation", "replacement", "control"})
      EXPECT_GT(s1.phases.seconds(ph), 0.0) << name << " " << ph;
    EXPECT_EQ(s1.phases.seconds("mutation") > 0.0, alg != Algorithm::bojarczuk) << name;
    if (alg == Algorithm::falco) { EXPECT_EQ(c1.rules.size(), 3u); }
    EXPECT_GE(c1.default_class, 0);
    // Elitism: the best fitness never gets worse within a class run.
    const std::size_t per_run = static_cast<std::size_t>(p.generations) + 1;
    for (std::size_t run = 0; run < static_cast<std::size_t>(runs); ++run)
      for (std::size_t g = 1; g < per_run; ++g) {
        const double prev = s1.trace[run * per_run + g - 1], cur = s1.trace[run * per_run + g];
        if (alg == Algorithm::falco) {
          EXPECT_LE(cur, prev) << name << " run " << run << " generation " << g;
        } else {
          EXPECT_GE(cur, prev) << name << " run " << run << " generation " << g;
        }
      }
    PhaseTimer t;
    const Score sc = score(c1, d, *e, t);
    EXPECT_EQ(sc.rows, d.rows());
    EXPECT_GT(sc.accuracy(), 1.0 / 3.0 - 0.1) << name;
  }
}

}  // namespace
}  // namespace gpudm::gp_rules
