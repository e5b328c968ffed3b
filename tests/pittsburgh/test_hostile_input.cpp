// Hostile population files (docs/reliability.md): integers beyond their range, a header that
// disagrees with the dataset, thresholds beyond the float range, unknown keys, deep nesting.
#include <gtest/gtest.h>

#include <fstream>

#include "algorithms/core/family.hpp"
#include "algorithms/pittsburgh/population.hpp"
#include "test_util.hpp"

namespace gpudm {
std::unique_ptr<Family> make_pittsburgh_family();
}

using namespace gpudm;
using namespace gpudm::pittsburgh;

namespace {
std::string error_of(const std::string& text) {
  try {
    (void)population_from_json(nlohmann::json::parse(text), "pop.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
std::string one(const std::string& individual) { return R"({"individuals": [)" + individual + "]}"; }
}  // namespace

TEST(PopulationHostile, IntegersAreCheckedBeforeTheyAreNarrowed) {
  std::string e = error_of(one(R"({"default_class": 4294967296, "rules": []})"));
  EXPECT_NE(e.find("individual 0: \"default_class\" must be an integer in [0, 2147483647], got 4294967296"), std::string::npos) << e;
  e = error_of(one(R"({"default_class": -1, "rules": []})"));
  EXPECT_NE(e.find("\"default_class\" must be an integer"), std::string::npos) << e;
  e = error_of(one(R"({"default_class": 0, "rules": [{"antecedent": [], "consequent": 4294967297}]})"));
  EXPECT_NE(e.find("rule 0: \"consequent\" must be an integer in [0, 2147483647]"), std::string::npos) << e;
  e = error_of(one(R"({"default_class": 0, "rules": [{"antecedent": [">", 4294967296, 1.0], "consequent": 0}]})"));
  EXPECT_NE(e.find("attribute index must be a non-negative integer, got 4294967296"), std::string::npos) << e;
  e = error_of(R"({"attributes": 4294967300, "individuals": []})");
  EXPECT_NE(e.find("\"attributes\" must be an integer in [1, 16777216]"), std::string::npos) << e;
}

TEST(PopulationHostile, ThresholdsBeyondTheFloatRangeAndUnknownKeysAreRejected) {
  std::string e = error_of(one(R"({"default_class": 0, "rules": [{"antecedent": [">", 0, 1e39], "consequent": 0}]})"));
  EXPECT_NE(e.find("token 0: value of '>' must be a finite number within the float range, got 1e+39"), std::string::npos) << e;
  e = error_of(one(R"({"default_class": 0, "rules": [{"antecedent": ["IN", 0, -1e39, 0], "consequent": 0}]})"));
  EXPECT_NE(e.find("float range"), std::string::npos) << e;
  e = error_of(one(R"({"default_class": 0, "rules": [{"antecedent": [], "consequent": 0, "weight": 2}]})"));
  EXPECT_NE(e.find("individual 0, rule 0: unknown key \"weight\" (known: antecedent, consequent)"), std::string::npos) << e;
  e = error_of(one(R"({"default_class": 0, "rules": [], "fitness": 1})"));
  EXPECT_NE(e.find("individual 0: unknown key \"fitness\""), std::string::npos) << e;
  // The largest float is still a threshold.
  EXPECT_EQ(error_of(one(R"({"default_class": 0, "rules": [{"antecedent": [">", 0, 3.4028234e38], "consequent": 0}]})")), "");
}

TEST(PopulationHostile, TheHeaderIsCheckedAgainstTheDatasetWithItsNumbers) {
  const Dataset d = pitt_test::random_dataset(20, 4, 3, 1);  // 5 attributes (4 numeric + 1 nominal), 3 classes
  const std::string body = R"("individuals": [{"default_class": 0, "rules": []}]})";
  auto header_error = [&](const std::string& header) {
    try {
      check_header(population_from_json(nlohmann::json::parse("{" + header + body), "pop.json"), d, "pop.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string cols = std::to_string(d.cols());
  EXPECT_EQ(header_error(R"("attributes": )" + cols + R"(, "classes": 3,)"), "");
  EXPECT_EQ(header_error(R"("attributes": 7,)"), "pop.json: the header declares 7 attributes, dataset '" + d.name() + "' has " + cols);
  EXPECT_EQ(header_error(R"("attributes": 3,)"), "pop.json: the header declares 3 attributes, dataset '" + d.name() + "' has " + cols);
  EXPECT_EQ(header_error(R"("classes": 4,)"), "pop.json: the header declares 4 classes, dataset '" + d.name() + "' has 3");
  EXPECT_EQ(header_error(""), "");  // the header is optional
}

TEST(PopulationHostile, ADeeplyNestedFileIsACleanError) {
  const std::string path = ::testing::TempDir() + "/deep_pop.json";
  std::ofstream(path) << R"({"individuals": )" << std::string(100000, '[') << std::string(100000, ']') << "}";
  try {
    (void)load_population(path);
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("JSON nested deeper than 256 levels"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(PopulationHostile, PopulationSizeIsRangeCheckedAtValidation) {
  const auto fam = make_pittsburgh_family();
  for (const auto& s : fam->params())
    if (s.name == "population") {
      EXPECT_NE(s.check(0), "");
      EXPECT_NE(s.check(-5), "");
      EXPECT_NE(s.check(4294967298ll), "");
      EXPECT_EQ(s.check(10), "");
      return;
    }
  FAIL() << "no population param";
}
