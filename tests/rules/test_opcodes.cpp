// Hand-computed cases for each opcode, NOT, intervals, missing values and stack order.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "algorithms/rules/opcodes.hpp"

using namespace gpudm::rules;

namespace {
std::vector<std::uint32_t> cmp(std::uint32_t op, std::uint32_t attr, float a, float b = 0) {
  std::vector<std::uint32_t> t{make_word(op, attr), float_as_word(a)};
  if (operand_count(op) == 2) t.push_back(float_as_word(b));
  return t;
}
bool eval(std::vector<std::uint32_t> t, std::vector<float> x) {
  t.push_back(make_word(kEnd));
  return evaluate(t.data(), [&](std::uint32_t a) { return x.at(a); });
}
std::vector<std::uint32_t> cat(std::initializer_list<std::vector<std::uint32_t>> parts) {
  std::vector<std::uint32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
std::vector<std::uint32_t> w(std::uint32_t op) { return {make_word(op)}; }
}  // namespace

TEST(Opcodes, WordLayout) {
  const std::uint32_t word = make_word(kLe, 1234567);
  EXPECT_EQ(opcode_of(word), kLe);
  EXPECT_EQ(attribute_of(word), 1234567u);
  EXPECT_EQ(operand_count(kGt), 1);
  EXPECT_EQ(operand_count(kIn), 2);
  EXPECT_EQ(operand_count(kAnd), 0);
  EXPECT_EQ(word_as_float(float_as_word(-2.5f)), -2.5f);
}

TEST(Opcodes, EachComparison) {
  // x0 = 2
  EXPECT_TRUE(eval(cmp(kGt, 0, 1.0f), {2}));
  EXPECT_FALSE(eval(cmp(kGt, 0, 2.0f), {2}));
  EXPECT_TRUE(eval(cmp(kGe, 0, 2.0f), {2}));
  EXPECT_FALSE(eval(cmp(kGe, 0, 2.5f), {2}));
  EXPECT_TRUE(eval(cmp(kLt, 0, 3.0f), {2}));
  EXPECT_FALSE(eval(cmp(kLt, 0, 2.0f), {2}));
  EXPECT_TRUE(eval(cmp(kLe, 0, 2.0f), {2}));
  EXPECT_FALSE(eval(cmp(kLe, 0, 1.0f), {2}));
  EXPECT_TRUE(eval(cmp(kEq, 0, 2.0f), {2}));
  EXPECT_FALSE(eval(cmp(kEq, 0, 1.0f), {2}));
  EXPECT_TRUE(eval(cmp(kNe, 0, 1.0f), {2}));
  EXPECT_FALSE(eval(cmp(kNe, 0, 2.0f), {2}));
}

TEST(Opcodes, Intervals) {
  EXPECT_TRUE(eval(cmp(kIn, 1, 1.0f, 3.0f), {0, 1}));   // bounds inclusive
  EXPECT_TRUE(eval(cmp(kIn, 1, 1.0f, 3.0f), {0, 3}));
  EXPECT_FALSE(eval(cmp(kIn, 1, 1.0f, 3.0f), {0, 3.5f}));
  EXPECT_FALSE(eval(cmp(kOut, 1, 1.0f, 3.0f), {0, 1}));
  EXPECT_TRUE(eval(cmp(kOut, 1, 1.0f, 3.0f), {0, 0.5f}));
  EXPECT_TRUE(eval(cmp(kOut, 1, 1.0f, 3.0f), {0, 7}));
}

TEST(Opcodes, MissingValueComparesFalseAndNotMakesItTrue) {
  const float nan = std::nanf("");
  for (std::uint32_t op = kGt; op <= kOut; ++op) {
    EXPECT_FALSE(eval(cmp(op, 0, 0.0f, 1.0f), {nan})) << op;
    EXPECT_TRUE(eval(cat({cmp(op, 0, 0.0f, 1.0f), w(kNot)}), {nan})) << op;
  }
}

TEST(Opcodes, LogicalOperatorsPostfix) {
  const auto t = cmp(kGt, 0, 0.0f);  // true for x0 = 1
  const auto f = cmp(kLt, 0, 0.0f);  // false for x0 = 1
  EXPECT_TRUE(eval(cat({t, t, w(kAnd)}), {1}));
  EXPECT_FALSE(eval(cat({t, f, w(kAnd)}), {1}));
  EXPECT_FALSE(eval(cat({f, t, w(kAnd)}), {1}));
  EXPECT_TRUE(eval(cat({f, t, w(kOr)}), {1}));
  EXPECT_FALSE(eval(cat({f, f, w(kOr)}), {1}));
  EXPECT_TRUE(eval(cat({f, w(kNot)}), {1}));
  EXPECT_FALSE(eval(cat({t, w(kNot)}), {1}));
  // (t OR f) AND NOT t  -> false ; t OR (f AND NOT t)  -> true (operand order on the stack)
  EXPECT_FALSE(eval(cat({t, f, w(kOr), t, w(kNot), w(kAnd)}), {1}));
  EXPECT_TRUE(eval(cat({t, f, t, w(kNot), w(kAnd), w(kOr)}), {1}));
}

TEST(Opcodes, EmptyAntecedentCoversEverything) { EXPECT_TRUE(eval({}, {0})); }

TEST(Opcodes, DeepStack) {
  // 40 pushes then 39 ANDs: depth 40 uses the 64-bit bit stack.
  std::vector<std::uint32_t> t;
  for (int i = 0; i < 40; ++i) {
    auto c = cmp(kGe, 0, static_cast<float>(i % 2));
    t.insert(t.end(), c.begin(), c.end());
  }
  for (int i = 0; i < 39; ++i) t.push_back(make_word(kAnd));
  EXPECT_TRUE(eval(t, {1}));
  EXPECT_FALSE(eval(t, {0}));
}
