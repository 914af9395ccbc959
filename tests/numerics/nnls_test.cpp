#include "numerics/nnls.h"

#include <gtest/gtest.h>

#include <random>

using namespace trainplan::numerics;
using namespace trainplan::numerics;

namespace {

// Brute force: the NNLS optimum is the unconstrained least-squares solution
// on its support, so the best non-negative subset solution is the optimum.
double brute_force_residual(const Eigen::MatrixXd& A, const Eigen::VectorXd& b) {
  const int n = static_cast<int>(A.cols());
  double best = b.norm();
  for (int mask = 1; mask < (1 << n); ++mask) {
    std::vector<int> cols;
    for (int j = 0; j < n; ++j)
      if (mask & (1 << j)) cols.push_back(j);
    Eigen::MatrixXd Ap(A.rows(), static_cast<Eigen::Index>(cols.size()));
    for (size_t k = 0; k < cols.size(); ++k) Ap.col(k) = A.col(cols[k]);
    Eigen::VectorXd z = Ap.colPivHouseholderQr().solve(b);
    if ((z.array() < -1e-12).any()) continue;
    best = std::min(best, (Ap * z - b).norm());
  }
  return best;
}

}  // namespace

TEST(Nnls, RecoversNonNegativeTruthExactly) {
  Eigen::MatrixXd A(4, 2);
  A << 1, 0, 0, 1, 1, 1, 2, 1;
  Eigen::VectorXd x_true(2);
  x_true << 2, 3;
  auto r = nnls(A, A * x_true);
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR(r.x(0), 2, 1e-10);
  EXPECT_NEAR(r.x(1), 3, 1e-10);
  EXPECT_NEAR(r.residual, 0, 1e-10);
}

TEST(Nnls, ClampsNegativeComponentToZero) {
  // Unconstrained solution is (1, -1); the constrained one sets x2 = 0.
  Eigen::MatrixXd A = Eigen::MatrixXd::Identity(2, 2);
  Eigen::VectorXd b(2);
  b << 1, -1;
  auto r = nnls(A, b);
  EXPECT_NEAR(r.x(0), 1, 1e-12);
  EXPECT_EQ(r.x(1), 0);
  EXPECT_NEAR(r.residual, 1, 1e-12);
}

TEST(Nnls, MatchesBruteForceOnRandomProblems) {
  std::mt19937 rng(7);
  std::normal_distribution<double> g(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    int m = 3 + trial % 6, n = 1 + trial % 5;
    Eigen::MatrixXd A(m, n);
    Eigen::VectorXd b(m);
    for (int i = 0; i < m; ++i) {
      b(i) = g(rng);
      for (int j = 0; j < n; ++j) A(i, j) = g(rng);
    }
    auto r = nnls(A, b);
    ASSERT_TRUE(r.converged);
    EXPECT_TRUE((r.x.array() >= 0).all());
    EXPECT_NEAR(r.residual, brute_force_residual(A, b), 1e-8) << "trial " << trial;
    // KKT: the gradient is <= 0 where x = 0, and ~0 where x > 0.
    Eigen::VectorXd w = A.transpose() * (b - A * r.x);
    for (int j = 0; j < n; ++j) {
      if (r.x(j) > 0) EXPECT_NEAR(w(j), 0, 1e-8);
      else EXPECT_LE(w(j), 1e-8);
    }
  }
}

// Optimus's speed model: a column of M / w (tens of thousands) beside columns
// of order one, and a coefficient of 2e-6 s per sample on it. With an
// absolute tolerance scaled by ||A||_1 that coefficient was taken for zero
// and the fit went to one wrong term; scaling b by 5000 changed the answer.
TEST(Nnls, BadlyScaledColumnsAndUnitsOfBDoNotChangeTheSolution) {
  const double theta[5] = {2e-6, 0.05, 0.01, 0.001, 0.0005};
  Eigen::MatrixXd A(100, 5);
  Eigen::VectorXd b(100);
  int i = 0;
  for (int p = 1; p <= 10; ++p)
    for (int w = 1; w <= 10; ++w, ++i) {
      A.row(i) << 65536.0 / w, 1, double(w) / p, w, p;
      b(i) = A.row(i).dot(Eigen::Map<const Eigen::VectorXd>(theta, 5));
    }
  for (double units : {1.0, 5000.0, 1e-4}) {
    auto r = nnls(A, b * units);
    ASSERT_TRUE(r.converged) << units;
    for (int j = 0; j < 5; ++j) EXPECT_NEAR(r.x(j), theta[j] * units, 1e-9 * theta[j] * units) << units << " " << j;
  }
}

TEST(Nnls, RejectsMismatchedShapesAndNaN) {
  Eigen::MatrixXd A = Eigen::MatrixXd::Identity(2, 2);
  EXPECT_THROW(nnls(A, Eigen::VectorXd::Zero(3)), std::invalid_argument);
  A(0, 0) = std::nan("");
  EXPECT_THROW(nnls(A, Eigen::VectorXd::Zero(2)), std::invalid_argument);
}
