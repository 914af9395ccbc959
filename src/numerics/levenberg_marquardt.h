// Bounded nonlinear least squares: min sum_i r_i(x)^2 subject to lo <= x <= hi,
// by Levenberg-Marquardt with Marquardt's diagonal scaling and projection of
// each step onto the box. Small problems only (a handful of parameters); the
// Jacobian is taken by forward differences. Used to fit step-time models whose
// overlap exponent makes them nonlinear in their parameters.
#pragma once
#include <Eigen/Dense>
#include <functional>

namespace trainplan::numerics {

struct LmOptions {
  int max_iterations = 200;
  double tolerance = 1e-10;  // stop when the relative drop in cost is below this
};

struct LmResult {
  Eigen::VectorXd x;
  double cost = 0;  // sum of squared residuals at x
  int iterations = 0;
};

using ResidualFn = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;

// `fixed[j]` true keeps x(j) at its starting value. x0 is clamped into [lo, hi] first.
LmResult bounded_lm(const ResidualFn& residuals, Eigen::VectorXd x0, const Eigen::VectorXd& lo,
                    const Eigen::VectorXd& hi, const Eigen::Array<bool, Eigen::Dynamic, 1>& fixed,
                    const LmOptions& opts = {});

}  // namespace trainplan::numerics
