// Student's t distribution with nu > 0 degrees of freedom: its quantile, t
// with P(T <= t) = p, for 0 < p < 1. The distribution function integrates the
// density by Simpson's rule (the density is smooth, the call rare: once per
// fit); the quantile bisects it to within 1e-9. NaN for p outside (0, 1) or
// nu <= 0. Used where a noise scale is estimated from few residuals, so that
// an interval carries the estimate's own uncertainty.
#pragma once
#include <cmath>

namespace trainplan::numerics {

inline double student_t_cdf(double t, double nu) {
  if (!(nu > 0)) return NAN;
  if (t < 0) return 1 - student_t_cdf(-t, nu);
  const double log_c = std::lgamma(0.5 * (nu + 1)) - std::lgamma(0.5 * nu) - 0.5 * std::log(nu * M_PI);
  auto density = [&](double x) { return std::exp(log_c - 0.5 * (nu + 1) * std::log1p(x * x / nu)); };
  const int n = 4000;  // even
  const double h = t / n;
  double s = density(0) + density(t);
  for (int i = 1; i < n; ++i) s += (i % 2 ? 4 : 2) * density(i * h);
  return 0.5 + s * h / 3;
}

inline double student_t_quantile(double p, double nu) {
  if (!(p > 0 && p < 1) || !(nu > 0)) return NAN;
  if (p < 0.5) return -student_t_quantile(1 - p, nu);
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, nu) < p) hi *= 2;
  while (hi - lo > 1e-9 * std::max(1.0, hi)) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, nu) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace trainplan::numerics
