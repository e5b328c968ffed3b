// Least squares of calc_models (TSQR + Householder + rank rule) against a double-precision
// Eigen reference, on random and rank-deficient leaves.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include "algorithms/core/rng.hpp"
#include "algorithms/gmt/eval_steps.hpp"

using namespace gpudm;

namespace {

// Column-major [X | y] copy for least_squares_rank_rule.
std::vector<double> stacked(const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
  std::vector<double> s(static_cast<std::size_t>(X.rows() * (X.cols() + 1)));
  for (Eigen::Index j = 0; j < X.cols(); ++j)
    for (Eigen::Index i = 0; i < X.rows(); ++i) s[static_cast<std::size_t>(j * X.rows() + i)] = X(i, j);
  for (Eigen::Index i = 0; i < X.rows(); ++i) s[static_cast<std::size_t>(X.cols() * X.rows() + i)] = y(i);
  return s;
}

}  // namespace

TEST(GmtQr, FullRankMatchesEigenDoubleReference) {
  Rng rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const int m = 5 + static_cast<int>(rng.below(300)), p = 1 + static_cast<int>(rng.below(6));
    Eigen::MatrixXd X(m, p);
    Eigen::VectorXd y(m);
    for (int i = 0; i < m; ++i) {
      X(i, 0) = 1.0;
      for (int j = 1; j < p; ++j) X(i, j) = rng.uniform(-5, 5);
      y(i) = rng.uniform(-3, 3);
    }
    if (m < p) continue;
    const Eigen::VectorXd ref = X.colPivHouseholderQr().solve(y);
    const double ref_sse = (X * ref - y).squaredNorm();
    auto s = stacked(X, y);
    std::vector<double> c(static_cast<std::size_t>(p));
    double sse = -1;
    const int rank = gmt::least_squares_rank_rule(s.data(), m, p, 1e-9, c.data(), &sse);
    EXPECT_EQ(rank, p);
    for (int j = 0; j < p; ++j) EXPECT_NEAR(c[static_cast<std::size_t>(j)], ref(j), 1e-9 * (1 + std::fabs(ref(j))));
    EXPECT_NEAR(sse, ref_sse, 1e-9 * (1 + ref_sse));
  }
}

TEST(GmtQr, TsqrOfStackedBlocksEqualsOneQr) {
  Rng rng(5);
  const int m = 1000, p = 4;
  Eigen::MatrixXd X(m, p);
  Eigen::VectorXd y(m);
  for (int i = 0; i < m; ++i) {
    X(i, 0) = 1;
    for (int j = 1; j < p; ++j) X(i, j) = rng.uniform(0, 10);
    y(i) = 3 + 2 * X(i, 1) - X(i, 3) + rng.normal(0, 0.1);
  }
  // Blocks of 128 rows -> R factors stacked -> final solve.
  const int b = 128, w = p + 1;
  std::vector<double> stack;
  std::int64_t rows = 0;
  std::vector<std::vector<double>> rs;
  for (int r0 = 0; r0 < m; r0 += b) {
    const int mb = std::min(b, m - r0);
    auto blk = stacked(X.middleRows(r0, mb), y.segment(r0, mb));
    gmt::householder_qr(blk.data(), mb, w, mb);
    std::vector<double> r(static_cast<std::size_t>(w * w), 0.0);
    for (int j = 0; j < w; ++j)
      for (int i = 0; i <= j; ++i) r[static_cast<std::size_t>(j * w + i)] = blk[static_cast<std::size_t>(j * mb + i)];
    rs.push_back(r);
    rows += w;
  }
  std::vector<double> s(static_cast<std::size_t>(rows * w));
  for (std::size_t k = 0; k < rs.size(); ++k)
    for (int j = 0; j < w; ++j)
      for (int i = 0; i < w; ++i) s[static_cast<std::size_t>(j * rows + static_cast<std::int64_t>(k) * w + i)] = rs[k][static_cast<std::size_t>(j * w + i)];
  std::vector<double> c(p);
  double sse = 0;
  gmt::least_squares_rank_rule(s.data(), rows, p, 1e-9, c.data(), &sse);
  const Eigen::VectorXd ref = X.colPivHouseholderQr().solve(y);
  for (int j = 0; j < p; ++j) EXPECT_NEAR(c[static_cast<std::size_t>(j)], ref(j), 1e-9);
  EXPECT_NEAR(sse, (X * ref - y).squaredNorm(), 1e-8);
}

