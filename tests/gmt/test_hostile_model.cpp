// Hostile model files and command lines (docs/reliability.md): a model tree nested 20,000 deep,
// attribute indexes beyond 32 bits, thresholds beyond the float range, malformed integers; batch
// sample files of the wrong shape; params out of range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "datasets/csv_files.hpp"
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
  datasets::RegressionCsvFiles files;
  const int rc = f(args, CliEnv{&gmt_test::registry(), &files});
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
  EXPECT_EQ(rc, 2);  // a usage error
  EXPECT_NE(err.find("--cv expects an integer in [2, 1048576], got 'abc'"), std::string::npos) << err;
  std::tie(rc, err) = cli(train_cli, {"--dataset", "x.csv", "--seed", "-1"});
  EXPECT_NE(err.find("--seed expects an integer in [0, 18446744073709551615], got '-1'"), std::string::npos) << err;
  std::tie(rc, err) = cli(train_cli, {"--dataset", "x.csv", "--rows", "12x"});
  EXPECT_NE(err.find("--rows expects an integer"), std::string::npos) << err;
}

// ---- batch samples (replay_from) ------------------------------------------------------------------
// The evaluators (CPU and CUDA) walk a compact tree's node array without bounds checks, so a tree
// read from a damaged or foreign sample file must be rejected with the file named (Tree::from_parts),
// never evaluated.
namespace {

// x1 <= 0.5 ? LM(x2) : (x3 <= 0.5 ? LM() : LM(x1, x3)) over 3 attributes; node 1 clean.
Tree valid_tree() {
  Tree t = Tree::join(0, 0.5f, Tree::leaf({1}), Tree::join(2, 0.5f, Tree::leaf({}), Tree::leaf({0, 2})));
  t.set_fit(1, {1}, {0.25, -1.5}, 2);
  return t;
}

std::string sample_error(Tree tree, std::int64_t evaluations = 10, RepairSpec repair = {5, RepairMode::promote}) {
  const std::string path = ::testing::TempDir() + "/hostile_sample.bin";
  {
    BatchSampleWriter w(path, "d", 100, 3, 1);
    w.add(1, single(tree, 7, repair));
    RecordedRun r;
    r.backend = "sequential";
    r.evaluations = evaluations;
    w.finish(r);
  }
  std::string e;
  try {
    const BatchSample s = read_batch_sample(path);
    // A tree that got through is the tree that was written.
    EXPECT_EQ(s.batches.size(), 1u);
    if (s.batches.size() == 1 && s.batches[0].size() == 1) {
      EXPECT_TRUE(s.batches[0].trees[0].same_model(tree));
      EXPECT_EQ(s.batches[0].salts[0], 7u);
      EXPECT_EQ(s.batches[0].repair.min_rows, repair.min_rows);
      EXPECT_EQ(s.batches[0].repair.mode, repair.mode);
    }
  } catch (const Error& x) {
    e = x.what();
  }
  std::remove(path.c_str());
  return e;
}

// The bytes of a sample file by hand: the header, then what `body` writes.
template <class Body>
std::string raw_sample_error(std::uint32_t version, Body body, std::size_t max_bytes = std::size_t{64} << 20) {
  const std::string path = ::testing::TempDir() + "/raw_sample.bin";
  {
    std::ofstream o(path, std::ios::binary);
    const auto put = [&o](auto v) { o.write(reinterpret_cast<const char*>(&v), sizeof v); };
    o.write("GMTBATCH", 8);
    put(version);
    put(std::uint32_t{1});  // dataset name "d"
    o.write("d", 1);
    put(std::uint64_t{100});  // rows, cols, seed
    put(std::uint64_t{3});
    put(std::uint64_t{1});
    body(put);
  }
  std::string e;
  try {
    (void)read_batch_sample(path, max_bytes);
  } catch (const Error& x) {
    e = x.what();
  }
  std::remove(path.c_str());
  return e;
}

}  // namespace

