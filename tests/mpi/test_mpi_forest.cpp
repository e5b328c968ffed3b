// The streaming forest split over MPI ranks (tree-parallel, sharded_forest.hpp). Every
// rank learns its block of the trees over the whole stream; the summed votes must give one
// process's predictions exactly, and the ranks' splits and resets add up to one process's.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/vfdt/sharded_forest.hpp"
#include "algorithms/core/rng.hpp"

namespace gpudm {
void register_vfdt(Registry& r);
}

namespace gpudm::vfdt {
namespace {

Registry& registry() {
  static Registry r = [] {
    Registry x;
    register_vfdt(x);
    return x;
  }();
  return r;
}

// A learnable stream: 7 attributes on a grid, the class a function of three of them, 10 % noise.
Dataset stream_data(std::size_t rows, std::uint64_t seed) {
  std::vector<Attribute> attrs(7);
  for (std::size_t a = 0; a < attrs.size(); ++a) {
    char name[16];  // (not "a" + std::to_string(a): GCC 12's -Wrestrict misfires on that once inlined)
    std::snprintf(name, sizeof name, "a%zu", a);
    attrs[a].name = name;
  }
  Dataset d("forest_test", Task::classification, rows, attrs, {"x", "y", "z"});
  Rng rng(seed);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t a = 0; a < attrs.size(); ++a) d.at(r, a) = static_cast<float>(rng.below(10));
    int k = d.at(r, 0) < 5 ? 0 : (d.at(r, 2) < 3 ? 1 : 2);
    if (d.at(r, 5) > 7 && k == 2) k = 0;
    if (rng.bernoulli(0.1)) k = static_cast<int>(rng.below(3));
    d.set_label(r, k);
  }
  d.source = "generator";
  d.path = "test";
  return d;
}

TEST(MpiForest, PredictionsEqualOneProcessAtAnyRankCount) {
  Comm& c = world();
  const Dataset d = stream_data(6000, 77);
  const EncodedStream s = EncodedStream::encode(d);
  // (cuda: where a device is present — the GPU machine; every rank shares it)
  for (const char* backend : {"sequential", "openmp", "cuda"})
    // "auto" with 20 trees: every rank holds fewer than kPersistentMinTrees of them, and the order
    // must still resolve from the whole forest (not from the rank's block).
    for (const BatchOrder order : {BatchOrder::deferred, BatchOrder::stream, BatchOrder::automatic}) {
      if (!registry().info("vfdt", backend).available) continue;
      const int trees = order == BatchOrder::automatic ? 20 : 7;
      std::ostringstream what;  // (not a chain of string +: GCC 12's -Wrestrict misfires on it here)
      what << backend << (order == BatchOrder::stream ? " stream order" : order == BatchOrder::deferred ? " deferred" : " auto order")
           << ", " << trees << " trees, " << c.size() << " ranks";
      SCOPED_TRACE(what.str());
      ForestParams p;
      p.trees = trees;
      p.batch = 100;
      p.grace = 50;
      p.delta = 1e-3;
      p.batch_order = order;
      // the GPU runs batch_order "stream" on the persistent engine only (7 trees resolve to batched);
      // the CPU backends ignore the engine
      if (order == BatchOrder::stream) p.engine = Engine::persistent;
      p.adwin_delta = 0.05;
      p.threads = 1;
      auto one = registry().create<ForestBackend>("vfdt", "sequential");
      one->configure(p);
      one->prepare(s);
      one->reset();
      ShardedForest ranks(registry().create<ForestBackend>("vfdt", backend), c);
      ranks.configure(p);
      ranks.prepare(s);
      ranks.reset();
      std::vector<std::int32_t> a(s.rows), b(s.rows);
      // one timer each: a phase is timed on one clock (the CPU backend's on the host, the CUDA
      // one's on the device), and a timer refuses a phase name on both
      PhaseTimer t_one, t_ranks;
      for (std::size_t b0 = 0; b0 < s.rows; b0 += 2000) {  // several process() calls
        const std::size_t b1 = std::min(s.rows, b0 + 2000);
        one->process(b0, b1, a.data() + b0, t_one);
        ranks.process(b0, b1, b.data() + b0, t_ranks);
      }
      EXPECT_EQ(a, b);
      const ForestSnapshot whole = one->snapshot(), gathered = ranks.snapshot();
      EXPECT_EQ(gathered.diff(whole), "");  // every tree, gathered from the ranks
      EXPECT_EQ(gathered.checksum(), whole.checksum());
      EXPECT_EQ(gathered.splits, whole.splits);
      EXPECT_EQ(gathered.resets, whole.resets);
      EXPECT_GT(whole.splits, trees) << "the case is what it claims: the trees grow";
      EXPECT_EQ(ranks.first_tree(), static_cast<int>(shard(static_cast<std::size_t>(trees), c.rank(), c.size()).first));
    }
}

TEST(MpiForest, MoreRanksThanTreesIsAClearError) {
  Comm& c = world();
  if (c.size() == 1) GTEST_SKIP() << "needs more than one rank";
  ShardedForest ranks(registry().create<ForestBackend>("vfdt", "sequential"), c);
  ForestParams p;
  p.trees = c.size() - 1;
  try {
    ranks.configure(p);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("at least one tree per rank"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpudm::vfdt
