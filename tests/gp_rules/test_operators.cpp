// Trees, the typed syntax and the genetic operators: encodings of hand-built trees, and
// property tests over thousands of random applications: every offspring is a valid rule of its
// algorithm's grammar within the depth (and node) limit, mutation keeps size and depth,
// crossover keeps the pair's total size.
#include <gtest/gtest.h>

#include <algorithm>

#include "algorithms/gp_rules/ga.hpp"
#include "algorithms/gp_rules/tree.hpp"
#include "algorithms/rules/opcodes.hpp"
#include "tests/rules/engine_helpers.hpp"

namespace gpudm::gp_rules {
namespace {

namespace r = ::gpudm::rules;

Node cmp(std::uint8_t op, std::uint32_t attr, float a, float b = 0) {
  Node n;
  n.kind = Kind::cmp;
  n.op = op;
  n.attr = attr;
  n.a = a;
  n.b = b;
  return n;
}
Node logical(Kind k) {
  Node n;
  n.kind = k;
  return n;
}

TEST(GpTree, EncodingSizeAndDepthOfAHandBuiltTree) {
  // AND(a0 > 1.5, NOT a2 = 1): sizes 1 + 3 + 1 + 3, depth 1 + (1 + 2)
  const Tree t = {logical(Kind::and_), cmp(r::kGt, 0, 1.5f), logical(Kind::not_), cmp(r::kEq, 2, 1.0f)};
  EXPECT_EQ(size(t), 8);
  EXPECT_EQ(depth(t), 4);
  EXPECT_EQ(subtree_end(t, 0), 4u);
  EXPECT_EQ(subtree_end(t, 2), 4u);
  const std::vector<std::uint32_t> want = {r::make_word(r::kGt, 0), r::float_as_word(1.5f), r::make_word(r::kEq, 2),
                                           r::float_as_word(1.0f), r::make_word(r::kNot), r::make_word(r::kAnd),
                                           r::make_word(r::kEnd)};
  EXPECT_EQ(encode(t), want);
  EXPECT_EQ(r::primitives(encode(t).data()), size(t));  // size = GPops per instance
  const Dataset d = r::test::random_dataset(10, 3, 2, 1, 0.0, true);
  const r::Schema s = r::Schema::of(d);
  EXPECT_EQ(check(t, Grammar::falco(6), s), "");
  EXPECT_EQ(check(t, Grammar::falco(3), s), "depth 4 exceeds the limit 3");
  // IN is 4 nodes; OR is not Tan's; != is not Falco's; NOT above AND is not Bojarczuk's
  EXPECT_EQ(size({cmp(r::kIn, 0, 1, 2)}), 4);
  EXPECT_NE(check({logical(Kind::or_), cmp(r::kGt, 0, 1), cmp(r::kLt, 1, 1)}, Grammar::tan(6), s), "");
  EXPECT_NE(check({cmp(r::kNe, 2, 1)}, Grammar::falco(6), s), "");
  EXPECT_EQ(check({cmp(r::kNe, 2, 1)}, Grammar::tan(6), s), "");
  const Tree not_and = {logical(Kind::not_), logical(Kind::and_), cmp(r::kGt, 0, 1), cmp(r::kLt, 1, 1)};
  EXPECT_EQ(check(not_and, Grammar::falco(6), s), "");
  EXPECT_NE(check(not_and, Grammar::bojarczuk(6, 63), s), "");
  const Tree or_under_and = {logical(Kind::and_), logical(Kind::or_), cmp(r::kGt, 0, 1), cmp(r::kLt, 1, 1), cmp(r::kLt, 0, 3)};
  EXPECT_NE(check(or_under_and, Grammar::bojarczuk(6, 63), s), "");
  EXPECT_EQ(check(or_under_and, Grammar::falco(6), s), "");
  EXPECT_NE(check({cmp(r::kIn, 0, 2, 1)}, Grammar::falco(6), s), "");      // bounds reversed
  EXPECT_NE(check({cmp(r::kGt, 2, 1)}, Grammar::falco(6), s), "");         // > on a nominal attribute
  EXPECT_NE(check({cmp(r::kGt, 7, 1)}, Grammar::falco(6), s), "");         // attribute out of range
  EXPECT_NE(check({logical(Kind::and_), cmp(r::kGt, 0, 1)}, Grammar::falco(6), s), "");  // missing child
}

struct Case {
  const char* name;
  Grammar g;
};

std::vector<Case> grammars() {
  return {{"falco", Grammar::falco(6)}, {"tan", Grammar::tan(7)}, {"bojarczuk", Grammar::bojarczuk(6, 63)},
          {"falco-nodes", [] {
             Grammar g = Grammar::falco(8);
             g.max_nodes = 30;
             return g;
           }()}};
}

TEST(GpOperators, ThousandsOfRandomApplicationsKeepRulesValid) {
  const Dataset d = r::test::random_dataset(200, 7, 3, 11, 0.05, false);
  const r::Schema s = r::Schema::of(d);
  for (const Case& c : grammars()) {
    const Terminals terms(d, c.g);
    Rng rng(42);
    std::vector<Tree> pop = ramped_half_and_half(rng, terms, 60);
    for (const Tree& t : pop) ASSERT_EQ(check(t, c.g, s), "") << c.name << " initial";
    int swaps = 0, mutations = 0;
    for (int i = 0; i < 4000; ++i) {
      const std::size_t a = rng.below(pop.size()), b = rng.below(pop.size());
      Tree x, y;
      swaps += crossover(rng, c.g, pop[a], pop[b], x, y);
      ASSERT_EQ(check(x, c.g, s), "") << c.name << " crossover child 1, application " << i;
      ASSERT_EQ(check(y, c.g, s), "") << c.name << " crossover child 2, application " << i;
      ASSERT_EQ(size(x) + size(y), size(pop[a]) + size(pop[b])) << c.name;
      const int sx = size(x), dx = depth(x);
      mutations += mutate(rng, terms, x);
      ASSERT_EQ(check(x, c.g, s), "") << c.name << " mutation, application " << i;
      ASSERT_EQ(size(x), sx) << c.name;
      ASSERT_EQ(depth(x), dx) << c.name;
      ASSERT_LE(depth(x), c.g.max_depth);
      if (c.g.max_nodes > 0) { ASSERT_LE(size(x), c.g.max_nodes); }
      pop[a] = std::move(x);
      pop[b] = std::move(y);
    }
    EXPECT_GT(swaps, 2000) << c.name << ": crossover should usually find compatible nodes";
    EXPECT_GT(mutations, 3500) << c.name;
    // The function sets hold after thousands of generations of operators.
    for (const Tree& t : pop)
      for (const Node& n : t) {
        if (!c.g.use_or) { EXPECT_NE(n.kind, Kind::or_) << c.name; }
        if (n.kind == Kind::cmp) {
          const auto& ops = d.attribute(n.attr).is_nominal() ? c.g.nominal_ops : c.g.numeric_ops;
          EXPECT_NE(std::find(ops.begin(), ops.end(), n.op), ops.end()) << c.name;
        }
      }
  }
}

TEST(GpOperators, MutationChangesOneNodeCompatibly) {
  const Dataset d = r::test::random_dataset(100, 6, 2, 5, 0.0, true);
  const Grammar g = Grammar::falco(6);
  const Terminals terms(d, g);
  Rng rng(3);
  int changed = 0;
  for (int i = 0; i < 2000; ++i) {
    Tree t = random_tree(rng, terms, 5, i % 2 == 0);
    const Tree before = t;
    ASSERT_TRUE(mutate(rng, terms, t));
    int diffs = 0;
    for (std::size_t k = 0; k < t.size(); ++k)
      if (!(t[k] == before[k])) {
        ++diffs;
        EXPECT_EQ(t[k].kind == Kind::cmp, before[k].kind == Kind::cmp);  // same type
        if (t[k].kind == Kind::cmp) { EXPECT_EQ(r::operand_count(t[k].op), r::operand_count(before[k].op)); }  // same arity
        if (t[k].kind == Kind::cmp && t[k].attr != before[k].attr) {
          EXPECT_EQ(d.attribute(t[k].attr).is_nominal(), d.attribute(before[k].attr).is_nominal());
        }
      }
    EXPECT_LE(diffs, 1);
    changed += diffs;
  }
  EXPECT_GT(changed, 1500);  // a value redrawn equal to the old one is the only no-op
}

TEST(GpOperators, CrossoverRespectsTheDepthLimitAtTheLimit) {
  const Dataset d = r::test::random_dataset(100, 4, 2, 5, 0.0, true);
  const Grammar g = Grammar::falco(4);
  const Terminals terms(d, g);
  Rng rng(8);
  for (int i = 0; i < 2000; ++i) {
    const Tree a = random_tree(rng, terms, 4, true), b = random_tree(rng, terms, 4, true);
    Tree x, y;
    crossover(rng, g, a, b, x, y);
    EXPECT_LE(depth(x), 4);
    EXPECT_LE(depth(y), 4);
  }
}

TEST(GpSelection, TournamentPicksTheBestOfItsDraws) {
  const std::vector<double> f = {5, 1, 3, 9, 7};
  Rng a(1), b(1);
  for (int i = 0; i < 500; ++i) {
    const std::size_t w = tournament(a, f, 3, true);
    std::size_t best = b.below(f.size());
    for (int k = 1; k < 3; ++k) {
      const std::size_t c = b.below(f.size());
      if (f[c] < f[best]) best = c;
    }
    EXPECT_EQ(w, best);
  }
  Rng c(2);
  int picked_best = 0;
  for (int i = 0; i < 1000; ++i) picked_best += tournament(c, f, 5, false) == 3;
  EXPECT_GT(picked_best, 600);  // 1 - (4/5)^5 = 0.67
}

}  // namespace
}  // namespace gpudm::gp_rules