TEST(GmtHostile, ABatchSampleTreeOfTheWrongShapeIsRejected) {
  EXPECT_EQ(sample_error(valid_tree()), "");
  EXPECT_EQ(sample_error(Tree::leaf({0, 1, 2})), "");
  EXPECT_EQ(sample_error(valid_tree(), 10, {0, RepairMode::collapse}), "");
  auto bad = [](auto edit) {
    Tree t = valid_tree();
    edit(t);
    return sample_error(t);
  };
  const std::string corrupt = "hostile_sample.bin' is corrupt: ";
  EXPECT_NE(bad([](Tree& t) { t.node(0).attr = 5; }).find(corrupt + "node 0 tests attribute 5 of 3"), std::string::npos);
  EXPECT_NE(bad([](Tree& t) { t.node(2).left = 2; }).find(corrupt + "node 2 has its children out of place"), std::string::npos);
  EXPECT_NE(bad([](Tree& t) { t.node(2).left = 4; }).find(corrupt + "node 2 has its children out of place"), std::string::npos);
  // a test on the last node: no children
  EXPECT_NE(bad([](Tree& t) { t.node(4).attr = 1; }).find(corrupt + "node 4 has its children out of place"), std::string::npos);
  // a leaf with tests below it in the array
  EXPECT_NE(bad([](Tree& t) { t.node(2).attr = kLeafNode; }).find(corrupt + "nodes that no test reaches"), std::string::npos);
  EXPECT_NE(bad([](Tree& t) { t.node(3).attr = -2; }).find(corrupt + "node 3 has attribute -2"), std::string::npos);
  EXPECT_NE(bad([](Tree& t) { t.node(4).m_len = 40; }).find(corrupt + "leaf 4 has its model outside the pool"), std::string::npos);
  EXPECT_NE(bad([](Tree& t) { t.node(4).m_off = -1; }).find(corrupt + "leaf 4 has its model outside the pool"), std::string::npos);
  EXPECT_NE(bad([](Tree& t) { t.set_model(4, {2, 0}); }).find(corrupt + "leaf 4 has model attributes out of range or order"),
            std::string::npos);
  EXPECT_NE(bad([](Tree& t) { t.set_model(4, {3}); }).find(corrupt + "leaf 4 has model attributes out of range or order"),
            std::string::npos);
  EXPECT_NE(bad([](Tree& t) { t.node(1).c_off = 1000; }).find(corrupt + "leaf 1 has its coefficients outside the pool"),
            std::string::npos);
  EXPECT_NE(sample_error(valid_tree(), 0).find("is corrupt (its summary record)"), std::string::npos);
  // a tree without nodes, a repair rule that is none, a sample of the flat format (version 1)
  const auto one_tree_of = [](std::uint32_t nodes) {
    return [nodes](auto put) {
      put(std::uint32_t{1});  // a batch record: generation, repair rule, trees
      put(std::int32_t{1});
      put(std::int32_t{5});
      put(std::int32_t{0});
      put(std::uint32_t{1});
      put(std::uint64_t{7});  // salt, nodes
      put(nodes);
    };
  };
  std::string e = raw_sample_error(2, one_tree_of(0));
  EXPECT_NE(e.find("is corrupt (a tree of 0 nodes)"), std::string::npos) << e;
  e = raw_sample_error(2, [](auto put) {
    put(std::uint32_t{1});
    put(std::int32_t{1});
    put(std::int32_t{5});
    put(std::int32_t{2});  // mode 2
    put(std::uint32_t{0});
  });
  EXPECT_NE(e.find("is corrupt (repair rule 5, 2)"), std::string::npos) << e;
  e = raw_sample_error(1, [](auto) {});
  EXPECT_NE(e.find("has version 1 (this build reads version 2; record it again with batch_sample_every)"), std::string::npos) << e;
  e = raw_sample_error(2, [](auto put) { put(std::uint32_t{9}); });
  EXPECT_NE(e.find("is corrupt (record type 9)"), std::string::npos) << e;
}

// A few bytes that declare 4 billion trees, or trees of 2^24 nodes: an error, never an attempt
// to allocate what the header claims.
TEST(GmtHostile, ABatchSampleCannotMakeTheReaderAllocateWhatItDeclares) {
  const auto trees_of = [](std::uint32_t trees, std::uint32_t nodes, std::uint32_t headers) {
    return [=](auto put) {
      put(std::uint32_t{1});  // a batch record: generation, repair rule, trees
      put(std::int32_t{1});
      put(std::int32_t{5});
      put(std::int32_t{0});
      put(trees);
      for (std::uint32_t k = 0; k < headers; ++k) {  // the first trees' headers, nothing more
        put(std::uint64_t{7});
        put(nodes);
      }
    };
  };
  std::string e = raw_sample_error(2, trees_of(0xffffffffu, 3, 0), 0);
  EXPECT_NE(e.find("is truncated"), std::string::npos) << e;
  e = raw_sample_error(2, trees_of(4, (1u << 24) + 1, 4));
  EXPECT_NE(e.find("is corrupt (a tree of 16777217 nodes)"), std::string::npos) << e;
  // 2^24 nodes: more than a GiB for 40 bytes of file
  e = raw_sample_error(2, trees_of(4, 1u << 24, 4));
  const std::size_t mib = ((std::size_t{1} << 24) * sizeof(TreeNode)) >> 20;
  EXPECT_NE(e.find("needs more than " + std::to_string(mib) + " MiB of host memory for its trees, more than the 64 MiB available"),
            std::string::npos)
      << e;
  // pools: an attribute pool of 2^28 + 1 entries is corrupt
  e = raw_sample_error(2, [](auto put) {
    put(std::uint32_t{1});
    put(std::int32_t{1});
    put(std::int32_t{5});
    put(std::int32_t{0});
    put(std::uint32_t{1});
    put(std::uint64_t{7});
    put(std::uint32_t{1});  // one node: a leaf
    put(std::int32_t{kLeafNode});
    put(0.0f);
    put(std::int32_t{-1});
    put(std::int32_t{0});  // m_off, m_len, c_off
    put(std::int32_t{0});
    put(std::int32_t{0});
    put(std::uint8_t{1});  // dirty, has_coef
    put(std::uint8_t{0});
    put(std::int64_t{0});  // count, sse
    put(0.0);
    put(std::uint32_t{(1u << 28) + 1});
  });
  EXPECT_NE(e.find("is corrupt (a model pool of 268435457)"), std::string::npos) << e;
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
  EXPECT_NE(check("replay_batch_trees", -1), "");  // (0: whole batches)
  EXPECT_NE(check("device_memory_limit", 1e300), "");  // would not convert to an integer
  EXPECT_NE(check("crossover", 1.5), "");
  EXPECT_EQ(check("max_seconds", 1e12), "");  // numbers without an upper bound
}
