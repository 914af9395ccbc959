#include "numerics/banded_cholesky.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

using trainplan::numerics::BandedCholesky;

namespace {

// A random symmetric positive-definite matrix with half-band w, dense and banded.
void random_band(size_t n, size_t w, int seed, Eigen::MatrixXd& dense, BandedCholesky& band) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  dense = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i >= w ? i - w : 0; j < i; ++j) {
      double v = u(rng);
      dense(i, j) = dense(j, i) = v;
      band.add(i, j, v);
    }
  for (size_t i = 0; i < n; ++i) {  // diagonally dominant
    double v = 2.0 * static_cast<double>(w) + 1 + u(rng);
    dense(i, i) = v;
    band.add(i, i, v);
  }
}

}  // namespace

TEST(BandedCholesky, SolvesAsDenseCholesky) {
  for (size_t w : {0u, 1u, 3u, 7u}) {
    const size_t n = 40;
    Eigen::MatrixXd dense;
    BandedCholesky band(n, w);
    random_band(n, w, static_cast<int>(w) + 1, dense, band);
    ASSERT_TRUE(band.factor());
    std::vector<double> b(n);
    for (size_t i = 0; i < n; ++i) b[i] = std::sin(1.0 + static_cast<double>(i));
    auto x = band.solve(b);
    Eigen::VectorXd ref = dense.llt().solve(Eigen::Map<Eigen::VectorXd>(b.data(), static_cast<Eigen::Index>(n)));
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(x[i], ref(static_cast<Eigen::Index>(i)), 1e-10) << "w=" << w;
  }
}

TEST(BandedCholesky, BandOfTheInverseMatchesTheDenseInverse) {
  const size_t n = 25, w = 3;
  Eigen::MatrixXd dense;
  BandedCholesky band(n, w);
  random_band(n, w, 4, dense, band);
  ASSERT_TRUE(band.factor());
  band.invert_band();
  const Eigen::MatrixXd inv = dense.inverse();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i; j < n && j <= i + w; ++j) {
      std::vector<std::pair<int, double>> ei = {{static_cast<int>(i), 1.0}}, both = {{static_cast<int>(i), 1.0}, {static_cast<int>(j), 1.0}};
      const double sii = band.inverse_quadratic_banded(ei);
      EXPECT_NEAR(sii, inv(i, i), 1e-12);
      if (j > i) {  // (e_i + e_j)^T S (e_i + e_j) = S_ii + S_jj + 2 S_ij
        EXPECT_NEAR(band.inverse_quadratic_banded(both), inv(i, i) + inv(j, j) + 2 * inv(i, j), 1e-12);
      }
    }
}

TEST(BandedCholesky, RejectsAMatrixThatIsNotPositiveDefinite) {
  BandedCholesky band(3, 1);
  band.add(0, 0, 1);
  band.add(1, 1, 1);
  band.add(2, 2, 1);
  band.add(1, 0, 2);  // [[1,2],[2,1]] block: indefinite
  EXPECT_FALSE(band.factor());
}
