// Every registered backend builds the same trees and predictions as the reference backend
// (sequential) for the same seed and batch size (integer counts, fixed-point gains), and as an
// independent small reference written from the paper (tests/vfdt/reference_forest.hpp) on small
// streams: the backbone of the vfdt tests. The ".../cuda" instances carry the ctest label gpu and
// run every CUDA engine, ADWIN kernel and the faithful path.
#include <gtest/gtest.h>

#include <utility>

#include "algorithms/core/registry.hpp"
#include "algorithms/vfdt/forest.hpp"
#include "algorithms/vfdt/online.hpp"
#include "tests/common/equivalence.hpp"
#include "tests/vfdt/reference_forest.hpp"
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

// Two process() calls, as the family's chunked runs do; then a second pass after reset() must
// repeat the first.
Result run(ForestBackend& f, const Case& c, int threads = 3) {
  ForestParams p = c.params;
  p.threads = threads;
  f.configure(p);
  f.prepare(c.stream);
  f.reset();
  Result out;
  out.pred.resize(c.stream.rows);
  PhaseTimer timer;
  const std::size_t half = c.stream.rows / 2 / c.params.batch * c.params.batch;
  f.process(0, half, out.pred.data(), timer);
  f.process(half, c.stream.rows, out.pred.data() + half, timer);
  out.snap = f.snapshot();
  f.reset();
  std::vector<std::int32_t> again(c.stream.rows);
  f.process(0, c.stream.rows, again.data(), timer);
  EXPECT_EQ(again, out.pred) << f.name() << ": reset() does not restore the initial forest";
  return out;
}

Registry vfdt_registry() {
  Registry r;
  register_vfdt(r);
  return r;
}

Result run(const std::string& backend, const Case& c) {
  auto f = vfdt_registry().create<ForestBackend>("vfdt", backend);
  return run(*f, c);
}

