#include "numerics/gaussian_process.h"

#include <cmath>
#include <stdexcept>

namespace trainplan::numerics {

double GaussianProcess::kernel(double a, double b) const {
  double d = (a - b) / p_.length_scale;
  return std::exp(-0.5 * d * d);
}

void GaussianProcess::fit(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.empty() || x.size() != y.size()) throw std::invalid_argument("GaussianProcess::fit: need matching, non-empty x and y");
  const int n = static_cast<int>(x.size());
  x_ = x;
  mean_ = 0;
  for (double v : y) mean_ += v;
  mean_ /= n;
  double var = 0;
  for (double v : y) var += (v - mean_) * (v - mean_);
  scale_ = n > 1 && var > 0 ? std::sqrt(var / n) : 1.0;
  Eigen::MatrixXd k(n, n);
  Eigen::VectorXd ys(n);
  for (int i = 0; i < n; ++i) {
    ys(i) = (y[i] - mean_) / scale_;
    for (int j = 0; j < n; ++j) k(i, j) = kernel(x[i], x[j]);
    k(i, i) += p_.noise;
  }
  chol_.compute(k);
  alpha_ = chol_.solve(ys);
}

std::pair<double, double> GaussianProcess::predict(double x) const {
  const int n = static_cast<int>(x_.size());
  Eigen::VectorXd ks(n);
  for (int i = 0; i < n; ++i) ks(i) = kernel(x, x_[i]);
  double mu = ks.dot(alpha_);
  double var = 1.0 - ks.dot(chol_.solve(ks));
  return {mean_ + scale_ * mu, scale_ * std::sqrt(std::max(var, 0.0))};
}

double expected_improvement(double mu, double sd, double best) {
  double gain = mu - best;
  if (sd <= 1e-12) return std::max(gain, 0.0);
  double z = gain / sd;
  double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  return gain * cdf + sd * pdf;
}

}  // namespace trainplan::numerics
