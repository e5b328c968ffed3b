// Hostile model files and command lines (docs/reliability.md): a model tree nested 20,000 deep,
// attribute indexes beyond 32 bits, thresholds beyond the float range, malformed integers; batch
// sample files of the wrong shape; params out of range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "algorithms/gmt/batch_sample.hpp"
#include "algorithms/gmt/cli.hpp"
#include "algorithms/gmt/params.hpp"
#include "algorithms/gmt/train.hpp"
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
  EXPECT_NE(e.find("m.json: test attribute must be an integer in [0, 2], got 4294967296"), std::string::npos) << e;
  e = error_of(R"({"leaf": true, "intercept": 0, "terms": [{"attribute": -1, "coef": 1}]})");
  EXPECT_NE(e.find("leaf term attribute must be an integer in [0, 2], got -1"), std::string::npos) << e;
  e = error_of(R"({"leaf": true, "intercept": 0, "terms": [{"attribute": 18446744073709551615, "coef": 1}]})");
  EXPECT_NE(e.find("must be an integer in [0, 2], got 18446744073709551615"), std::string::npos) << e;
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

// ---- batch samples (replay_from) ------------------------------------------------------------------
// The evaluators (CPU and CUDA) walk a flat tree without bounds checks, so a tree read from a
// damaged or foreign sample file must be rejected with the file named, never evaluated.
namespace {

// A flat tree of `levels` levels over 3 attributes: node attributes as given, a leaf record
// (refit) for every kLeafNode except those listed in `no_record`.
FlatTree flat(int levels, std::vector<std::int32_t> attr, std::vector<int> no_record = {}) {
  FlatTree t;
  t.levels = levels;
  t.cols = 3;
  t.attr = std::move(attr);
  t.threshold.assign(t.attr.size(), 0.5f);
  t.leaf_slot.assign(t.attr.size(), -1);
  for (std::size_t i = 0; i < t.attr.size(); ++i)
    if (t.attr[i] == kLeafNode && std::find(no_record.begin(), no_record.end(), int(i)) == no_record.end()) {
      t.leaf_slot[i] = t.n_leaves();
      t.leaf_node.push_back(static_cast<std::int32_t>(i));
      t.refit.push_back(1);
      t.mask.insert(t.mask.end(), 3, 0);
      t.coef.insert(t.coef.end(), 4, 0.0);
    }
  return t;
}

std::string sample_error(const FlatTree& tree, std::int64_t evaluations = 10) {
  const std::string path = ::testing::TempDir() + "/hostile_sample.bin";
  {
    BatchSampleWriter w(path, "d", 100, 3, 1);
    w.add(1, {&tree});
    RecordedRun r;
    r.backend = "sequential";
    r.evaluations = evaluations;
    w.finish(r);
  }
  std::string e;
  try {
    (void)read_batch_sample(path);
  } catch (const Error& x) {
    e = x.what();
  }
  std::remove(path.c_str());
  return e;
}

}  // namespace

TEST(GmtHostile, ABatchSampleTreeOfTheWrongShapeIsRejected) {
  constexpr std::int32_t L = kLeafNode, A = kAbsentNode;
  EXPECT_EQ(sample_error(flat(2, {0, L, L})), "");
  EXPECT_EQ(sample_error(flat(3, {1, L, 2, A, A, L, L})), "");
  EXPECT_NE(sample_error(flat(2, {5, L, L})).find("is corrupt (node 0 tests attribute 5 of 3)"), std::string::npos);
  EXPECT_NE(sample_error(flat(1, {0})).find("node 0 tests attribute 0 of 3 on the last level"), std::string::npos);
  EXPECT_NE(sample_error(flat(2, {0, L, A})).find("node 2 is a missing child"), std::string::npos);
  EXPECT_NE(sample_error(flat(2, {L, L, A})).find("node 1 lies below a leaf"), std::string::npos);
  EXPECT_NE(sample_error(flat(2, {0, L, L}, {2})).find("leaf node 2 has no leaf record"), std::string::npos);
  EXPECT_NE(sample_error(flat(2, {A, A, A})).find("a tree without a root"), std::string::npos);
  EXPECT_NE(sample_error(flat(2, {0, L, L}), 0).find("is corrupt (its summary record)"), std::string::npos);
}

// A few bytes that declare 4 billion trees, or trees of 2^24 nodes: an error, never an attempt
// to allocate what the header claims.
TEST(GmtHostile, ABatchSampleCannotMakeTheReaderAllocateWhatItDeclares) {
  const std::string path = ::testing::TempDir() + "/huge_sample.bin";
  auto write = [&](std::uint32_t trees, std::int32_t levels, std::uint32_t headers) {
    std::ofstream o(path, std::ios::binary);
    const auto put = [&o](auto v) { o.write(reinterpret_cast<const char*>(&v), sizeof v); };
    o.write("GMTBATCH", 8);
    put(std::uint32_t{1});  // version
    put(std::uint32_t{1});  // dataset name "d"
    o.write("d", 1);
    put(std::uint64_t{100});  // rows, cols, seed
    put(std::uint64_t{3});
    put(std::uint64_t{1});
    put(std::uint32_t{1});  // a batch record: generation, trees
    put(std::int32_t{1});
    put(trees);
    for (std::uint32_t k = 0; k < headers; ++k) {  // the first trees' headers, nothing more
      put(levels);
      put(std::int32_t{3});
      put(std::uint64_t{7});
    }
  };
  auto error_of = [&](std::size_t max_bytes) {
    try {
      (void)read_batch_sample(path, max_bytes);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  write(0xffffffffu, 2, 0);
  EXPECT_NE(error_of(0).find("is truncated"), std::string::npos) << error_of(0);
  write(4, 24, 4);  // 4 x 2^24 nodes: 800 MB for 64 bytes of file
  const std::string e = error_of(std::size_t{64} << 20);
  EXPECT_NE(e.find("needs more than 192 MiB of host memory for its trees, more than the 64 MiB available"), std::string::npos)
      << e;
  std::remove(path.c_str());
}

TEST(GmtHostile, ParamsAreRangeCheckedAtValidation) {
  const auto& specs = gmt::params_table().specs();
  auto check = [&](const std::string& name, const nlohmann::json& v) {
    for (const auto& s : specs)
      if (s.name == name) return s.check(v);
    return std::string("no param ") + name;
  };
  EXPECT_EQ(check("population", 64), "");
  EXPECT_NE(check("population", 0), "");
  EXPECT_NE(check("population", 1), "");  // the EA needs two
  EXPECT_NE(check("population", 4294967298ll), "");
  EXPECT_NE(check("max_depth", 21), "");
  EXPECT_NE(check("elitism", -1), "");
  EXPECT_NE(check("gpu_threads", 2048), "");
  EXPECT_NE(check("chunk_rows", 0), "");
  EXPECT_NE(check("replay_batch_trees", 0), "");
  EXPECT_NE(check("device_memory_limit", 1e300), "");  // would not convert to an integer
  EXPECT_NE(check("crossover", 1.5), "");
  EXPECT_EQ(check("max_seconds", 1e12), "");  // numbers without an upper bound
}