void expect_same(const Result& want, const Result& got, const std::string& what) {
  std::size_t diff = 0;
  for (std::size_t i = 0; i < want.pred.size(); ++i) diff += want.pred[i] != got.pred[i];
  EXPECT_EQ(diff, 0u) << what << ": predictions differ";
  EXPECT_EQ(want.snap.diff(got.snap), "") << what;
  EXPECT_EQ(want.snap.checksum(), got.snap.checksum()) << what;
  EXPECT_EQ(want.snap.splits, got.snap.splits) << what;
  EXPECT_EQ(want.snap.resets, got.snap.resets) << what;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  const auto mixed = EncodedStream::encode(testing::mixed_drift_stream(30000, 21, 15000, 0.05));
  const auto known = EncodedStream::encode(testing::known_tree_stream(30000, 22, 0.2));
  ForestParams forest;
  forest.trees = 12;
  forest.engine = Engine::persistent;  // "auto" picks it from 16 trees on; tested here on 12
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
  faithful.path = ForestPath::faithful;
  faithful.max_depth = 6;
  v.push_back({"binary_forest_faithful_b512", faithful, known});
  // The CUDA engines and ADWIN kernels (the CPU backends ignore these parameters): the default
  // cases above run the persistent engine with the prefix ADWIN; these run the per-batch kernels.
  ForestParams simple = forest;
  simple.batch = 100;
  simple.engine = Engine::batched;
  simple.adwin_kernel = AdwinKernel::simple;
  v.push_back({"mixed_forest_b100_batched_simple_adwin", simple, mixed});
  ForestParams warp = simple;
  warp.batch = 1024;
  warp.adwin_kernel = AdwinKernel::warp;
  v.push_back({"mixed_forest_b1024_batched_warp_adwin", warp, mixed});
  ForestParams prefix = warp;
  prefix.batch = 333;  // ticks not aligned with batch ends
  prefix.adwin_kernel = AdwinKernel::prefix;
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
  deferred.batch_order = BatchOrder::deferred;
  v.push_back({"mixed_forest_b777_adwin_delta_0.3_deferred", deferred, mixed});
  deferred = big;
  deferred.batch_order = BatchOrder::deferred;
  v.push_back({"mixed_forest_b4096_deferred", deferred, mixed});
  // naive Bayes leaves: the forest on the persistent engine ("auto" order resolves to deferred)
  // and a single tree on the batched engine
  ForestParams nb = forest;
  nb.batch = 1024;
  nb.leaf_prediction = LeafPrediction::nb;
  v.push_back({"mixed_forest_b1024_naive_bayes", nb, mixed});
  ForestParams nb_tree = tree;
  nb_tree.leaf_prediction = LeafPrediction::nb;
  v.push_back({"mixed_tree_b256_naive_bayes", nb_tree, mixed});
  // the Hoeffding bound's n without the inherited class counts (VFDT's n; the default "auto" is
  // MOA's / River's "total" on path default)
  ForestParams learned = forest;
  learned.batch = 777;
  learned.bound_weight = BoundWeight::learned;
  v.push_back({"mixed_forest_b777_bound_learned", learned, mixed});
  ForestParams learned_tree = tree;
  learned_tree.bound_weight = BoundWeight::learned;
  v.push_back({"mixed_tree_b256_bound_learned", learned_tree, mixed});
  ForestParams resets = big;
  resets.adwin_delta = 0.5;
  v.push_back({"mixed_forest_b4096_adwin_delta_0.5_stream", resets, mixed});
  // River's reset rule (every ADWIN cut resets, also when the error fell) on every ADWIN kernel:
  // the persistent engine's prefix ADWIN in both orders, the batched engine's simple and warp
  // kernels, and the faithful path
  for (ForestParams any : {forest, deferred, simple, warp, faithful}) {
    any.reset_rule = ResetRule::any;
    if (any.path != ForestPath::faithful && any.engine == Engine::persistent) any.batch = 1024;
    v.push_back({std::string("reset_any_") + to_string(any.engine) + "_" + to_string(any.adwin_kernel) + "_" +
                     to_string(any.path) + "_" + to_string(any.batch_order) + "_b" + std::to_string(any.batch),
                 any, any.path == ForestPath::faithful ? known : mixed});
  }
  return v;
}

// Small streams and parameters where the sequential engine and the independent reference must
// agree exactly: a single tree and small forests, B = 1 and small batches in both batch orders,
// drift resets on both rules, both bound weights, a node pool that fills up, and the faithful
// path's parameters on binary attributes.
std::vector<Case> small_cases() {
  std::vector<Case> v;
  const auto mixed = EncodedStream::encode(testing::mixed_drift_stream(6000, 31, 3000, 0.05));
  const auto known = EncodedStream::encode(testing::known_tree_stream(6000, 32, 0.2));
  ForestParams tree;
  tree.trees = 1;
  tree.bagging = tree.adwin = false;
  tree.grace = 50;
  tree.delta = 1e-3;  // splits within the short stream
  tree.batch = 1;
  v.push_back({"tree_b1", tree, mixed});
  tree.batch = 7;
  v.push_back({"tree_b7", tree, mixed});
  ForestParams learned = tree;
  learned.bound_weight = BoundWeight::learned;
  v.push_back({"tree_b7_bound_learned", learned, mixed});
  v.push_back({"binary_tree_b1", tree, known});
  ForestParams forest;
  forest.trees = 5;
  forest.grace = 50;
  forest.adwin_delta = 0.3;  // a detector that cuts often: resets in both orders
  forest.engine = Engine::persistent;  // the GPU runs batch_order "stream" there only
  for (int b : {1, 16}) {
    forest.batch = b;
    forest.batch_order = BatchOrder::stream;
    v.push_back({"forest_b" + std::to_string(b) + "_stream", forest, mixed});
    forest.batch_order = BatchOrder::deferred;
    v.push_back({"forest_b" + std::to_string(b) + "_deferred", forest, mixed});
  }
  ForestParams any = forest;
  any.reset_rule = ResetRule::any;
  any.batch_order = BatchOrder::stream;
  v.push_back({"forest_b16_stream_reset_any", any, mixed});
  ForestParams pool = forest;
  pool.max_nodes = 7;
  pool.features = 3;
  v.push_back({"forest_b16_deferred_full_pool", pool, mixed});
  ForestParams faithful = forest;
  faithful.path = ForestPath::faithful;  // bound "learned", deferred order, depth <= 6
  faithful.max_depth = 6;
  faithful.batch = 32;
  v.push_back({"binary_forest_faithful_b32", faithful, known});
  return v;
}

