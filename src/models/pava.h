// Isotonic and unimodal least-squares regression in one dimension by the
// pool-adjacent-violators algorithm (PAVA).
//
// Cost: O(n log n) to sort and pool repeated x, then O(m) for PAVA over the m
// distinct x. A unimodal fit (rise then fall, or fall then rise) runs PAVA
// once forward and once backward, keeping the SSE of every prefix and suffix
// fit as it goes, picks the split with the least total SSE, and refits the two
// sides: still O(m) after the sort.
#pragma once
#include <string>
#include <vector>

namespace trainplan::models {

enum class Shape {
  kIncreasing,  // non-decreasing in x
  kDecreasing,  // non-increasing in x
  kPeak,        // non-decreasing, then non-increasing
  kValley,      // non-increasing, then non-decreasing
};

const char* to_string(Shape s);

// A fitted one-dimensional curve: knots (x, fitted y), linear between knots,
// constant beyond the first and the last knot.
struct IsotonicCurve {
  Shape shape = Shape::kIncreasing;
  std::vector<double> x;  // strictly increasing
  std::vector<double> y;  // fitted value at each knot
  double sse = 0;         // weighted squared error over the points fitted

  double predict(double at) const;
};

// PAVA on values already in x order (one per distinct x): the least-squares
// monotone sequence under weights `w` (> 0). Returns one fitted value per input.
std::vector<double> pava(const std::vector<double>& y, const std::vector<double>& w, bool increasing);

// Points pooled by distinct x, in x order: pool once, fit several shapes.
struct PooledPoints {
  std::vector<double> x;  // distinct, increasing
  std::vector<double> y;  // weighted mean of the points at x
  std::vector<double> w;  // total weight at x
  double within_sse = 0;  // weighted squared error of the points about their x's mean
};

// Pools points (x, y) with weights `w` (empty: all 1). Throws
// std::invalid_argument on empty or mismatched input, NaN/Inf, or weights <= 0.
PooledPoints pool_points(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w);

// Fits `shape`; the curve's sse counts every original point.
IsotonicCurve fit_isotonic(const PooledPoints& p, Shape shape);

// pool_points, then fit_isotonic.
IsotonicCurve fit_isotonic(const std::vector<double>& x, const std::vector<double>& y,
                           const std::vector<double>& w, Shape shape);

}  // namespace trainplan::models
