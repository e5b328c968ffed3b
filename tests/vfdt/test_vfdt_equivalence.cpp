// Every registered backend builds the same trees and predictions as the sequential one for the
// same seed and batch size (integer counts, fixed-point gains): the backbone of the vfdt tests.
#include <gtest/gtest.h>

#include <utility>

#include "algorithms/core/registry.hpp"
#include "algorithms/vfdt/forest.hpp"
#include "algorithms/core/machine.hpp"
#include "tests/vfdt/streams.hpp"

namespace gpudm {
void register_vfdt(Registry&);
}

namespace gpudm::vfdt {
namespace {

struct Case {
  std::string name;
  ForestParams params;
  EncodedStream stream;
};

struct Result {
  std::vector<std::int32_t> pred;
  ForestSnapshot snap;
};

Result run(const std::string& backend, const Case& c) {
  Registry r;
  register_vfdt(r);
  auto f = r.create<ForestBackend>("vfdt", backend);
  f->set_threads(3);
  f->prepare(c.stream, c.params);
  f->reset();
  Result out;
  out.pred.resize(c.stream.rows);
  // two calls, as the family's chunked runs do
  const std::size_t half = c.stream.rows / 2 / c.params.batch * c.params.batch;
  f->process(0, half, out.pred.data());
  f->process(half, c.stream.rows, out.pred.data() + half);
  out.snap = f->snapshot();
  // a second run after reset() must repeat the first
  f->reset();
  std::vector<std::int32_t> again(c.stream.rows);
  f->process(0, c.stream.rows, again.data());
  EXPECT_EQ(again, out.pred) << backend << ": reset() does not restore the initial forest";
  return out;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  const auto mixed = EncodedStream::encode(testing::mixed_drift_stream(30000, 21, 15000, 0.05));
  const auto known = EncodedStream::encode(testing::known_tree_stream(30000, 22, 0.2));
  ForestParams forest;
  forest.trees = 12;
  forest.engine = "persistent";  // "auto" picks it from 16 trees on; tested here on 12
  for (int b : {1, 100, 1024}) {
    forest.batch = b;
    v.push_back({"mixed_forest_b" + std::to_string(b), forest, mixed});
  }
  ForestParams tree;
  tree.trees = 1;
  tree.bagging = tree.adwin = false;
  tree.batch = 256;
  v.push_back({"mixed_tree_b256", tree, mixed});
  v.push_back({"binary_tree_b256", tree, known});
  ForestParams faithful = forest;
  faithful.batch = 512;
  faithful.path = "faithful";
  faithful.max_depth = 6;
  v.push_back({"binary_forest_faithful_b512", faithful, known});
  // The CUDA engines and ADWIN kernels (the CPU backends ignore these parameters): the default
  // cases above run the persistent engine with the prefix ADWIN; these run the per-batch kernels.
  ForestParams simple = forest;
  simple.batch = 100;
  simple.engine = "batched";
  simple.adwin_kernel = "simple";
  v.push_back({"mixed_forest_b100_batched_simple_adwin", simple, mixed});
  ForestParams warp = simple;
  warp.batch = 1024;
  warp.adwin_kernel = "warp";
  v.push_back({"mixed_forest_b1024_batched_warp_adwin", warp, mixed});
  ForestParams prefix = warp;
  prefix.batch = 333;  // ticks not aligned with batch ends
  prefix.adwin_kernel = "prefix";
  v.push_back({"mixed_forest_b333_batched_prefix_adwin", prefix, mixed});
  ForestParams big = forest;  // many ticks per batch (128), more warps than ticks per round
  big.batch = 4096;
  v.push_back({"mixed_forest_b4096", big, mixed});
  ForestParams sensitive = forest;  // a detector that cuts often (windows shrink without resets too)
  sensitive.batch = 777;
  sensitive.adwin_delta = 0.3;
  v.push_back({"mixed_forest_b777_adwin_delta_0.3", sensitive, mixed});
  ForestParams small = forest;  // a pool that fills up: refused splits must agree too
  small.max_nodes = 9;
  small.batch = 64;
  v.push_back({"mixed_forest_full_pool", small, mixed});
  // batch_order: the persistent-engine cases above run "stream" ("auto"); the batched-engine and
  // faithful cases "deferred". These run "deferred" on the persistent engine and "stream" with a
  // detector that resets trees several times inside one batch.
  ForestParams deferred = sensitive;
  deferred.batch_order = "deferred";
  v.push_back({"mixed_forest_b777_adwin_delta_0.3_deferred", deferred, mixed});
  deferred = big;
  deferred.batch_order = "deferred";
  v.push_back({"mixed_forest_b4096_deferred", deferred, mixed});
  // naive Bayes leaves: the forest on the persistent engine ("auto" order resolves to deferred)
  // and a single tree on the batched engine
  ForestParams nb = forest;
  nb.batch = 1024;
  nb.leaf_prediction = "nb";
  v.push_back({"mixed_forest_b1024_naive_bayes", nb, mixed});
  ForestParams nb_tree = tree;
  nb_tree.leaf_prediction = "nb";
  v.push_back({"mixed_tree_b256_naive_bayes", nb_tree, mixed});
  // the Hoeffding bound's n without the inherited class counts (VFDT's n; the default "auto" is
  // MOA's / River's "total" on path default)
  ForestParams learned = forest;
  learned.batch = 777;
  learned.bound_weight = "learned";
  v.push_back({"mixed_forest_b777_bound_learned", learned, mixed});
  ForestParams learned_tree = tree;
  learned_tree.bound_weight = "learned";
  v.push_back({"mixed_tree_b256_bound_learned", learned_tree, mixed});
  ForestParams resets = big;
  resets.adwin_delta = 0.5;
  v.push_back({"mixed_forest_b4096_adwin_delta_0.5_stream", resets, mixed});
  // River's reset rule (every ADWIN cut resets, also when the error fell) on every ADWIN kernel:
  // the persistent engine's prefix ADWIN in both orders, the batched engine's simple and warp
  // kernels, and the faithful path
  for (ForestParams any : {forest, deferred, simple, warp, faithful}) {
    any.reset_rule = "any";
    if (any.path != "faithful" && any.engine == "persistent") any.batch = 1024;
    v.push_back({"reset_any_" + any.engine + "_" + any.adwin_kernel + "_" + any.path + "_" + any.batch_order + "_b" +
                     std::to_string(any.batch),
                 any, any.path == "faithful" ? known : mixed});
  }
  return v;
}

void expect_equivalent(const std::string& backend) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const Result ref = run("sequential", c);
    const Result got = run(backend, c);
    std::size_t diff = 0;
    for (std::size_t i = 0; i < ref.pred.size(); ++i) diff += ref.pred[i] != got.pred[i];
    EXPECT_EQ(diff, 0u) << backend << ": predictions differ";
    EXPECT_EQ(ref.snap.diff(got.snap), "") << backend;
    EXPECT_EQ(ref.snap.checksum(), got.snap.checksum()) << backend;
    EXPECT_EQ(ref.snap.splits, got.snap.splits);
    EXPECT_EQ(ref.snap.resets, got.snap.resets);
  }
}

