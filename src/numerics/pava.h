// Isotonic and unimodal least-squares regression in one dimension by the
// pool-adjacent-violators algorithm (PAVA).
//
// Cost: O(n + m log m) to pool repeated x (hashing, then sorting the m
// distinct x), then O(m) for PAVA over them. A unimodal fit (rise then fall, or fall then rise) runs PAVA
// once forward and once backward, keeping the SSE of every prefix and suffix
// fit as it goes, picks the split with the least total SSE, and refits the two
// sides: still O(m) after pooling.
#pragma once
#include <string>
#include <vector>

namespace trainplan::numerics {

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

// The distinct values of `v` in increasing order, and each element's index
// among them: O(n) hashing plus O(m log m) for the m distinct values, so that
// sampled grids (few distinct batches or workers) need no O(n log n) sort.
struct ValueGroups {
  std::vector<double> values;  // distinct, increasing
  std::vector<size_t> counts;  // elements per value
  std::vector<int> group;      // per element: index into values
};
ValueGroups group_by_value(const std::vector<double>& v);

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

// pool_points(x, y, {}) of the points order[0], order[1], ... (indices into x
// and y, x non-decreasing along them; ties pooled in that order), without
// hashing: for callers that pool many subsets of one sorted set. Throws
// std::invalid_argument on an empty order, NaN/Inf, or an order that does not sort x.
PooledPoints pool_points_in_order(const std::vector<double>& x, const std::vector<double>& y,
                                  const std::vector<size_t>& order);
// The same with weights `w` (> 0; empty: all 1).
PooledPoints pool_points_in_order(const std::vector<double>& x, const std::vector<double>& y,
                                  const std::vector<double>& w, const std::vector<size_t>& order);

// Fits `shape`; the curve's sse counts every original point.
IsotonicCurve fit_isotonic(const PooledPoints& p, Shape shape);

// pool_points, then fit_isotonic.
IsotonicCurve fit_isotonic(const std::vector<double>& x, const std::vector<double>& y,
                           const std::vector<double>& w, Shape shape);

}  // namespace trainplan::numerics
