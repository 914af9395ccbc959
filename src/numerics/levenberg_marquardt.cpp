#include "numerics/levenberg_marquardt.h"

#include <algorithm>
#include <cmath>

#include "core/cancel.h"

namespace trainplan::numerics {

LmResult bounded_lm(const ResidualFn& residuals, Eigen::VectorXd x, const Eigen::VectorXd& lo,
                    const Eigen::VectorXd& hi, const Eigen::Array<bool, Eigen::Dynamic, 1>& fixed,
                    const LmOptions& opts) {
  const int n = static_cast<int>(x.size());
  auto project = [&](Eigen::VectorXd v) {
    for (int j = 0; j < n; ++j) v(j) = fixed(j) ? x(j) : std::clamp(v(j), lo(j), hi(j));
    return v;
  };
  for (int j = 0; j < n; ++j) x(j) = std::clamp(x(j), lo(j), hi(j));
  Eigen::VectorXd r = residuals(x);
  double cost = r.squaredNorm();
  double lambda = 1e-3;
  LmResult res;
  for (int it = 0; it < opts.max_iterations; ++it) {
    check_cancelled();
    res.iterations = it + 1;
    // Forward-difference Jacobian; step away from the nearer bound.
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(r.size(), n);
    for (int j = 0; j < n; ++j) {
      if (fixed(j)) continue;
      double h = 1e-6 * std::max(std::abs(x(j)), 1e-6);
      if (x(j) + h > hi(j)) h = -h;
      Eigen::VectorXd xp = x;
      xp(j) += h;
      J.col(j) = (residuals(xp) - r) / h;
    }
    // Variables at a bound whose gradient pushes outward are held there.
    Eigen::VectorXd g = J.transpose() * r;
    Eigen::Array<bool, Eigen::Dynamic, 1> active = fixed;
    for (int j = 0; j < n; ++j)
      if (!fixed(j) && ((x(j) <= lo(j) && g(j) > 0) || (x(j) >= hi(j) && g(j) < 0))) active(j) = true;
    Eigen::MatrixXd H = J.transpose() * J;
    bool improved = false;
    for (int tries = 0; tries < 30 && !improved; ++tries) {
      Eigen::MatrixXd A = H;
      for (int j = 0; j < n; ++j) {
        if (active(j)) {
          A.row(j).setZero();
          A.col(j).setZero();
          A(j, j) = 1;
        } else {
          A(j, j) += lambda * std::max(H(j, j), 1e-12);
        }
      }
      Eigen::VectorXd rhs = -g;
      for (int j = 0; j < n; ++j)
        if (active(j)) rhs(j) = 0;
      Eigen::VectorXd step = A.ldlt().solve(rhs);
      if (!step.allFinite()) {
        lambda *= 10;
        continue;
      }
      Eigen::VectorXd xn = project(x + step);
      Eigen::VectorXd rn = residuals(xn);
      double cn = rn.allFinite() ? rn.squaredNorm() : INFINITY;
      if (cn < cost) {
        double drop = (cost - cn) / std::max(cost, 1e-300);
        x = xn, r = rn, cost = cn;
        lambda = std::max(lambda / 3, 1e-12);
        improved = true;
        if (drop < opts.tolerance) {
          res.x = x, res.cost = cost;
          return res;
        }
      } else {
        lambda *= 10;
      }
    }
    if (!improved) break;
  }
  res.x = x;
  res.cost = cost;
  return res;
}

}  // namespace trainplan::numerics
