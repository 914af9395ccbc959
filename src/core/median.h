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

// The weighted median: the least value at which the cumulative weight (in
// increasing order of value) reaches half the total, or the mean of it and
// the next value when it reaches half exactly; with unit weights, median().
// NaN for an empty sample. Weights > 0.
inline double weighted_median(const std::vector<double>& v, const std::vector<double>& w) {
  if (v.empty()) return NAN;
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  double total = 0;
  for (double x : w) total += x;
  const double half = 0.5 * total;
  double acc = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    acc += w[order[k]];
    if (acc >= half) return acc == half && k + 1 < order.size() ? 0.5 * (v[order[k + 1]] + v[order[k]]) : v[order[k]];
  }
  return v[order.back()];
}

}  // namespace trainplan
