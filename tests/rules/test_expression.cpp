// Validation messages, the JSON text form and the GPops (primitives) count.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "algorithms/core/error.hpp"
#include "algorithms/rules/expression.hpp"

using namespace gpudm::rules;
using nlohmann::json;

namespace {
Schema schema3() {
  Schema s;
  s.attributes = 3;
  s.nominal = {false, false, true};
  s.classes = 2;
  return s;
}
std::string check(const json& text) {
  const auto t = parse_expression(text, "test");
  return check_expression(t.data(), t.size(), schema3());
}
std::string check_raw(std::vector<std::uint32_t> t) { return check_expression(t.data(), t.size(), schema3()); }
}  // namespace

TEST(Expression, ParseFormatRoundTrip) {
  const json text = json::parse(R"([">", 0, 5.5, "<=", 1, 1.25, "AND", "=", 2, 1, "NOT", "OR", "IN", 0, 1, 2, "AND"])");
  const auto t = parse_expression(text, "r");
  EXPECT_EQ(opcode_of(t.back()), kEnd);
  EXPECT_EQ(format_expression(t.data()), text);
  ExpressionInfo info;
  EXPECT_EQ(check_expression(t.data(), t.size(), schema3(), &info), "");
  // 4 comparisons: 3+3+3+4 primitives, AND NOT OR AND: 4 -> 17.
  EXPECT_EQ(info.primitives, 17);
  EXPECT_EQ(primitives(t.data()), 17);
  EXPECT_EQ(info.max_depth, 2);
  EXPECT_EQ(info.words, static_cast<int>(t.size()));
  EXPECT_EQ(to_infix(t.data()), "(((x0 > 5.5 AND x1 <= 1.25) OR NOT x2 = 1) AND x0 IN 1..2)");
}

TEST(Expression, ValidExpressions) {
  EXPECT_EQ(check(json::array()), "");
  EXPECT_EQ(check(json::parse(R"([">", 1, 0.5])")), "");
  EXPECT_EQ(check(json::parse(R"(["!=", 2, 3])")), "");
}

TEST(Expression, RejectsMalformed) {
  EXPECT_NE(check(json::parse(R"([">", 3, 0.5])")).find("attribute 3 out of range (dataset has 3 attributes)"), std::string::npos);
  EXPECT_NE(check(json::parse(R"(["=", 0, 1])")).find("nominal operator on numeric attribute 0"), std::string::npos);
  EXPECT_NE(check(json::parse(R"([">", 0, 1, "AND"])")).find("stack underflow"), std::string::npos);
  EXPECT_NE(check(json::parse(R"(["NOT"])")).find("stack underflow (NOT"), std::string::npos);
  EXPECT_NE(check(json::parse(R"([">", 0, 1, ">", 1, 2])")).find("2 values left on the stack"), std::string::npos);
  EXPECT_NE(check(json::parse(R"(["IN", 0, 3, 1])")).find("interval bounds reversed"), std::string::npos);
  // Missing END and a truncated operand in raw encodings.
  EXPECT_NE(check_raw({make_word(kGt, 0), float_as_word(1.0f)}).find("missing END"), std::string::npos);
  EXPECT_NE(check_raw({make_word(kIn, 0), float_as_word(1.0f)}).find("missing operand"), std::string::npos);
  EXPECT_NE(check_raw({99u, make_word(kEnd)}).find("unknown opcode 99"), std::string::npos);
  // Stack overflow past kMaxStack.
  std::vector<std::uint32_t> deep;
  for (int i = 0; i < kMaxStack + 1; ++i) {
    deep.push_back(make_word(kGt, 0));
    deep.push_back(float_as_word(0.0f));
  }
  deep.push_back(make_word(kEnd));
  EXPECT_NE(check_raw(deep).find("stack overflow"), std::string::npos);
  // Too long for the device limit.
  std::vector<std::uint32_t> lng;
  lng.push_back(make_word(kGt, 0));
  lng.push_back(float_as_word(0.0f));
  for (int i = 0; i < kMaxExpressionWords; ++i) lng.push_back(make_word(kNot));
  lng.push_back(make_word(kEnd));
  EXPECT_NE(check_raw(lng).find("device limit"), std::string::npos);
}

TEST(Expression, ParseErrorsNameThePosition) {
  try {
    parse_expression(json::parse(R"([">", 0, 1, "XOR"])"), "individual 2, rule 1");
    FAIL() << "no throw";
  } catch (const gpudm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("individual 2, rule 1: token 3: unknown operator 'XOR'"), std::string::npos);
  }
  EXPECT_THROW(parse_expression(json::parse(R"([">", 0])"), "r"), gpudm::Error);
  EXPECT_THROW(parse_expression(json::parse(R"([">", -1, 2])"), "r"), gpudm::Error);
  EXPECT_THROW(parse_expression(json::parse(R"([">", 0, "a"])"), "r"), gpudm::Error);
  EXPECT_THROW(parse_expression(json::parse(R"({"a": 1})"), "r"), gpudm::Error);
}
