// The median of a sample; NaN for an empty one.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace trainplan {

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  const size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + m, v.end());
  const double hi = v[m];
  if (v.size() % 2) return hi;
  return 0.5 * (hi + *std::max_element(v.begin(), v.begin() + m));  // the lower middle: the largest below m
}

}  // namespace trainplan
