// Population JSON, validation messages, random populations.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "algorithms/pittsburgh/population.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::pittsburgh;
using nlohmann::json;

namespace {
rules::Schema schema_of(const Dataset& d) { return rules::Schema::of(d); }

std::string error_of(const std::string& text, const Dataset& d) {
  try {
    Population p = population_from_json(json::parse(text), "pop.json");
    validate(p, schema_of(d));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Population, JsonRoundTrip) {
  const Dataset d = pitt_test::random_dataset(10, 3, 3, 1);
  const Population p = random_population(d, 5, RandomRuleSpec{}, 42);
  const auto s = schema_of(d);
  const auto j = population_to_json(p, &s);
  const Population q = population_from_json(json::parse(j.dump()), "x");
  ASSERT_EQ(q.size(), p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(q.individuals[i].default_class, p.individuals[i].default_class);
    ASSERT_EQ(q.individuals[i].rules.size(), p.individuals[i].rules.size());
    for (std::size_t r = 0; r < p.individuals[i].rules.size(); ++r) {
      EXPECT_EQ(q.individuals[i].rules[r].tokens, p.individuals[i].rules[r].tokens);
      EXPECT_EQ(q.individuals[i].rules[r].consequent, p.individuals[i].rules[r].consequent);
    }
  }
  const std::string path = ::testing::TempDir() + "/pop_roundtrip.json";
  save_population(p, path, &s);
  const Population r = load_population(path);
  EXPECT_EQ(r.total_rules(), p.total_rules());
  std::remove(path.c_str());
}

TEST(Population, RandomPopulationShape) {
  const Dataset d = pitt_test::random_dataset(50, 6, 4, 2);
  const Population p = random_population(d, 7, RandomRuleSpec{}, 9);
  ASSERT_EQ(p.size(), 7u);
  for (const auto& ind : p.individuals) EXPECT_EQ(ind.rules.size(), 4u);  // = classes
  const FlatPopulation f = flatten(p, schema_of(d));
  EXPECT_EQ(f.rules(), 28u);
  EXPECT_GT(f.primitives, 28u * 3);
  // Same seed, same population; another seed, another.
  const Population q = random_population(d, 7, RandomRuleSpec{}, 9);
  EXPECT_EQ(q.individuals[3].rules[2].tokens, p.individuals[3].rules[2].tokens);
  const Population o = random_population(d, 7, RandomRuleSpec{}, 10);
  EXPECT_NE(o.individuals[3].rules[2].tokens, p.individuals[3].rules[2].tokens);
}

TEST(Population, FlattenedRangesConcatenateToTheWholeAndNameGlobalIndexes) {
  // What each device of a multi-GPU evaluation flattens: [begin, end) with offsets from 0.
  const Dataset d = pitt_test::random_dataset(50, 6, 4, 2);
  Population p = random_population(d, 9, RandomRuleSpec{}, 3);
  const auto s = schema_of(d);
  const FlatPopulation whole = flatten(p, s);
  const FlatPopulation a = flatten(p, s, 0, 4), b = flatten(p, s, 4, 9), none = flatten(p, s, 9, 9);
  EXPECT_EQ(none.individuals(), 0u);
  EXPECT_EQ(none.individual_rule_begin, std::vector<std::uint32_t>{0});
  ASSERT_EQ(a.individuals() + b.individuals(), whole.individuals());
  EXPECT_EQ(a.primitives + b.primitives, whole.primitives);
  EXPECT_EQ(std::max(a.max_depth, b.max_depth), whole.max_depth);
  EXPECT_EQ(std::max(a.max_individual_words, b.max_individual_words), whole.max_individual_words);
  std::vector<std::uint32_t> words = a.antecedents.words;
  words.insert(words.end(), b.antecedents.words.begin(), b.antecedents.words.end());
  EXPECT_EQ(words, whole.antecedents.words);
  for (std::size_t i = 0; i <= b.individuals(); ++i) {
    EXPECT_EQ(b.individual_rule_begin[i] + a.rules(), whole.individual_rule_begin[4 + i]);
    EXPECT_EQ(b.individual_word_begin[i] + a.antecedents.words.size(), whole.individual_word_begin[4 + i]);
  }
  for (std::size_t r = 0; r <= b.rules(); ++r)
    EXPECT_EQ(b.antecedents.rule_begin[r] + a.antecedents.words.size(), whole.antecedents.rule_begin[a.rules() + r]);
  p.individuals[6].default_class = 7;
  try {
    (void)flatten(p, s, 4, 9);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("individual 6: default class 7"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)flatten(p, s, 5, 10), Error);
}

TEST(Population, MalformedPopulationsAreRejectedWithContext) {
  const Dataset d = pitt_test::random_dataset(10, 3, 3, 1);  // attrs 0..2 numeric, 3 nominal
  auto pop = [](const std::string& rules, int def = 0) {
    return R"({"individuals": [{"default_class": 0, "rules": []}, {"default_class": )" + std::to_string(def) +
           R"(, "rules": [{"antecedent": [">", 0, 1], "consequent": 0}, )" + rules + "]}]}";
  };
  EXPECT_NE(error_of(pop(R"({"antecedent": [">", 9, 1], "consequent": 1})"), d)
                .find("individual 1, rule 1: word 0 (>): attribute 9 out of range"), std::string::npos);
  EXPECT_NE(error_of(pop(R"({"antecedent": ["=", 0, 1], "consequent": 1})"), d)
                .find("individual 1, rule 1: word 0 (=): nominal operator on numeric attribute 0"), std::string::npos);
  EXPECT_NE(error_of(pop(R"({"antecedent": [">", 0, 1, "OR"], "consequent": 1})"), d)
                .find("individual 1, rule 1: word 2 (OR): stack underflow"), std::string::npos);
  EXPECT_NE(error_of(pop(R"({"antecedent": [">", 0, 1], "consequent": 3})"), d)
                .find("individual 1, rule 1: consequent class 3 out of range [0, 3)"), std::string::npos);
  EXPECT_NE(error_of(pop(R"({"antecedent": [], "consequent": 1})", 5), d)
                .find("individual 1: default class 5 out of range"), std::string::npos);
  EXPECT_NE(error_of(pop(R"({"antecedent": [">", 0], "consequent": 1})"), d)
                .find("pop.json: individual 1, rule 1: token 0: '>' needs an attribute index"), std::string::npos);
  EXPECT_NE(error_of(R"({"individuals": [{"rules": []}]})", d).find("individual 0: \"default_class\""), std::string::npos);
  EXPECT_NE(error_of(R"({"individual": []})", d).find("unknown key \"individual\""), std::string::npos);
  EXPECT_NE(error_of(R"({"format": "other", "individuals": []})", d).find("format"), std::string::npos);
  EXPECT_EQ(error_of(pop(R"({"antecedent": ["!=", 3, 2, "NOT"], "consequent": 2})"), d), "");
}

TEST(Population, LoadReportsMissingFileAndBadJson) {
  EXPECT_THROW(load_population("/nonexistent/pop.json"), Error);
  const std::string path = ::testing::TempDir() + "/bad_pop.json";
  std::ofstream(path) << "{ not json";
  try {
    load_population(path);
    FAIL();
  } catch (const Error& e) {
    // The wording of every JSON file a user gives: what, path, line and column, the reason.
    EXPECT_NE(std::string(e.what()).find("population file " + path + ":1:4: syntax error"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}
