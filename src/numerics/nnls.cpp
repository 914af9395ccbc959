#include "numerics/nnls.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/cancel.h"

namespace trainplan::numerics {

// Least squares on the columns in `passive`; other entries are zero.
static Eigen::VectorXd solve_on(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const std::vector<bool>& passive) {
  std::vector<int> cols;
  for (int j = 0; j < static_cast<int>(passive.size()); ++j)
    if (passive[j]) cols.push_back(j);
  // No column: the zero vector (a QR of no columns is undefined in Eigen).
  if (cols.empty()) return Eigen::VectorXd::Zero(A.cols());
  Eigen::MatrixXd Ap(A.rows(), static_cast<Eigen::Index>(cols.size()));
  for (size_t k = 0; k < cols.size(); ++k) Ap.col(static_cast<Eigen::Index>(k)) = A.col(cols[k]);
  Eigen::VectorXd zp = Ap.colPivHouseholderQr().solve(b);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(A.cols());
  for (size_t k = 0; k < cols.size(); ++k) z(cols[k]) = zp(static_cast<Eigen::Index>(k));
  return z;
}

NnlsResult nnls(const Eigen::MatrixXd& A_in, const Eigen::VectorXd& b_in, const NnlsOptions& opts) {
  if (A_in.rows() != b_in.size()) throw std::invalid_argument("nnls: A has " + std::to_string(A_in.rows()) +
                                                              " rows but b has " + std::to_string(b_in.size()));
  if (!A_in.allFinite() || !b_in.allFinite()) throw std::invalid_argument("nnls: A or b holds NaN or Inf");
  const int n = static_cast<int>(A_in.cols());
  NnlsResult res;
  res.x = Eigen::VectorXd::Zero(n);
  const double b_norm = b_in.stableNorm();
  if (n == 0 || b_norm == 0) {
    res.residual = b_norm;
    return res;
  }
  // Unit columns and a unit right-hand side (NnlsOptions): a zero column
  // keeps scale 1 and never enters, its gradient being 0.
  // stableNorm: a column past 1e154 would overflow norm()'s sum of squares.
  Eigen::VectorXd scale = A_in.colwise().stableNorm().transpose();
  for (int j = 0; j < n; ++j)
    if (scale(j) == 0) scale(j) = 1;
  const Eigen::MatrixXd A = A_in * scale.cwiseInverse().asDiagonal();
  const Eigen::VectorXd b = b_in / b_norm;
  const int max_iter = opts.max_iterations > 0 ? opts.max_iterations : 3 * n;
  const double tol = opts.tolerance > 0 ? opts.tolerance
                                        : 10 * std::numeric_limits<double>::epsilon() * std::max<double>(A.rows(), n);
  std::vector<bool> passive(n, false);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd w = A.transpose() * b;
  int iter = 0;
  while (true) {
    check_cancelled();
    // The most positive gradient entry among active (zero) variables enters.
    int t = -1;
    double best = tol;
    for (int j = 0; j < n; ++j)
      if (!passive[j] && w(j) > best) best = w(j), t = j;
    if (t < 0) break;
    passive[t] = true;
    // Inner loop: keep the passive solution feasible.
    while (true) {
      if (++iter > max_iter) {
        res.converged = false;
        break;
      }
      Eigen::VectorXd z = solve_on(A, b, passive);
      bool feasible = true;
      for (int j = 0; j < n; ++j)
        if (passive[j] && z(j) <= tol) feasible = false;
      if (feasible) {
        x = z;
        break;
      }
      // Step from x toward z as far as feasibility allows. Only the
      // variables that fall (x > z) bound the step; a variable at 0 that z
      // leaves at or below 0 bounds it at 0.
      double alpha = std::numeric_limits<double>::infinity();
      for (int j = 0; j < n; ++j)
        if (passive[j] && z(j) <= tol) alpha = std::min(alpha, x(j) > z(j) ? x(j) / (x(j) - z(j)) : 0.0);
      alpha = std::clamp(alpha, 0.0, 1.0);
      x += alpha * (z - x);
      for (int j = 0; j < n; ++j)
        if (passive[j] && std::abs(x(j)) <= tol) {
          passive[j] = false;
          x(j) = 0;
        }
    }
    if (!res.converged) break;
    w = A.transpose() * (b - A * x);
  }
  for (int j = 0; j < n; ++j) res.x(j) = std::max(0.0, x(j)) * b_norm / scale(j);
  res.iterations = iter;
  res.residual = (A_in * res.x - b_in).norm();
  return res;
}

}  // namespace trainplan::numerics