struct VfdtTraits {
  using Interface = ForestBackend;
  static constexpr const char* kFamily = "vfdt";
  static void register_backends(Registry& r) { register_vfdt(r); }
};
using VfdtEquivalence = gpudm::testing::IsEquivalentToRef<VfdtTraits>;

// Every backend against the independent reference on small streams (the reference backend
// included: this is what validates the oracle).
TEST_P(VfdtEquivalence, MatchesTheIndependentReference) {
  auto f = backend();
  for (const auto& c : small_cases()) {
    SCOPED_TRACE(c.name);
    testing::ReferenceForest ref(c.stream, c.params);
    Result want;
    want.pred = ref.run();
    want.snap = ref.snapshot();
    const Result got = run(*f, c);
    expect_same(want, got, backend_name() + " vs the independent reference");
  }
}

// Every backend against the reference backend on the large cases: every CUDA engine, ADWIN
// kernel, batch order and the faithful path (the CPU backends ignore the CUDA-only params).
TEST_P(VfdtEquivalence, MatchesTheReferenceBackend) {
  auto f = backend();
  auto ref = reference();
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    expect_same(run(*ref, c), run(*f, c), backend_name() + " vs " + ref->name());
  }
}
// A forest split in parts as ranks split it (first_tree / forest_trees): each part's trees' votes
// per class (process_votes, in two calls) add up to the whole forest's on the reference backend,
// for every case with more than one tree (every engine, batch order, ADWIN kernel and the faithful
// path on the CUDA instance), and the parts' trees are the whole forest's.
TEST_P(VfdtEquivalence, SplitForestVotesAddUpToTheWholeForest) {
  auto ref = reference();
  std::vector<Case> all = small_cases();
  for (Case& c : cases()) all.push_back(std::move(c));
  int checked = 0;
  for (const auto& c : all) {
    if (c.params.trees < 2) continue;
    SCOPED_TRACE(c.name);
    const std::size_t rows = c.stream.rows, C = static_cast<std::size_t>(c.stream.classes);
    const std::size_t half = rows / 2 / c.params.batch * c.params.batch;
    auto tally = [&](ForestBackend& f, const ForestParams& p, std::vector<std::uint32_t>& out) {
      PhaseTimer timer;  // a timer per backend: a phase is timed on the host or the device clock, not both
      f.configure(p);
      f.prepare(c.stream);
      f.reset();
      out.assign(rows * C, 0u);
      f.process_votes(0, half, out.data(), timer);
      f.process_votes(half, rows, out.data() + half * C, timer);
      return f.snapshot();
    };
    ForestParams whole = c.params;
    whole.threads = 3;
    std::vector<std::uint32_t> want;
    const ForestSnapshot want_snap = tally(*ref, whole, want);
    std::vector<std::uint32_t> sum(rows * C, 0u), part;
    const int cut = whole.trees / 2;  // two parts: [0, cut) and [cut, trees)
    std::vector<std::int32_t> nodes_per_tree;
    for (const auto& [first, n] : {std::pair<int, int>{0, cut}, std::pair<int, int>{cut, whole.trees - cut}}) {
      ForestParams p = whole;
      p.first_tree = first;
      p.trees = n;
      p.forest_trees = whole.trees;
      auto f = backend();
      const ForestSnapshot s = tally(*f, p, part);
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += part[i];
      nodes_per_tree.insert(nodes_per_tree.end(), s.n_nodes.begin(), s.n_nodes.end());
    }
    EXPECT_EQ(sum, want) << backend_name() << ": the parts' votes per class";
    EXPECT_EQ(nodes_per_tree, want_snap.n_nodes) << backend_name() << ": nodes per tree";
    ++checked;
  }
  EXPECT_GT(checked, 5);
}
// Rows [a, b) of an encoded stream, encoded alike: a later chunk of it.
EncodedStream rows_of(const EncodedStream& s, std::size_t a, std::size_t b) {
  EncodedStream c = s;
  c.rows = b - a;
  c.codes.assign(s.codes.begin() + a * s.attributes, s.codes.begin() + b * s.attributes);
  c.labels.assign(s.labels.begin() + a, s.labels.begin() + b);
  return c;
}

