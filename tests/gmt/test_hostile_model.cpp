// Hostile model files and command lines (docs/reliability.md): a model tree nested 20,000 deep,
// attribute indexes beyond 32 bits, thresholds beyond the float range, malformed integers.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "algorithms/gmt/cli.hpp"
#include "algorithms/gmt/tree.hpp"
#include "common.hpp"

using namespace gpudm;
using namespace gpudm::gmt;

namespace {

std::string deep_tree(int levels) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += R"({"attribute": 0, "threshold": 0.5, "right": {"leaf": true, "intercept": 1}, "left": )";
  s += R"({"leaf": true, "intercept": 0})";
  s += std::string(static_cast<std::size_t>(levels), '}');
  return s;
}

std::string error_of(const std::string& tree, int cols = 3) {
  try {
    (void)from_json(nlohmann::json::parse(tree), cols, "m.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Runs a CLI entry point, returns (exit status, stderr).
template <class F>
std::pair<int, std::string> cli(F f, const std::vector<std::string>& args) {
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  const int rc = f(args, CliEnv{&gmt_test::registry(), nullptr});
  (void)::testing::internal::GetCapturedStdout();
  return {rc, ::testing::internal::GetCapturedStderr()};
}

}  // namespace

TEST(GmtHostile, ADeepModelTreeIsACleanError) {
  EXPECT_EQ(error_of(deep_tree(30)), "");
  std::string e = error_of(deep_tree(200));
  EXPECT_NE(e.find("m.json: model tree deeper than 64 levels"), std::string::npos) << e;
  // A 20,000-deep model file given to --predict: one line, no stack overflow.
  const std::string path = ::testing::TempDir() + "/deep_model.json";
  std::ofstream(path) << R"({"format": "gpudm-gmt-model", "version": 1, "attributes": ["a"], "tree": )" << deep_tree(20000) << "}";
  const auto [rc, err] = cli(predict_cli, {path, "--dataset", "whatever.csv"});
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("JSON nested deeper than 256 levels"), std::string::npos) << err;
  std::remove(path.c_str());
}

TEST(GmtHostile, AttributeIndexesAndThresholdsAreRangeChecked) {
  std::string e = error_of(R"({"attribute": 4294967296, "threshold": 0.5, "left": {"leaf": true, "intercept": 0},
                               "right": {"leaf": true, "intercept": 0}})");
  EXPECT_NE(e.find("test attribute 4294967296 out of range [0, 3)"), std::string::npos) << e;
  e = error_of(R"({"leaf": true, "intercept": 0, "terms": [{"attribute": -1, "coef": 1}]})");
  EXPECT_NE(e.find("leaf term attribute -1 out of range [0, 3)"), std::string::npos) << e;
  e = error_of(R"({"leaf": true, "intercept": 0, "terms": [{"attribute": 18446744073709551615, "coef": 1}]})");
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;
  e = error_of(R"({"attribute": 1, "threshold": 1e39, "left": {"leaf": true, "intercept": 0},
                   "right": {"leaf": true, "intercept": 0}})");
  EXPECT_NE(e.find("threshold 1e+39 is not a finite float"), std::string::npos) << e;
  e = error_of(R"({"leaf": true, "intercept": 0, "terms": {"attribute": 1}})");
  EXPECT_NE(e.find("'terms' is not an array"), std::string::npos) << e;
}

TEST(GmtHostile, MalformedIntegersOnTheCommandLineNameTheOption) {
  auto [rc, err] = cli(train_cli, {"--dataset", "x.csv", "--cv", "abc"});
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("--cv expects an integer in [2, 1048576], got 'abc'"), std::string::npos) << err;
  std::tie(rc, err) = cli(train_cli, {"--dataset", "x.csv", "--seed", "-1"});
  EXPECT_NE(err.find("--seed expects an integer in [0, 18446744073709551615], got '-1'"), std::string::npos) << err;
  std::tie(rc, err) = cli(train_cli, {"--dataset", "x.csv", "--rows", "12x"});
  EXPECT_NE(err.find("--rows expects an integer"), std::string::npos) << err;
}
