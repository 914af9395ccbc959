#include "numerics/pava.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

namespace trainplan::numerics {

const char* to_string(Shape s) {
  switch (s) {
    case Shape::kIncreasing: return "increasing";
    case Shape::kDecreasing: return "decreasing";
    case Shape::kPeak: return "rise-then-fall";
    case Shape::kValley: return "fall-then-rise";
  }
  return "?";
}

double IsotonicCurve::predict(double at) const {
  if (x.empty()) return 0;
  if (at <= x.front()) return y.front();
  if (at >= x.back()) return y.back();
  size_t hi = std::upper_bound(x.begin(), x.end(), at) - x.begin();
  size_t lo = hi - 1;
  double t = (at - x[lo]) / (x[hi] - x[lo]);
  return y[lo] + t * (y[hi] - y[lo]);
}

namespace {

// A pooled block: total weight, weighted mean, and the weighted sum of squared
// deviations from that mean (merged as in Welford, to avoid cancellation).
struct Block {
  double w, mean, m2;
  size_t count;  // input values pooled
};

// Online increasing PAVA. After each push, sse() is the least SSE of an
// increasing fit to the values pushed so far (amortised O(1) per push).
class OnlinePava {
 public:
  void push(double y, double w) {
    blocks_.push_back({w, y, 0, 1});
    while (blocks_.size() >= 2 && blocks_[blocks_.size() - 2].mean > blocks_.back().mean) {
      Block b = blocks_.back();
      blocks_.pop_back();
      Block& a = blocks_.back();
      double sw = a.w + b.w, d = b.mean - a.mean;
      double add = d * d * a.w * b.w / sw;
      a.m2 += b.m2 + add;
      a.mean += d * b.w / sw;
      a.w = sw;
      a.count += b.count;
      sse_ += add;
    }
  }
  double sse() const { return sse_; }
  std::vector<double> fitted() const {
    std::vector<double> out;
    for (const auto& b : blocks_) out.insert(out.end(), b.count, b.mean);
    return out;
  }

 private:
  std::vector<Block> blocks_;
  double sse_ = 0;
};

std::vector<double> negated(std::vector<double> v) {
  for (auto& x : v) x = -x;
  return v;
}

std::vector<double> pava_increasing(const std::vector<double>& y, const std::vector<double>& w) {
  OnlinePava p;
  for (size_t i = 0; i < y.size(); ++i) p.push(y[i], w[i]);
  return p.fitted();
}

// Least SSE of an increasing fit to every prefix: out[k] for y[0..k), k = 0..n.
std::vector<double> prefix_sse(const std::vector<double>& y, const std::vector<double>& w) {
  std::vector<double> out{0};
  OnlinePava p;
  for (size_t i = 0; i < y.size(); ++i) {
    p.push(y[i], w[i]);
    out.push_back(p.sse());
  }
  return out;
}

// Unimodal fit: increasing on [0, k), decreasing on [k, n), k chosen for least SSE.
// A valley is a peak of -y.
std::vector<double> peak_fit(const std::vector<double>& y, const std::vector<double>& w) {
  size_t n = y.size();
  std::vector<double> inc = prefix_sse(y, w);
  // Read backwards, a decreasing suffix is increasing: the same online PAVA run
  // from the right gives the SSE of every decreasing suffix fit.
  std::vector<double> ry(y.rbegin(), y.rend()), rw(w.rbegin(), w.rend());
  std::vector<double> dec = prefix_sse(ry, rw);  // dec[j]: the last j values
  size_t best = 0;
  double best_sse = INFINITY;
  for (size_t k = 0; k <= n; ++k) {
    double s = inc[k] + dec[n - k];
    if (s < best_sse) best_sse = s, best = k;
  }
  std::vector<double> left(y.begin(), y.begin() + best), lw(w.begin(), w.begin() + best);
  std::vector<double> right(ry.begin(), ry.begin() + (n - best)), rwt(rw.begin(), rw.begin() + (n - best));
  std::vector<double> out = pava_increasing(left, lw);
  std::vector<double> r = pava_increasing(right, rwt);
  out.insert(out.end(), r.rbegin(), r.rend());
  return out;
}

}  // namespace

std::vector<double> pava(const std::vector<double>& y, const std::vector<double>& w, bool increasing) {
  if (y.size() != w.size()) throw std::invalid_argument("pava: y and w differ in length");
  if (increasing) return pava_increasing(y, w);
  return negated(pava_increasing(negated(y), w));
}

namespace {

// Sorting (value, index) pairs: the fast path when most values are distinct.
ValueGroups group_by_sorting(const std::vector<double>& v) {
  std::vector<std::pair<double, size_t>> sorted(v.size());
  for (size_t i = 0; i < v.size(); ++i) sorted[i] = {v[i], i};
  std::sort(sorted.begin(), sorted.end());
  ValueGroups g;
  g.group.resize(v.size());
  for (const auto& [value, i] : sorted) {
    if (g.values.empty() || value != g.values.back()) {
      g.values.push_back(value);
      g.counts.push_back(0);
    }
    ++g.counts.back();
    g.group[i] = static_cast<int>(g.values.size() - 1);
  }
  return g;
}

}  // namespace

ValueGroups group_by_value(const std::vector<double>& v) {
  // Hash while the values repeat; once there are many distinct ones a sort is cheaper.
  const size_t max_hashed = std::max<size_t>(1024, v.size() / 16);
  std::unordered_map<double, int> first_seen;  // value -> id in order of appearance
  std::vector<double> seen_values;
  std::vector<int> id(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    auto [it, fresh] = first_seen.try_emplace(v[i], static_cast<int>(seen_values.size()));
    if (fresh) {
      seen_values.push_back(v[i]);
      if (seen_values.size() > max_hashed) return group_by_sorting(v);
    }
    id[i] = it->second;
  }
  std::vector<int> order(seen_values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return seen_values[a] < seen_values[b]; });
  std::vector<int> rank(order.size());
  ValueGroups g;
  for (size_t r = 0; r < order.size(); ++r) {
    rank[order[r]] = static_cast<int>(r);
    g.values.push_back(seen_values[order[r]]);
  }
  g.counts.assign(g.values.size(), 0);
  g.group.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    g.group[i] = rank[id[i]];
    ++g.counts[g.group[i]];
  }
  return g;
}