#ifndef GPUDM_VFDT_GPU_TESTS
TEST(VfdtEquivalence, ForestsGrowAndDriftInTheseCases) {
  // guards against a vacuous equivalence: the cases must actually split and reset
  const auto cs = cases();
  const Result r = run("sequential", cs[0]);
  EXPECT_GT(r.snap.splits, 20);
  EXPECT_GT(r.snap.resets, 0);
  // the faithful path must reset trees somewhere too (its reset restarts the detector: a case
  // without resets let a CUDA reset that kept the old ADWIN window pass)
  bool faithful_resets = false;
  for (const auto& c : cs)
    if (c.params.path == "faithful" && c.params.adwin) faithful_resets = faithful_resets || run("sequential", c).snap.resets > 0;
  EXPECT_TRUE(faithful_resets);
}

// batch_order "stream" differs from the exact algorithm only in when leaves are checked for a
// split: with no split possible it must give B = 1's predictions at any B (resets included), and
// with splits it must differ from "deferred" at B > 1 and equal it at B = 1.
TEST(VfdtEquivalence, StreamOrderIsTheExactAlgorithmUpToSplitTiming) {
  const auto mixed = EncodedStream::encode(testing::mixed_drift_stream(30000, 21, 15000, 0.05));
  ForestParams p;
  p.trees = 12;
  p.adwin_delta = 0.3;
  p.batch_order = "stream";
  p.grace = 1 << 30;  // no leaf is ever checked
  p.batch = 1;
  const Result exact = run("sequential", {"exact", p, mixed});
  EXPECT_GT(exact.snap.resets, 0);
  EXPECT_EQ(exact.snap.splits, 0);
  for (int b : {7, 777, 4096}) {
    p.batch = b;
    const Result got = run("sequential", {"stream", p, mixed});
    EXPECT_EQ(got.pred, exact.pred) << "batch " << b;
    EXPECT_EQ(got.snap.resets, exact.snap.resets) << "batch " << b;
  }
  p.grace = 200;
  for (int b : {1, 777}) {
    p.batch = b;
    p.batch_order = "deferred";
    const Result deferred = run("sequential", {"deferred", p, mixed});
    p.batch_order = "stream";
    const Result stream = run("sequential", {"stream", p, mixed});
    EXPECT_GT(stream.snap.splits, 20) << "batch " << b;
    if (b == 1) EXPECT_EQ(deferred.pred, stream.pred);
    else EXPECT_NE(deferred.pred, stream.pred);
  }
}