// A stream learned chunk by chunk (prepare() on the first, continue_with() on each later one, the
// chunks destroyed once processed, as a streaming caller does) gives the forest and predictions
// of learning it whole, on every backend and case (every CUDA engine, ADWIN kernel including the
// prefix one, whose running counts grow chunk by chunk, and the faithful path).
TEST_P(VfdtEquivalence, LearningAStreamInChunksIsLearningItWhole) {
  std::vector<Case> all = small_cases();
  for (Case& c : cases()) all.push_back(std::move(c));
  for (const auto& c : all) {
    SCOPED_TRACE(c.name);
    auto whole = backend();
    const Result want = run(*whole, c);
    const std::size_t rows = c.stream.rows, B = static_cast<std::size_t>(c.params.batch);
    // three chunks, the first the smallest (later ones outgrow the prepared buffers), the last
    // not a multiple of the batch
    const std::size_t a = rows / 5 / B * B, b = a + (rows - a) / 2 / B * B;
    ASSERT_TRUE(a > 0 && b > a && rows > b) << "a case too short for three chunks of its batch";
    ForestParams p = c.params;
    p.threads = 3;
    auto f = backend();
    f->configure(p);
    Result got;
    got.pred.resize(rows);
    PhaseTimer timer;
    {
      const EncodedStream first = rows_of(c.stream, 0, a);
      f->prepare(first);
      f->reset();
      f->process(0, a, got.pred.data(), timer);
    }
    for (const auto& [lo, hi] : {std::pair<std::size_t, std::size_t>{a, b}, std::pair<std::size_t, std::size_t>{b, rows}}) {
      const EncodedStream chunk = rows_of(c.stream, lo, hi);
      f->continue_with(chunk, lo);
      f->process(0, hi - lo, got.pred.data() + lo, timer);
      got.snap = f->snapshot();
    }
    expect_same(want, got, backend_name() + ": in chunks vs whole");
  }
}

