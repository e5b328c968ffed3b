// Unit tests of the subtree family: encodings, hand-computed trees, exactness of the canonical
// leaf intervals, the bit-level reduction, validation messages, generator determinism.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

#include "algorithms/core/rng.hpp"
#include "algorithms/subtree/cpu_kernels.hpp"
#include "algorithms/subtree/encoding.hpp"
#include "tests/subtree/helpers.hpp"

namespace gpudm::subtree {
namespace {

using test::leaf;
using test::logical;

TEST(SubtreeTree, SizesAndDepths) {
  EXPECT_EQ(nodes_for_depth(4), 31);
  EXPECT_EQ(nodes_for_depth(5), 63);
  EXPECT_EQ(nodes_for_depth(6), 127);
  EXPECT_EQ(depth_for_size(31), 4);
  EXPECT_EQ(depth_for_size(63), 5);
  EXPECT_EQ(depth_for_size(127), 6);
  EXPECT_EQ(depth_for_size(50), -1);
  EXPECT_EQ(depth_for_size(0), -1);
  EXPECT_EQ(level_offset(2, 2), 0);  // leaves first
  EXPECT_EQ(level_offset(2, 1), 4);
  EXPECT_EQ(level_offset(2, 0), 6);  // root last
}

// ((x0 > 2) OR (x1 == 1)) AND ((x0 IN [1, 3]) OR (x1 != 0)), x1 nominal; rows chosen by hand.
struct HandCase {
  Dataset data;
  Population pop;
};
HandCase hand_case() {
  std::vector<Attribute> attrs(2);
  attrs[0].name = "x0";
  attrs[1].name = "x1";
  attrs[1].kind = AttributeKind::nominal;
  attrs[1].values = {"p", "q", "r"};
  Dataset d("hand", Task::classification, 7, attrs, {"a", "b"});
  const float x0[] = {3, 0, 0, 5, 0, 2.5f, 5};
  const float x1[] = {0, 1, 0, 0, 2, 0, 0};
  for (int r = 0; r < 7; ++r) {
    d.at(r, 0) = x0[r];
    d.at(r, 1) = x1[r];
  }
  d.set_missing(4, 0);  // row 4: x0 missing
  d.set_missing(5, 1);  // row 5: x1 missing
  d.set_missing(6, 1);  // row 6: x1 missing, so x1 != 0 is false too
  Population p;
  p.depth = 2;
  p.trees = 1;
  p.nodes = {logical(rules::kAnd),       logical(rules::kOr),          logical(rules::kOr),
             leaf(rules::kGt, 0, 2.0f),  leaf(rules::kEq, 1, 1.0f),    leaf(rules::kIn, 0, 1.0f, 3.0f),
             leaf(rules::kNe, 1, 0.0f)};
  return {std::move(d), std::move(p)};
}
// Row by row: r0 T&T=1, r1 T&T=1, r2 F=0, r3 T&F=0, r4 F=0, r5 T&T=1, r6 T&F=0.
constexpr std::uint32_t kHandExpected = 0b0100011u;

TEST(SubtreeHand, ReferenceMatchesHandComputation) {
  const HandCase h = hand_case();
  validate_population(h.pop, h.data);
  const Coverage c = reference_coverage(h.pop, h.data);
  ASSERT_EQ(c.words_per_tree, 1u);
  EXPECT_EQ(c.bits[0], kHandExpected) << to_infix(h.pop, 0);
  EXPECT_EQ(c.covered(0), 3u);
}

TEST(SubtreeHand, EveryCpuStrategyMatchesHandComputation) {
  const HandCase h = hand_case();
  ASSERT_TRUE(features_have_nan(h.data));
  for (Strategy s : {Strategy::postfix, Strategy::mixed, Strategy::subtree, Strategy::best}) {
    const CpuPlan plan = make_cpu_plan(h.pop, s, true);
    Coverage c;
    c.reset(1, h.data.rows());
    cpu_evaluate_batch(plan, h.data, 0, 0, h.data.rows(), c.tree(0));
    EXPECT_EQ(c.bits[0], kHandExpected) << to_string(s);
  }
}

TEST(SubtreeHand, EveryBackendMatchesHandComputation) {
  const HandCase h = hand_case();
  const Registry reg = test::subtree_registry();
  for (const auto& b : reg.backends("subtree")) {
    if (!b.available) continue;
    auto interp = reg.create<TreeInterpreter>("subtree", b.backend);
    for (Strategy s : {Strategy::postfix, Strategy::mixed, Strategy::subtree, Strategy::best}) {
      interp->configure({s, 2});
      interp->prepare(h.data);
      Coverage c;
      PhaseTimer timer;
      interp->evaluate(h.pop, c, timer);
      ASSERT_EQ(c.bits.size(), 1u);
      EXPECT_EQ(c.bits[0], kHandExpected) << b.backend << "/" << to_string(s);
    }
  }
}

TEST(SubtreeEncoding, NegateMaskFormMatchesPerLeafFormWithoutNan) {
  // Without NaN, IN tests + XOR by the negate mask equal the per-leaf OUT tests.
  const Dataset d = test::random_dataset(777, 6, 21, 0.0);
  ASSERT_FALSE(features_have_nan(d));
  const Population pop = generate_population(d, 9, 6, Rng(5));
  const Coverage ref = reference_coverage(pop, d);
  std::uint64_t negated = 0;
  for (bool nan_form : {true, false}) {
    const CpuPlan plan = make_cpu_plan(pop, Strategy::best, nan_form);
    for (std::uint64_t m : plan.bits.neg_masks) negated |= m;
    Coverage c;
    c.reset(pop.trees, d.rows());
    for (int t = 0; t < pop.trees; ++t)
      for (std::size_t b = 0; b < d.rows(); b += kCpuBatchRows)
        cpu_evaluate_batch(plan, d, t, b, std::min(d.rows(), b + kCpuBatchRows), c.tree(t));
    EXPECT_EQ(first_difference(c, ref, d.rows()), "") << "nan form " << nan_form;
  }
  EXPECT_NE(negated, 0u);  // the population has OUT/!= leaves, so the mask path is exercised
}

TEST(SubtreeEncoding, TokenCountsFollowThePoster) {
  // Depth 2 with four single-operand comparisons: pure postfix spends 3 tokens per comparison
  // (push constant, push attribute, compare) + 1 per logical node; mixed spends 1 token (+1
  // operand word) per comparison.
  Population p;
  p.depth = 2;
  p.trees = 1;
  p.nodes = {logical(rules::kAnd), logical(rules::kOr), logical(rules::kAnd), leaf(rules::kGt, 0, 1),
             leaf(rules::kLt, 0, 2),   leaf(rules::kGe, 0, 3), leaf(rules::kLe, 0, 4)};
  const TokenStreams post = encode_postfix(p);
  const TokenStreams mixed = encode_mixed(p);
  EXPECT_EQ(post.tokens.size(), 4u * 4 + 3 + 1);  // 4 words per comparison (const = 2 words), 3 logical, END
  EXPECT_EQ(mixed.tokens.size(), 4u * 2 + 3 + 1);
  EXPECT_EQ(post.offsets, (std::vector<std::uint32_t>{0, 20}));
  EXPECT_EQ(rules::opcode_of(post.tokens.back()), rules::kEnd);
  // Post-order: first leaf (x0 > 1) then second leaf, then OR.
  EXPECT_EQ(mixed.tokens[0], rules::make_word(rules::kGt, 0));
  EXPECT_EQ(mixed.tokens[4], rules::make_word(rules::kOr));
  EXPECT_EQ(post.tokens[0], kPushConst);
  EXPECT_EQ(post.tokens[2], rules::make_word(kPushAttr, 0));
  EXPECT_EQ(post.tokens[3], rules::make_word(rules::kGt));
}

TEST(SubtreeEncoding, LevelsAreLeavesFirstRootLast) {
  const HandCase h = hand_case();
  const std::vector<Node> lv = encode_levels(h.pop);
  ASSERT_EQ(lv.size(), 7u);
  EXPECT_EQ(lv[0].word, h.pop.nodes[3].word);
  EXPECT_EQ(lv[3].word, h.pop.nodes[6].word);
  EXPECT_EQ(lv[4].word, h.pop.nodes[1].word);
  EXPECT_EQ(lv[6].word, h.pop.nodes[0].word);
}

TEST(SubtreeEncoding, CanonicalLeafIsExactForSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float den = std::numeric_limits<float>::denorm_min();
  const std::vector<float> vals = {-inf, -FLT_MAX, -1.5f, -1.0f, -den, -0.0f, 0.0f, den, FLT_MIN, 1.0f,
                                   std::nextafter(1.0f, 2.0f), 1.5f, FLT_MAX, inf, nan};
  int checked = 0;
  for (std::uint32_t op = rules::kGt; op <= rules::kOut; ++op)
    for (float a : vals)
      for (float b : vals) {
        if (rules::operand_count(op) == 1 && b != vals[0]) continue;
        const Node n = leaf(op, 0, a, rules::operand_count(op) == 2 ? b : 0.0f);
        const BitLeaf l = canonical_leaf(n);
        for (float x : vals) {
          const bool want = rules::compare(op, x, n.a, n.b);
          const bool got = bit_leaf(l.attr & kBitOut, l.lo, l.hi, x);
          ASSERT_EQ(got, want) << "op " << op << " a " << a << " b " << b << " x " << x;
          ++checked;
        }
      }
  EXPECT_GT(checked, 1000);
}

// Recursive evaluation of a heap-ordered tree whose leaf values are given by position.
bool eval_heap(const Node* nodes, int i, int internal, const std::vector<bool>& leaf_values) {
  if (i >= internal) return leaf_values[i - internal];
  const bool l = eval_heap(nodes, 2 * i + 1, internal, leaf_values);
  const bool r = eval_heap(nodes, 2 * i + 2, internal, leaf_values);
  return rules::opcode_of(nodes[i].word) == rules::kAnd ? (l && r) : (l || r);
}

TEST(SubtreeEncoding, BitReduceMatchesRecursiveEvaluation) {
  const Dataset d = test::random_dataset(64, 5, 3);
  Rng rng(11);
  for (int depth = 1; depth <= kMaxBitDepth; ++depth) {
    const Population pop = generate_population(d, 20, depth, Rng(depth));
    const BitTrees bt = encode_bits(pop);
    const int leaves = pop.leaves_per_tree();
    for (int t = 0; t < pop.trees; ++t)
      for (int trial = 0; trial < 50; ++trial) {
        std::vector<bool> values(leaves);
        std::uint64_t bits = 0;
        for (int p = 0; p < leaves; ++p) values[p] = rng.bernoulli(0.5);
        for (int s = 0; s < leaves; ++s)
          if (values[bit_reverse(static_cast<std::uint32_t>(s), depth)]) bits |= 1ull << s;
        ASSERT_EQ(bit_reduce(bits, bt.and_masks[t], depth), eval_heap(pop.tree(t), 0, leaves - 1, values))
            << "depth " << depth << " tree " << t;
      }
  }
}

TEST(SubtreeEncoding, BestRejectsTreesDeeperThanSix) {
  const Dataset d = test::random_dataset(10, 3, 1);
  const Population pop = generate_population(d, 2, 7, Rng(1));
  EXPECT_THROW(
      {
        try {
          encode_bits(pop);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("up to depth 6"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

std::string validation_error(const Population& p, const Dataset& d) {
  try {
    validate_population(p, d);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SubtreeValidation, RejectsMalformedTreesWithContext) {
  HandCase h = hand_case();
  EXPECT_EQ(validation_error(h.pop, h.data), "");
  Population p = h.pop;
  p.nodes[6] = leaf(rules::kGt, 9, 0);
  EXPECT_NE(validation_error(p, h.data).find("tree 0 node 6: attribute 9 is out of range"), std::string::npos)
      << validation_error(p, h.data);
  p = h.pop;
  p.nodes[3] = leaf(rules::kEq, 0, 1);  // = on numeric x0
  EXPECT_NE(validation_error(p, h.data).find("nominal operator on numeric attribute 0"), std::string::npos);
  p = h.pop;
  p.nodes[1] = leaf(rules::kGt, 0, 1);  // comparison as internal node
  EXPECT_NE(validation_error(p, h.data).find("expected AND or OR"), std::string::npos);
  p = h.pop;
  p.nodes[5] = logical(rules::kAnd);  // logical node as leaf
  EXPECT_NE(validation_error(p, h.data).find("expected a comparison"), std::string::npos);
  p = h.pop;
  p.nodes.pop_back();
  EXPECT_NE(validation_error(p, h.data).find("expected 1 trees x 7"), std::string::npos);
}

TEST(SubtreeGenerator, DeterministicValidAndNonTrivial) {
  const Dataset d = test::random_dataset(500, 7, 5);
  const Population a = generate_population(d, 16, 4, Rng(42));
  const Population b = generate_population(d, 16, 4, Rng(42));
  const Population c = generate_population(d, 16, 4, Rng(43));
  ASSERT_EQ(a.nodes.size(), 16u * 31);
  bool same = true, differs = false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    same = same && a.nodes[i].word == b.nodes[i].word && std::memcmp(&a.nodes[i].a, &b.nodes[i].a, 4) == 0;
    differs = differs || a.nodes[i].word != c.nodes[i].word;
  }
  EXPECT_TRUE(same);
  EXPECT_TRUE(differs);
  validate_population(a, d);
  // Coverage is neither always empty nor always full.
  const Coverage cov = reference_coverage(a, d);
  std::size_t empty = 0, full = 0;
  for (int t = 0; t < a.trees; ++t) {
    empty += cov.covered(t) == 0;
    full += cov.covered(t) == d.rows();
  }
  EXPECT_LT(empty + full, static_cast<std::size_t>(a.trees));
}

TEST(SubtreeStrategy, AutoResolvesByPlacement) {
  EXPECT_EQ(resolve_strategy(Strategy::automatic, Placement::device), Strategy::best);
  EXPECT_EQ(resolve_strategy(Strategy::automatic, Placement::host), Strategy::mixed);
  EXPECT_EQ(resolve_strategy(Strategy::postfix, Placement::device), Strategy::postfix);
  EXPECT_EQ(resolve_strategy(Strategy::subtree, Placement::host), Strategy::subtree);
}

}  // namespace
}  // namespace gpudm::subtree
