// A one-dimensional Gaussian-process regressor with an RBF kernel and
// expected improvement, for the Bayesian-optimisation baseline. Targets are
// standardised before fitting; predictions are returned in the original units.
#pragma once
#include <Eigen/Dense>
#include <utility>
#include <vector>

namespace trainplan::numerics {

struct GpParams {
  double length_scale = 0.25;  // RBF length scale, in the units of x
  double noise = 1e-4;         // noise variance added to the diagonal (standardised units)
};

class GaussianProcess {
 public:
  explicit GaussianProcess(GpParams p = {}) : p_(p) {}
  // Needs at least one point.
  void fit(const std::vector<double>& x, const std::vector<double>& y);
  // Posterior mean and standard deviation at x.
  std::pair<double, double> predict(double x) const;

 private:
  double kernel(double a, double b) const;
  GpParams p_;
  std::vector<double> x_;
  Eigen::VectorXd alpha_;
  Eigen::LLT<Eigen::MatrixXd> chol_;
  double mean_ = 0, scale_ = 1;
};

// Expected improvement over `best` for maximisation at a point with posterior
// mean `mu` and standard deviation `sd`.
double expected_improvement(double mu, double sd, double best);

}  // namespace trainplan::numerics