// A chunk of another coding is refused, naming what differs.
TEST_P(VfdtEquivalence, AChunkOfAnotherCodingIsRefused) {
  const auto s = EncodedStream::encode(testing::mixed_drift_stream(2000, 5, 1000, 0.05));
  ForestParams p;
  p.trees = 3;
  p.batch = 16;
  auto f = backend();
  f->configure(p);
  f->prepare(s);
  f->reset();
  EncodedStream other = rows_of(s, 0, 100);
  other.classes += 1;
  EXPECT_THROW(f->continue_with(other, 2000), Error);
  other = rows_of(s, 0, 100);
  other.coding[0].values += 1;
  try {
    f->continue_with(other, 2000);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("encode_like"), std::string::npos) << e.what();
  }
}
// The online learner (the Python package's) on a Dataset in chunks of multiples of the batch:
// the predictions of the stream learned whole on the same backend; its saved model votes as the
// forest predicts (the first batch of the next chunk, predicted before any of it is learned, in
// the deferred order); the model file round-trips and refuses what is not one.
TEST_P(VfdtEquivalence, OnlineForestInChunksIsTheStreamLearnedWhole) {
  const Dataset data = testing::mixed_drift_stream(12000, 41, 6000, 0.05);
  OnlineSettings set = read_online_settings(nlohmann::json{{"trees", 7}, {"batch", 64}, {"grace", 50},
                                                           {"batch_order", "deferred"}});
  set.forest.threads = 3;
  Case whole{"whole", set.forest, EncodedStream::encode(data, set.encoding)};
  whole.params.seed = 9;
  auto f = backend();
  const Result want = run(*f, whole);
  const Registry reg = vfdt_registry();
  OnlineForest online(reg, backend_name(), set, 9);
  std::vector<std::int32_t> got(data.rows());
  const std::size_t cuts[] = {0, 1984, 5120, 9024, data.rows()};  // the first >= bin_warmup rows: the same bins
  for (int k = 0; k < 4; ++k) {
    if (k == 3) {  // before the last chunk: the saved model votes as the forest predicts
      const nlohmann::json j = nlohmann::json::parse(online.model().dump());
      const ForestModel m = forest_model_from_json(j, "online.json");
      const EncodedStream next = EncodedStream::encode_like(data.slice(cuts[3], cuts[3] + 64), m.schema);
      std::vector<std::uint32_t> votes(next.rows * next.classes);
      snapshot_votes(m.trees, next, votes.data());
      for (std::size_t i = 0; i < next.rows; ++i)
        EXPECT_EQ(majority(votes.data() + i * next.classes, next.classes), want.pred[cuts[3] + i]) << "instance " << cuts[3] + i;
    }
    online.learn(data.slice(cuts[k], cuts[k + 1]), got.data() + cuts[k]);
  }
  EXPECT_EQ(online.seen(), data.rows());
  EXPECT_EQ(got, want.pred) << backend_name() << ": online in chunks vs the stream whole";
  // the model file does not depend on how a backend numbers its node pool: the reference's, byte for byte
  OnlineForest ref(reg, "sequential", set, 9);
  std::vector<std::int32_t> ref_pred(data.rows());
  for (int k = 0; k < 4; ++k) ref.learn(data.slice(cuts[k], cuts[k + 1]), ref_pred.data() + cuts[k]);
  EXPECT_EQ(online.model().dump(), ref.model().dump()) << backend_name();
  nlohmann::json bad = nlohmann::json::parse(online.model().dump());
  bad["trees"][0]["attr"][0] = 99;
  try {
    forest_model_from_json(bad, "bad.json");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
  bad = nlohmann::json::parse(online.model().dump());
  bad["version"] = 2;
  EXPECT_THROW(forest_model_from_json(bad, "bad.json"), Error);
  EXPECT_THROW(forest_model_from_json(nlohmann::json{{"format", "x"}}, "bad.json"), Error);
  // a leaf's counts row past the tree's nodes, a coding whose codes would pass its values: refused
  bad = nlohmann::json::parse(online.model().dump());
  bad["trees"][0] = {{"attr", {-1}}, {"child", {3}}, {"leaves", {{1, 2}, {1, 2}, {1, 2}, {1, 2}}}};
  EXPECT_THROW(forest_model_from_json(bad, "bad.json"), Error);
  bad = nlohmann::json::parse(online.model().dump());
  for (auto& c : bad["coding"])
    if (c["kind"] == "binned") c["edges"].push_back(1e30);
  EXPECT_THROW(forest_model_from_json(bad, "bad.json"), Error);
}
GPUDM_INSTANTIATE_EQUIVALENCE(VfdtEquivalence, VfdtTraits);

// The small cases are not vacuous: trees split and reset, the pool fills, both orders differ.
TEST(VfdtReference, SmallCasesSplitAndReset) {
  long long splits = 0, resets = 0;
  for (const auto& c : small_cases()) {
    testing::ReferenceForest ref(c.stream, c.params);
    ref.run();
    EXPECT_GT(ref.splits(), 0) << c.name;
    splits += ref.splits();
    resets += ref.resets();
    if (c.params.max_nodes == 7) {
      const ForestSnapshot s = ref.snapshot();
      for (int t = 0; t < c.params.trees; ++t) EXPECT_LE(s.n_nodes[t], 7);
    }
  }
  EXPECT_GT(splits, 30);
  EXPECT_GT(resets, 5);
}

TEST(VfdtEquivalence, ForestsGrowAndDriftInTheseCases) {
  // guards against a vacuous equivalence: the cases must actually split and reset
  const auto cs = cases();
  const Result r = run("sequential", cs[0]);
  EXPECT_GT(r.snap.splits, 20);
  EXPECT_GT(r.snap.resets, 0);
  // the faithful path must reset trees somewhere too (its reset restarts the detector: a case
  // without resets would let a CUDA reset that kept the old ADWIN window pass)
  bool faithful_resets = false;
  for (const auto& c : cs)
    if (c.params.path == ForestPath::faithful && c.params.adwin) faithful_resets = faithful_resets || run("sequential", c).snap.resets > 0;
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
  p.batch_order = BatchOrder::stream;
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
    p.batch_order = BatchOrder::deferred;
    const Result deferred = run("sequential", {"deferred", p, mixed});
    p.batch_order = BatchOrder::stream;
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
  p.reset_rule = ResetRule::any;
  const Result any = run("sequential", {"any", p, mixed});
  EXPECT_GT(any.snap.resets, rise.snap.resets);
  EXPECT_NE(any.pred, rise.pred);
}

TEST(VfdtEquivalence, NaiveBayesLeavesChangeTheVotes) {
  const auto mixed = EncodedStream::encode(testing::mixed_drift_stream(30000, 21, 15000, 0.05));
  ForestParams p;
  p.trees = 1;
  p.bagging = p.adwin = false;
  p.batch = 1;
  const Result mc = run("sequential", {"mc", p, mixed});
  p.leaf_prediction = LeafPrediction::nb;
  const Result nb = run("sequential", {"nb", p, mixed});
  std::size_t differ = 0;
  for (std::size_t i = 0; i < mc.pred.size(); ++i) differ += mc.pred[i] != nb.pred[i];
  EXPECT_GT(differ, 100u);
  EXPECT_EQ(mc.snap.checksum(), nb.snap.checksum());  // without drift resets the votes do not change the tree
}

TEST(VfdtEquivalence, BatchOrderResolvesFromTheParametersAlone) {
  ForestParams p;
  p.trees = 100;
  EXPECT_EQ(p.order(), BatchOrder::stream);  // persistent engine
  p.leaf_prediction = LeafPrediction::nb;
  EXPECT_EQ(p.order(), BatchOrder::deferred);
  p.leaf_prediction = LeafPrediction::mc;
  EXPECT_TRUE(p.bound_total());  // "auto" on path default
  p.path = ForestPath::faithful;
  EXPECT_FALSE(p.bound_total());
  p.bound_weight = BoundWeight::total;
  EXPECT_THROW(p.validate(10), Error);
  p.bound_weight = BoundWeight::automatic;
  p.path = ForestPath::compact;
  p.trees = 1;
  EXPECT_EQ(p.order(), BatchOrder::deferred);  // batched engine
  p.trees = 100;
  p.path = ForestPath::faithful;
  EXPECT_EQ(p.order(), BatchOrder::deferred);
  p.batch_order = BatchOrder::stream;
  try {
    p.validate(10);
    ADD_FAILURE() << "stream order accepted on path faithful";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch_order"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpudm::vfdt
