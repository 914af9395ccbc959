// The standard normal distribution's quantile: z with P(Z <= z) = p, for
// 0 < p < 1, by bisection on std::erfc to within 1e-12 (the call is rare:
// once per interval, not per sample). NaN outside (0, 1).
#pragma once
#include <cmath>

namespace trainplan::numerics {

inline double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) return NAN;
  double lo = -40, hi = 40;
  while (hi - lo > 1e-12) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace trainplan::numerics
