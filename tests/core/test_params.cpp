// ParamTable: one declaration gives the specs (defaults from the struct), typed reads, range,
// allowed-value and type checks with the param named, enums, nested fields and arrays.
#include <gtest/gtest.h>

#include <climits>

#include "algorithms/core/params.hpp"

namespace gpudm {
namespace {

enum class Path { faithful, fast };

struct Inner {
  double alpha = 0.5;
};

struct Opts {
  int population = 10;
  long long big = 1;
  double rate = 0.25;
  bool flag = true;
  std::string name = "x";
  Path path = Path::fast;
  Inner inner;
  std::vector<int> prefixes = {100, 200};
};

ParamTable<Opts> table() {
  ParamTable<Opts> t("fam");
  t.add("population", &Opts::population, "individuals").range(1, 65535);
  t.add("big", &Opts::big, "a wide int");
  t.add("rate", &Opts::rate, "a probability").range(0, 1);
  t.add("flag", &Opts::flag, "a switch");
  t.add("name", &Opts::name, "a name").one_of({"x", "y"});
  t.add_enum("path", &Opts::path, {{"faithful", Path::faithful}, {"fast", Path::fast}}, "kernel path").backend_only();
  t.add<double>("alpha", [](Opts& o) -> double& { return o.inner.alpha; }, "nested").range(0, 10);
  t.add("prefixes", &Opts::prefixes, "instances").at_least(1);
  return t;
}

TEST(ParamTable, SpecsTakeTheirDefaultsFromTheStruct) {
  const auto specs = table().specs();
  ASSERT_EQ(specs.size(), 8u);
  EXPECT_EQ(specs[0].name, "population");
  EXPECT_EQ(specs[0].type, "int");
  EXPECT_EQ(specs[0].default_value, 10);
  EXPECT_EQ(specs[0].constraint_text(), " [1, 65535]");
  EXPECT_EQ(specs[2].type, "number");
  EXPECT_EQ(specs[3].type, "bool");
  EXPECT_EQ(specs[4].constraint_text(), " (x | y)");
  EXPECT_EQ(specs[5].type, "string");
  EXPECT_EQ(specs[5].default_value, "fast");
  EXPECT_TRUE(specs[5].backend_only);
  EXPECT_EQ(specs[6].default_value, 0.5);
  EXPECT_EQ(specs[7].type, "array");
  EXPECT_EQ(specs[7].items, "int");
  EXPECT_EQ(specs[7].default_value, nlohmann::json({100, 200}));
}

TEST(ParamTable, ReadFillsTheTypedStruct) {
  const Opts o = table().read({{"population", 200}, {"path", "faithful"}, {"alpha", 2.5}, {"prefixes", {5, 6, 7}},
                               {"rate", 1}, {"name", nullptr}});
  EXPECT_EQ(o.population, 200);
  EXPECT_EQ(o.path, Path::faithful);
  EXPECT_DOUBLE_EQ(o.inner.alpha, 2.5);
  EXPECT_EQ(o.prefixes, (std::vector<int>{5, 6, 7}));
  EXPECT_DOUBLE_EQ(o.rate, 1.0);
  EXPECT_EQ(o.name, "x");  // null keeps the default
  EXPECT_TRUE(o.flag);
}

std::string error_of(const nlohmann::json& params) {
  try {
    table().read(params);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ParamTable, ReadRejectsBadValuesNamingTheParam) {
  EXPECT_EQ(error_of({{"population", 0}}), "fam: params.population: expects an int in [1, 65535], got 0");
  // 2^31 and 2^32 + 1 must never wrap into a small int
  EXPECT_EQ(error_of({{"population", 2147483648LL}}), "fam: params.population: expects an int in [1, 65535], got 2147483648");
  EXPECT_EQ(error_of({{"population", 4294967297LL}}), "fam: params.population: expects an int in [1, 65535], got 4294967297");
  EXPECT_EQ(error_of({{"population", 2.5}}), "fam: params.population: expects int, got number 2.5");
  EXPECT_EQ(error_of({{"rate", 1.5}}), "fam: params.rate: expects a number in [0, 1], got 1.5");
  EXPECT_EQ(error_of({{"name", "z"}}), "fam: params.name: expects one of \"x\", \"y\", got \"z\"");
  EXPECT_EQ(error_of({{"path", "fats"}}), "fam: params.path: expects one of \"faithful\", \"fast\", got \"fats\"");
  EXPECT_EQ(error_of({{"prefixes", {1, 0}}}), "fam: params.prefixes: [1] expects an int in [1, 2147483647], got 0");
  EXPECT_EQ(error_of({{"prefixes", {1, "a"}}}), "fam: params.prefixes: [1] expects int, got \"a\"");
  EXPECT_EQ(error_of({{"nope", 1}}), "fam: unknown param 'nope'");
  EXPECT_EQ(error_of({{"flag", 1}}), "fam: params.flag: expects bool, got int 1");
}

TEST(ParamTable, IntegerTypeBoundsApplyWithoutAnExplicitRange) {
  ParamSpec s;
  s.name = "n";
  s.type = "int";
  s.minimum = static_cast<double>(INT_MIN);
  s.maximum = static_cast<double>(INT_MAX);
  EXPECT_EQ(s.check(2147483647), "");
  EXPECT_NE(s.check(2147483648LL), "");
  EXPECT_NE(s.check(nlohmann::json(18446744073709551615ULL)), "");
  EXPECT_EQ(s.constraint_text(), "");  // the type's own range is not shown
  EXPECT_EQ(table().specs()[1].check(nlohmann::json(18446744073709551615ULL)).rfind("expects an int in [", 0), 0u);
}

// docs/reliability.md: an "int" param declared without a range (a family not yet on ParamTable)
// still cannot wrap when its family narrows it to an int.
TEST(ParamSpec, AnUnboundedIntParamIsBoundedToTheIntRange) {
  const ParamSpec s{"population", "int", 10, "individuals"};
  EXPECT_EQ(s.check(2147483647), "");
  EXPECT_EQ(s.check(-2147483648ll), "");
  EXPECT_NE(s.check(4294967298ll).find("expects an int in [-2147483648, 2147483647], got 4294967298"), std::string::npos)
      << s.check(4294967298ll);
  EXPECT_NE(s.check(nlohmann::json(18446744073709551615ull)), "");
  const ParamSpec either{"rule_length", "int|string", "paper", "either"};
  EXPECT_NE(either.check(4294967296ll), "");
  EXPECT_EQ(either.check("paper"), "");
}

}  // namespace
}  // namespace gpudm
