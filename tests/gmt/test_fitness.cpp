// BIC and the weighted fitness Eq. (2) against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/gmt/ea.hpp"
#include "algorithms/gmt/params.hpp"

using namespace gpudm::gmt;

TEST(GmtFitness, BicMatchesHandComputedValue) {
  FitnessSpec f;  // bic, k = 2(Q+W)
  // n = 100, SSE = 25 -> -2lnL = 100 (ln 2pi + ln 0.25 + 1); Q = 3, W = 4 -> k = 14
  const double expect = 100.0 * (std::log(2.0 * M_PI) + std::log(0.25) + 1.0) + std::log(100.0) * 14.0;
  EXPECT_NEAR(fitness_value(f, 25.0, 100, 3, 2, 4), expect, 1e-9);
  f.bic_k = BicK::q_plus_w;
  EXPECT_NEAR(fitness_value(f, 25.0, 100, 3, 2, 4), expect - std::log(100.0) * 7.0, 1e-9);
  f.bic_k = BicK::w_plus_3q_minus_2;
  EXPECT_NEAR(fitness_value(f, 25.0, 100, 3, 2, 4), expect - std::log(100.0) * (14.0 - 11.0), 1e-9);
  f.bic_k = BicK::internal_plus_w;
  EXPECT_NEAR(fitness_value(f, 25.0, 100, 3, 2, 4), expect - std::log(100.0) * (14.0 - 6.0), 1e-9);
}

TEST(GmtFitness, BicIsFiniteForAPerfectFit) {
  FitnessSpec f;
  f.mse_floor = 1e-12;
  const double v = fitness_value(f, 0.0, 1000, 5, 4, 5);
  EXPECT_TRUE(std::isfinite(v));
  EXPECT_NEAR(v, 1000.0 * (std::log(2.0 * M_PI) + std::log(1e-12) + 1.0) + std::log(1000.0) * 20.0, 1e-6);
}

TEST(GmtFitness, WeightedEq2MatchesHandComputedValueAndIsMinimised) {
  FitnessSpec f;
  f.kind = FitnessKind::weighted;
  f.alpha = 0.001;
  // SSE/n = 0.5 -> 1 - 1/1.5 = 1/3; k = internal 2 + W 4 = 6 -> + 0.006
  EXPECT_NEAR(fitness_value(f, 50.0, 100, 3, 2, 4), 1.0 / 3.0 + 0.006, 1e-12);
  // Smaller error and smaller trees give smaller values: minimised.
  EXPECT_LT(fitness_value(f, 10.0, 100, 3, 2, 4), fitness_value(f, 50.0, 100, 3, 2, 4));
  EXPECT_LT(fitness_value(f, 50.0, 100, 2, 1, 4), fitness_value(f, 50.0, 100, 3, 2, 4));
}

TEST(GmtFitness, AutoSwitchesAtOneMillionRows) {
  const GmtCase c = read_case(nlohmann::json{{"fitness", "auto"}});
  EXPECT_EQ(ea_params(c, 999999).fitness.kind, FitnessKind::bic);
  EXPECT_EQ(ea_params(c, 1000000).fitness.kind, FitnessKind::weighted);
  EXPECT_EQ(ea_params(read_case(nlohmann::json{{"fitness", "weighted"}}), 10).fitness.kind, FitnessKind::weighted);
  EXPECT_EQ(ea_params(read_case(nlohmann::json{{"bic_k", "W+3Q-2"}}), 10).fitness.bic_k, BicK::w_plus_3q_minus_2);
  EXPECT_THROW(read_case(nlohmann::json{{"fitness", "aic"}}), gpudm::Error);
  EXPECT_THROW(read_case(nlohmann::json{{"bic_k", "3Q"}}), gpudm::Error);
}
