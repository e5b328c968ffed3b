// GPU: the four CUDA interpreters against the reference on shapes that exercise every launch
// path of the bit-level kernel (rows per thread 4/2/1, staged and unstaged tiles, tree groups)
// and the subtree kernel's opt-in shared memory (depth 10). Skips visibly without a device.
#include <gtest/gtest.h>

#include <algorithm>

#include "algorithms/core/rng.hpp"
#include "algorithms/core/machine.hpp"
#include "tests/subtree/helpers.hpp"

namespace gpudm::subtree {
namespace {

class SubtreeCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (machine::gpu_count() == 0) GTEST_SKIP() << "no CUDA device: " << machine::gpu_unavailable_reason();
    reg_ = test::subtree_registry();
    if (!reg_.info("subtree", "cuda").available) GTEST_SKIP() << reg_.info("subtree", "cuda").reason;
  }
  Registry reg_;
};

struct Shape {
  std::size_t rows, cols;
  int depth, trees;
};

TEST_F(SubtreeCuda, AllInterpretersAreEquivalentToReference) {
  auto interp = reg_.create<TreeInterpreter>("subtree", "cuda");
  const std::vector<Shape> shapes = {
      {70001, 10, 6, 16},   // many tiles, narrow: R = 4, staged
      {40000, 30, 5, 9},    // R = 2, staged
      {9000, 60, 4, 33},    // R = 1, staged; tree groups
      {5000, 130, 6, 5},    // too wide to stage: global loads
      {37, 3, 6, 128},      // one tile, one tree per block
      {2048, 7, 10, 3},     // subtree kernel with > 48 KB shared memory (postfix/mixed too)
      {4097, 5, 1, 70},
  };
  std::uint64_t seed = 500;
  for (const Shape& sh : shapes)
  for (const double missing : {0.02, 0.0}) {
    const Dataset d = test::random_dataset(sh.rows, sh.cols, ++seed, missing);
    const Population pop = generate_population(d, sh.trees, sh.depth, Rng(seed));
    const Coverage ref = reference_coverage(pop, d);
    interp->prepare(d);
    Coverage c;  // reused and poisoned: every word must be rewritten by every interpreter
    for (Strategy s : {Strategy::postfix, Strategy::mixed, Strategy::subtree, Strategy::best}) {
      if (s == Strategy::best && sh.depth > kMaxBitDepth) continue;
      interp->configure({s, 0});
      std::fill(c.bits.begin(), c.bits.end(), 0xA5A5A5A5u);
      PhaseTimer timer;
      interp->evaluate(pop, c, timer);
      EXPECT_EQ(first_difference(c, ref, d.rows()), "")
          << to_string(s) << " missing " << missing << " rows " << sh.rows << " cols " << sh.cols << " depth " << sh.depth << " trees " << sh.trees
          << " launch " << interp->describe().dump();
      EXPECT_GT(timer.seconds("interpret"), 0.0);
    }
  }
}

TEST_F(SubtreeCuda, PosterGridShapeMatchesSequential) {
  // One poster-sized case (population 128, 127 nodes) on 200k rows: CUDA best vs sequential.
  const Dataset d = test::random_dataset(200000, 28, 77, 0.0);
  const Population pop = generate_population(d, 128, 6, Rng(3));
  auto seq = reg_.create<TreeInterpreter>("subtree", "sequential");
  seq->configure({Strategy::mixed, 0});
  seq->prepare(d);
  Coverage want;
  PhaseTimer seq_timer, timer;  // host and device clocks: one timer each
  seq->evaluate(pop, want, seq_timer);
  auto gpu = reg_.create<TreeInterpreter>("subtree", "cuda");
  gpu->prepare(d);
  for (Strategy s : {Strategy::best, Strategy::subtree}) {
    gpu->configure({s, 0});
    Coverage got;
    gpu->evaluate(pop, got, timer);
    EXPECT_EQ(first_difference(got, want, d.rows()), "") << to_string(s);
  }
}

}  // namespace
}  // namespace gpudm::subtree
