// The GA learner: learns a separable problem, is deterministic per seed, backend-independent.
#include <gtest/gtest.h>

#include "algorithms/pittsburgh/ga.hpp"
#include "test_util.hpp"

using namespace gpudm;
using namespace gpudm::pittsburgh;

namespace {
// Class = 0 if x0 < 0, else 1 if x1 < 0, else 2: a three-rule decision list exists.
Dataset separable(std::size_t rows, std::uint64_t seed) {
  Dataset d("sep", Task::classification, rows,
            {{"x0", AttributeKind::numeric, {}}, {"x1", AttributeKind::numeric, {}}, {"x2", AttributeKind::numeric, {}}},
            {"a", "b", "c"});
  Rng rng(seed);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t c = 0; c < 3; ++c) d.at(i, c) = static_cast<float>(rng.uniform(-1, 1));
    d.set_label(i, d.at(i, 0) < 0 ? 0 : (d.at(i, 1) < 0 ? 1 : 2));
  }
  return d;
}
std::unique_ptr<RuleSetEvaluator> make(const std::string& b) {
  Registry r;
  register_pittsburgh(r);
  return r.create<RuleSetEvaluator>(kFamilyName, b);
}
}  // namespace

TEST(PittsburghGa, LearnsASeparableProblemDeterministically) {
  const Dataset d = separable(600, 3);
  GaParams p;
  p.population = 40;
  p.generations = 40;
  p.seed = 11;
  auto ev = make("sequential");
  ev->prepare(d);
  const GaResult a = run_ga(*ev, d, p);
  // A random decision list scores ~0.33-0.5; the GA must find most of the structure.
  EXPECT_GT(a.train_accuracy, 0.8);
  EXPECT_EQ(a.generations, 40);
  EXPECT_EQ(a.evaluations, 41u * 40u);
  ASSERT_EQ(a.best_fitness_history.size(), 40u);
  EXPECT_GE(a.best_fitness_history.back(), a.best_fitness_history.front());  // elitism
  const GaResult b = run_ga(*ev, d, p);
  EXPECT_EQ(b.train_accuracy, a.train_accuracy);
  EXPECT_EQ(b.best.rules.size(), a.best.rules.size());
#ifdef GPUDM_HAVE_OPENMP
  auto omp = make("openmp");
  omp->prepare(d);
  const GaResult c = run_ga(*omp, d, p);
  EXPECT_EQ(c.train_accuracy, a.train_accuracy);
  EXPECT_EQ(c.best_fitness, a.best_fitness);
#endif
  EXPECT_DOUBLE_EQ(accuracy_of(*ev, a.best), a.train_accuracy);
}
