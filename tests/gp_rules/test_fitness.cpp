// The three fitness functions against hand-computed confusion matrices.
#include <gtest/gtest.h>

#include "algorithms/gp_rules/fitness.hpp"

namespace gpudm::gp_rules {
namespace {

rules::ConfusionMatrix cm(std::uint32_t tp, std::uint32_t tn, std::uint32_t fp, std::uint32_t fn) {
  rules::ConfusionMatrix m;
  m.tp = tp;
  m.tn = tn;
  m.fp = fp;
  m.fn = fn;
  return m;
}

TEST(GpFitness, Falco) {
  // nI = 100, right = 40 + 50 = 90, wrong = 6 + 4 = 10: 100 - (90 - 10) + 0.1 * 7 = 20.7
  EXPECT_NEAR(falco_fitness(cm(40, 50, 6, 4), 100, 7, 0.1), 20.7, 1e-12);
  // A perfect rule costs only its size: 0 + 0.05 * 3
  EXPECT_NEAR(falco_fitness(cm(30, 70, 0, 0), 100, 3, 0.05), 0.15, 1e-12);
  // Everything wrong: 100 - (0 - 100) = 200
  EXPECT_NEAR(falco_fitness(cm(0, 0, 60, 40), 100, 4, 0.0), 200.0, 1e-12);
}

TEST(GpFitness, TanSensitivitySpecificity) {
  // w1 = 0.5, w2 = 2: Se = 40 / (40 + 0.5 * 4) = 40/42, Sp = 50 / (50 + 2 * 6) = 50/62
  const auto m = cm(40, 50, 6, 4);
  EXPECT_NEAR(sensitivity(m, 0.5), 40.0 / 42.0, 1e-12);
  EXPECT_NEAR(specificity(m, 2.0), 50.0 / 62.0, 1e-12);
  EXPECT_NEAR(tan_fitness(m, 0.5, 2.0), (40.0 / 42.0) * (50.0 / 62.0), 1e-12);
  EXPECT_NEAR(tan_fitness(m, 0.5, 2.0), 0.768049155, 1e-9);
  // w1 = w2 = 1: the usual Se * Sp = 0.8 * 0.9
  EXPECT_NEAR(tan_fitness(cm(8, 9, 1, 2), 1.0, 1.0), 0.72, 1e-12);
  // 0/0 counts 0: no positives, or no negatives
  EXPECT_EQ(tan_fitness(cm(0, 10, 0, 0), 1.0, 1.0), 0.0);
  EXPECT_EQ(tan_fitness(cm(10, 0, 0, 0), 1.0, 1.0), 0.0);
  EXPECT_EQ(tan_fitness(cm(10, 5, 0, 0), 1.0, 1.0), 1.0);
}

TEST(GpFitness, BojarczukSimplicity) {
  EXPECT_DOUBLE_EQ(simplicity(1, 63), 1.0);
  EXPECT_DOUBLE_EQ(simplicity(63, 63), 0.5);
  EXPECT_NEAR(simplicity(7, 63), 59.0 / 62.0, 1e-12);  // (63 - 3.5 - 0.5) / 62
  EXPECT_DOUBLE_EQ(simplicity(5, 1), 1.0);
  // Se = 40/44, Sp = 50/56, Sy = 59/62
  EXPECT_NEAR(bojarczuk_fitness(cm(40, 50, 6, 4), 7, 63), (40.0 / 44.0) * (50.0 / 56.0) * (59.0 / 62.0), 1e-12);
  EXPECT_NEAR(bojarczuk_fitness(cm(40, 50, 6, 4), 7, 63), 0.7724131, 1e-6);
}

}  // namespace
}  // namespace gpudm::gp_rules