namespace {
// Adds point (y, weight wi) to pooled x k: a weighted Welford update of its
// mean and of the pool's squared error about the means.
void pool_add(PooledPoints& p, size_t k, double y, double wi) {
  double sw = p.w[k] + wi, d = y - p.y[k];
  p.y[k] += d * wi / sw;
  p.within_sse += wi * d * (y - p.y[k]);
  p.w[k] = sw;
}

void check_finite(double x, double y) {
  if (!std::isfinite(x) || !std::isfinite(y)) throw std::invalid_argument("isotonic fit: NaN or Inf in input");
}
}  // namespace

PooledPoints pool_points(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w) {
  size_t n = x.size();
  if (n == 0) throw std::invalid_argument("isotonic fit: no points");
  if (y.size() != n || (!w.empty() && w.size() != n)) throw std::invalid_argument("isotonic fit: x, y, w differ in length");
  for (size_t i = 0; i < n; ++i) {
    check_finite(x[i], y[i]);
    if (!w.empty() && !(w[i] > 0 && std::isfinite(w[i]))) throw std::invalid_argument("isotonic fit: weights must be > 0");
  }
  ValueGroups g = group_by_value(x);
  PooledPoints p;
  p.x = g.values;
  p.y.assign(p.x.size(), 0);
  p.w.assign(p.x.size(), 0);
  for (size_t i = 0; i < n; ++i) pool_add(p, g.group[i], y[i], w.empty() ? 1.0 : w[i]);
  return p;
}

PooledPoints pool_points_in_order(const std::vector<double>& x, const std::vector<double>& y,
                                  const std::vector<size_t>& order) {
  return pool_points_in_order(x, y, {}, order);
}

PooledPoints pool_points_in_order(const std::vector<double>& x, const std::vector<double>& y,
                                  const std::vector<double>& w, const std::vector<size_t>& order) {
  if (order.empty()) throw std::invalid_argument("isotonic fit: no points");
  PooledPoints p;
  for (size_t i : order) {
    check_finite(x[i], y[i]);
    if (!p.x.empty() && x[i] < p.x.back()) throw std::invalid_argument("isotonic fit: order does not sort x");
    if (!w.empty() && !(w[i] > 0 && std::isfinite(w[i]))) throw std::invalid_argument("isotonic fit: weights must be > 0");
    if (p.x.empty() || x[i] != p.x.back()) p.x.push_back(x[i]), p.y.push_back(0), p.w.push_back(0);
    pool_add(p, p.x.size() - 1, y[i], w.empty() ? 1.0 : w[i]);
  }
  return p;
}

IsotonicCurve fit_isotonic(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w,
                           Shape shape) {
  return fit_isotonic(pool_points(x, y, w), shape);
}

IsotonicCurve fit_isotonic(const PooledPoints& p, Shape shape) {
  if (p.x.empty()) throw std::invalid_argument("isotonic fit: no points");
  const auto &ux = p.x, &uy = p.y, &uw = p.w;
  std::vector<double> fit;
  switch (shape) {
    case Shape::kIncreasing: fit = pava(uy, uw, true); break;
    case Shape::kDecreasing: fit = pava(uy, uw, false); break;
    case Shape::kPeak: fit = peak_fit(uy, uw); break;
    case Shape::kValley: fit = negated(peak_fit(negated(uy), uw)); break;
  }

  IsotonicCurve c;
  c.shape = shape;
  // Knots: keep the first and last x of each run of equal fitted values; the
  // linear interpolation between them is then the same as with every x.
  size_t m = ux.size();
  c.sse = p.within_sse;
  for (size_t i = 0; i < m; ++i) {
    double d = uy[i] - fit[i];
    c.sse += uw[i] * d * d;
    bool same_prev = i > 0 && fit[i - 1] == fit[i];
    bool same_next = i + 1 < m && fit[i + 1] == fit[i];
    if (same_prev && same_next) continue;
    c.x.push_back(ux[i]);
    c.y.push_back(fit[i]);
  }
  return c;
}

}  // namespace trainplan::numerics
