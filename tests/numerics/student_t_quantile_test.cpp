#include "numerics/student_t_quantile.h"

#include <gtest/gtest.h>

#include "numerics/normal_quantile.h"

using trainplan::numerics::normal_quantile;
using trainplan::numerics::student_t_cdf;
using trainplan::numerics::student_t_quantile;

// Tabled values (any statistics table): the 0.9 and 0.975 quantiles at 1, 2,
// 5 and 30 degrees of freedom; the 1-dof case is the Cauchy distribution,
// tan(pi (p - 1/2)) exactly.
TEST(StudentT, QuantilesMatchTheTables) {
  EXPECT_NEAR(student_t_quantile(0.9, 1), std::tan(M_PI * 0.4), 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 1), std::tan(M_PI * 0.475), 1e-5);
  EXPECT_NEAR(student_t_quantile(0.9, 2), 1.885618, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.302653, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.9, 5), 1.475884, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.1, 5), -1.475884, 1e-5);
  EXPECT_NEAR(student_t_cdf(0, 3), 0.5, 1e-12);
}

// Many degrees of freedom: the normal quantile; a non-integer count lies
// between its neighbours; nonsense gives NaN.
TEST(StudentT, TendsToTheNormalAndRejectsNonsense) {
  EXPECT_NEAR(student_t_quantile(0.9, 1e6), normal_quantile(0.9), 1e-5);
  const double a = student_t_quantile(0.9, 1), b = student_t_quantile(0.9, 1.5), c = student_t_quantile(0.9, 2);
  EXPECT_GT(a, b);
  EXPECT_GT(b, c);
  EXPECT_TRUE(std::isnan(student_t_quantile(0, 3)));
  EXPECT_TRUE(std::isnan(student_t_quantile(1, 3)));
  EXPECT_TRUE(std::isnan(student_t_quantile(0.9, 0)));
}