// reset_rule "any" (River's ARF) resets on cuts where the error fell too: more resets than
// "rise", and never fewer cuts signalled on the same detector inputs.
TEST(VfdtEquivalence, ResetOnAnyCutResetsMoreOften) {
  const auto mixed = EncodedStream::encode(testing::mixed_drift_stream(30000, 21, 15000, 0.05));
  ForestParams p;
  p.trees = 12;
  p.batch = 1;
  const Result rise = run("sequential", {"rise", p, mixed});
  p.reset_rule = "any";
  const Result any = run("sequential", {"any", p, mixed});
  EXPECT_GT(any.snap.resets, rise.snap.resets);
  EXPECT_NE(any.pred, rise.pred);
  p.reset_rule = "sometimes";
  EXPECT_THROW(p.validate(10), Error);
}

TEST(VfdtEquivalence, NaiveBayesLeavesChangeTheVotes) {
  const auto mixed = EncodedStream::encode(testing::mixed_drift_stream(30000, 21, 15000, 0.05));
  ForestParams p;
  p.trees = 1;
  p.bagging = p.adwin = false;
  p.batch = 1;
  const Result mc = run("sequential", {"mc", p, mixed});
  p.leaf_prediction = "nb";
  const Result nb = run("sequential", {"nb", p, mixed});
  std::size_t differ = 0;
  for (std::size_t i = 0; i < mc.pred.size(); ++i) differ += mc.pred[i] != nb.pred[i];
  EXPECT_GT(differ, 100u);
  EXPECT_EQ(mc.snap.checksum(), nb.snap.checksum());  // without drift resets the votes do not change the tree
}

TEST(VfdtEquivalence, BatchOrderResolvesFromTheParametersAlone) {
  ForestParams p;
  p.trees = 100;
  EXPECT_EQ(p.order(), "stream");  // persistent engine
  p.leaf_prediction = "nb";
  EXPECT_EQ(p.order(), "deferred");
  p.leaf_prediction = "mc";
  EXPECT_TRUE(p.bound_total());  // "auto" on path default
  p.path = "faithful";
  EXPECT_FALSE(p.bound_total());
  p.bound_weight = "total";
  EXPECT_THROW(p.validate(10), Error);
  p.bound_weight = "auto";
  p.path = "default";
  p.trees = 1;
  EXPECT_EQ(p.order(), "deferred");  // batched engine
  p.trees = 100;
  p.path = "faithful";
  EXPECT_EQ(p.order(), "deferred");
  p.batch_order = "stream";
  try {
    p.validate(10);
    ADD_FAILURE() << "stream order accepted on path faithful";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch_order"), std::string::npos) << e.what();
  }
  p.path = "default";
  p.batch_order = "sideways";
  EXPECT_THROW(p.validate(10), Error);
}

TEST(VfdtEquivalence, OpenmpIsEquivalentToSequential) {
  Registry r;
  register_vfdt(r);
  if (!r.info("vfdt", "openmp").available) GTEST_SKIP() << r.info("vfdt", "openmp").reason;
  expect_equivalent("openmp");
}

#else
TEST(VfdtEquivalenceGpu, CudaIsEquivalentToSequential) {
  if (machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << machine::gpu_unavailable_reason();
  Registry r;
  register_vfdt(r);
  if (!r.info("vfdt", "cuda").available) GTEST_SKIP() << r.info("vfdt", "cuda").reason;
  expect_equivalent("cuda");
}
#endif

}  // namespace
}  // namespace gpudm::vfdt