TEST(GmtQr, RankDeficientLeavesDropColumnsDeterministically) {
  Rng rng(9);
  const int m = 50;
  Eigen::MatrixXd X(m, 5);
  Eigen::VectorXd y(m);
  for (int i = 0; i < m; ++i) {
    X(i, 0) = 1;
    X(i, 1) = rng.uniform(0, 1);
    X(i, 2) = 4.0;                 // constant column: in the span of the intercept
    X(i, 3) = 2.0 * X(i, 1) + 1.0;  // collinear with intercept and x1
    X(i, 4) = rng.uniform(0, 1);
    y(i) = 1.0 + 3.0 * X(i, 1) - 2.0 * X(i, 4);
  }
  auto s = stacked(X, y);
  std::vector<double> c(5);
  double sse = -1;
  const int rank = gmt::least_squares_rank_rule(s.data(), m, 5, 1e-9, c.data(), &sse);
  EXPECT_EQ(rank, 3);
  EXPECT_EQ(c[2], 0.0);  // dropped: constant
  EXPECT_EQ(c[3], 0.0);  // dropped: collinear (the later column of a dependent set goes)
  EXPECT_NEAR(c[0], 1.0, 1e-9);
  EXPECT_NEAR(c[1], 3.0, 1e-9);
  EXPECT_NEAR(c[4], -2.0, 1e-9);
  EXPECT_NEAR(sse, 0.0, 1e-12);
}

TEST(GmtQr, FewerRowsThanColumnsKeepsOnlyWhatTheRowsDetermine) {
  Eigen::MatrixXd X(2, 4);
  X << 1, 2, 3, 4,  //
      1, 5, 1, 0;
  Eigen::VectorXd y(2);
  y << 1, 2;
  auto s = stacked(X, y);
  std::vector<double> c(4);
  double sse = -1;
  EXPECT_EQ(gmt::least_squares_rank_rule(s.data(), 2, 4, 1e-9, c.data(), &sse), 2);
  EXPECT_EQ(c[2], 0.0);
  EXPECT_EQ(c[3], 0.0);
  EXPECT_NEAR(c[0] + 2 * c[1], 1.0, 1e-12);
  EXPECT_NEAR(c[0] + 5 * c[1], 2.0, 1e-12);
  EXPECT_NEAR(sse, 0.0, 1e-20);
}

TEST(GmtQr, ZeroRowsGiveZeroModel) {
  std::vector<double> s;
  std::vector<double> c(3, 7.0);
  double sse = -1;
  EXPECT_EQ(gmt::least_squares_rank_rule(s.data(), 0, 3, 1e-9, c.data(), &sse), 0);
  for (double v : c) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(sse, 0.0);
}

// The degrees-of-freedom guard keeps the first max_params columns (intercept first) and drops the
// rest like the rank rule: 5 rows, intercept + 4 attributes fit exactly without it; with
// max_params = 2 only the intercept and the first attribute remain and the residual is not zero.
TEST(GmtQr, MaxParamsDropsLaterColumns) {
  gpudm::Rng rng(11);
  const std::int64_t m = 5;
  const int p = 5;  // intercept + 4 attributes
  std::vector<double> x(static_cast<std::size_t>(m * p)), y(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) {
    x[static_cast<std::size_t>(i)] = 1.0;
    for (int j = 1; j < p; ++j) x[static_cast<std::size_t>(j * m + i)] = rng.uniform(-1.0, 1.0);
    y[static_cast<std::size_t>(i)] = rng.uniform(-1.0, 1.0);
  }
  auto stack = [&] {
    std::vector<double> s(x);
    s.insert(s.end(), y.begin(), y.end());
    return s;
  };
  std::vector<double> c(p), s = stack();
  double sse = -1;
  EXPECT_EQ(gmt::least_squares_rank_rule(s.data(), m, p, 1e-9, c.data(), &sse), 5);
  EXPECT_NEAR(sse, 0.0, 1e-20);
  s = stack();
  EXPECT_EQ(gmt::least_squares_rank_rule(s.data(), m, p, 1e-9, c.data(), &sse, 2), 2);
  EXPECT_GT(sse, 1e-6);
  EXPECT_NE(c[0], 0.0);
  EXPECT_NE(c[1], 0.0);
  EXPECT_EQ(c[2], 0.0);
  EXPECT_EQ(c[3], 0.0);
  EXPECT_EQ(c[4], 0.0);
}
