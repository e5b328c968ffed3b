// The rule engine across MPI ranks. Run by ctest under mpiexec with 1, 2 and 3 ranks
// (label `mpi`). Every rank loads the same data, evaluates random populations through the sharded
// engine (its block of rows on its CPU backends) and compares the combined counts, coverage bits
// and GPops with a one-process evaluation of the whole dataset: identical at any rank count. Also
// the shard arithmetic and the collectives themselves (rank-order sums the same on every rank).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <iostream>

#include "algorithms/core/comm.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/rules/sharded.hpp"
#include "tests/rules/engine_helpers.hpp"

namespace gpudm::rules {
namespace {

Registry& registry() {
  static Registry r = [] {
    Registry x;
    register_rules(x);
    return x;
  }();
  return r;
}

TEST(MpiShard, BlocksCoverEveryRowOnceWithAlignedBoundaries) {
  for (std::size_t n : {0, 1, 31, 32, 33, 95, 1000, 4133})
    for (int size = 1; size <= 5; ++size) {
      std::size_t next = 0;
      for (int r = 0; r < size; ++r) {
        const auto [b, e] = shard(n, r, size, 32);
        EXPECT_EQ(b, next) << n << " " << r << "/" << size;
        EXPECT_LE(b, e);
        if (e != n) {
          EXPECT_EQ(e % 32, 0u) << n << " " << r << "/" << size;
        }
        next = e;
      }
      EXPECT_EQ(next, n);
    }
}

TEST(MpiComm, SumsAreExactOrInRankOrderAndTheSameOnEveryRank) {
  Comm& c = world();
  std::cerr << "[mpi] rank " << c.rank() << " of " << c.size() << " (" << c.kind() << ") on " << c.host() << "\n";
  if (const char* want = std::getenv("GPUDM_TEST_RANKS")) {
    EXPECT_EQ(c.size(), std::atoi(want)) << "not launched as the test asks";
  }
  std::vector<std::uint64_t> u{static_cast<std::uint64_t>(c.rank()) + 1, 1ull << 40};
  c.sum(u.data(), u.size(), "test sum");
  const auto s = static_cast<std::uint64_t>(c.size());
  EXPECT_EQ(u[0], s * (s + 1) / 2);
  EXPECT_EQ(u[1], s << 40);
  // Integer sums are MPI's all-reduce: modulo 2^bits, so they wrap as the rank-order sum does, and
  // a long vector (which the library splits into segments) gives every element's exact sum.
  std::vector<std::uint32_t> w{0xFFFFFFFFu, static_cast<std::uint32_t>(c.rank())};
  c.sum(w.data(), w.size(), "test wrapping sum");
  EXPECT_EQ(w[0], static_cast<std::uint32_t>(0xFFFFFFFFull * s));
  EXPECT_EQ(w[1], static_cast<std::uint32_t>(s * (s - 1) / 2));
  std::vector<std::uint32_t> big(1 << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint32_t>(i * 2654435761ull + static_cast<std::uint64_t>(c.rank()) * 1000003ull);
  c.sum(big.data(), big.size(), "test long sum");
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < big.size(); ++i) {
    std::uint32_t want = 0;
    for (int r = 0; r < c.size(); ++r) want += static_cast<std::uint32_t>(i * 2654435761ull + static_cast<std::uint64_t>(r) * 1000003ull);
    wrong += big[i] != want;
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(integer_sum_bytes(4000, 1), 0u);
  EXPECT_EQ(integer_sum_bytes(4000, 2), 4000u);
  EXPECT_EQ(integer_sum_bytes(4000, 4), 6000u);
  // A floating-point sum whose value depends on the order: rank order, the same bits everywhere.
  std::vector<double> d{c.rank() == 0 ? 1.0 : 1e-16};
  c.sum(d.data(), d.size(), "test double sum");
  double expect = 1.0;
  for (int r = 1; r < c.size(); ++r) expect += 1e-16;
  EXPECT_EQ(d[0], expect);
  const std::vector<std::string> hosts = c.gather_all(std::to_string(c.rank()), "test gather");
  ASSERT_EQ(hosts.size(), static_cast<std::size_t>(c.size()));
  for (int r = 0; r < c.size(); ++r) EXPECT_EQ(hosts[static_cast<std::size_t>(r)], std::to_string(r));
  EXPECT_EQ(c.max(static_cast<double>(c.rank()), "test max"), static_cast<double>(c.size() - 1));
}

TEST(MpiRuleEngine, CountsAndCoverageEqualOneProcessAtAnyRankCount) {
  Comm& c = world();
  std::uint64_t seed = 900;
  struct Shape {
    std::size_t rows, cols;
    int classes, depth;
    std::size_t rules;
  };
  for (const Shape& sh : {Shape{33, 4, 2, 3, 9}, Shape{100, 6, 3, 4, 20}, Shape{2049, 5, 7, 5, 30}, Shape{5000, 9, 4, 4, 25}})
    for (const char* backend : {"sequential", "openmp"}) {
      if (!registry().info(kEngineFamily, backend).available) continue;
      SCOPED_TRACE(std::string(backend) + " rows " + std::to_string(sh.rows) + ", " + std::to_string(c.size()) + " ranks");
      const Dataset d = test::random_dataset(sh.rows, sh.cols, sh.classes, ++seed, 0.02, true);
      const RulePopulation pop = test::random_population(d, sh.rules, sh.depth, seed);
      auto one = registry().create<RuleEvaluator>(kEngineFamily, "sequential");
      one->prepare(d);
      ShardedEvaluator ranks(registry().create<RuleEvaluator>(kEngineFamily, backend), c);
      ranks.prepare(d);
      for (const Want want : {Want::counts, Want::counts_and_coverage}) {
        PhaseTimer t;
        RuleCounts a, b;
        one->evaluate(pop, a, t, want);
        ranks.evaluate(pop, b, t, want);
        EXPECT_EQ(first_difference(b, a), "");
        EXPECT_EQ(b.gpops, a.gpops);
        EXPECT_EQ(b.class_rows, a.class_rows);
        EXPECT_EQ(b.checksum(), a.checksum());
      }
      EXPECT_EQ(ranks.describe().value("ranks", 0), c.size());
    }
}

// Run only by the mpi_rank_failure test (GPUDM_TEST_KILL_RANK set; ctest expects the launcher to
// fail, within its timeout): one rank dies before a collective; the others must not hang there.
TEST(MpiFailure, ARankThatDiesEndsEveryRank) {
  const char* k = std::getenv("GPUDM_TEST_KILL_RANK");
  if (!k) GTEST_SKIP() << "run by the mpi_rank_failure test";
  if (world().rank() == std::atoi(k)) {
    std::cerr << "[mpi] rank " << world().rank() << ": dying on purpose\n";
    std::_Exit(7);
  }
  world().barrier("a barrier after a rank died");
  FAIL() << "the barrier returned although a rank died";
}

// Run only by the mpi_rank_hang test: one rank stops answering (sleeps); the others' collective
// must end the run after GPUDM_MPI_TIMEOUT with the error naming the operation, not hang.
TEST(MpiFailure, ARankThatHangsTimesTheCollectiveOut) {
  const char* k = std::getenv("GPUDM_TEST_HANG_RANK");
  if (!k) GTEST_SKIP() << "run by the mpi_rank_hang test";
  if (world().rank() == std::atoi(k)) std::this_thread::sleep_for(std::chrono::seconds(60));
  world().barrier("a barrier while a rank hangs");
  FAIL() << "the barrier returned although a rank hangs";
}

}  // namespace
}  // namespace gpudm::rules
