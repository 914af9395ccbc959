#include "numerics/pava.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

using namespace trainplan::numerics;
using namespace trainplan::numerics;

namespace {

// Brute force: the least-squares fit of `shape` is piecewise constant with the
// weighted block means over consecutive blocks, so try every partition of the
// n points into consecutive blocks (2^(n-1)), keep those whose block means have
// the shape, and return the least SSE.
double brute_force_sse(const std::vector<double>& y, const std::vector<double>& w, Shape shape) {
  size_t n = y.size();
  double best = INFINITY;
  for (unsigned mask = 0; mask < (1u << (n - 1)); ++mask) {
    std::vector<double> means;
    std::vector<std::pair<size_t, size_t>> blocks;
    size_t start = 0;
    for (size_t i = 0; i < n; ++i) {
      bool cut = i == n - 1 || (mask >> i) & 1u;
      if (!cut) continue;
      double sw = 0, swy = 0;
      for (size_t j = start; j <= i; ++j) sw += w[j], swy += w[j] * y[j];
      means.push_back(swy / sw);
      blocks.push_back({start, i});
      start = i + 1;
    }
    // Shape check on the block means (with a tolerance for rounding).
    const double eps = 1e-12;
    auto up = [&](size_t k) { return means[k + 1] >= means[k] - eps; };
    auto down = [&](size_t k) { return means[k + 1] <= means[k] + eps; };
    bool ok = true;
    size_t k = 0, m = means.size();
    switch (shape) {
      case Shape::kIncreasing:
        for (k = 0; k + 1 < m; ++k) ok = ok && up(k);
        break;
      case Shape::kDecreasing:
        for (k = 0; k + 1 < m; ++k) ok = ok && down(k);
        break;
      case Shape::kPeak:
        while (k + 1 < m && up(k)) ++k;
        while (k + 1 < m && down(k)) ++k;
        ok = k + 1 >= m;
        break;
      case Shape::kValley:
        while (k + 1 < m && down(k)) ++k;
        while (k + 1 < m && up(k)) ++k;
        ok = k + 1 >= m;
        break;
    }
    if (!ok) continue;
    double sse = 0;
    for (size_t b = 0; b < blocks.size(); ++b)
      for (size_t j = blocks[b].first; j <= blocks[b].second; ++j) sse += w[j] * (y[j] - means[b]) * (y[j] - means[b]);
    best = std::min(best, sse);
  }
  return best;
}

}  // namespace

TEST(Pava, TextbookIncreasing) {
  auto f = pava({1, 3, 2, 4}, {1, 1, 1, 1}, true);
  std::vector<double> want{1, 2.5, 2.5, 4};
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(f[i], want[i]);
  // A fully reversed sequence pools into its mean.
  f = pava({3, 2, 1}, {1, 1, 1}, true);
  for (double v : f) EXPECT_DOUBLE_EQ(v, 2);
}

TEST(Pava, TextbookDecreasingAndWeighted) {
  auto f = pava({4, 2, 3, 1}, {1, 1, 1, 1}, false);
  std::vector<double> want{4, 2.5, 2.5, 1};
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(f[i], want[i]);
  // Weights 1 and 3 pool 3 and 1 into (3 + 3) / 4 = 1.5.
  f = pava({3, 1}, {1, 3}, true);
  EXPECT_DOUBLE_EQ(f[0], 1.5);
  EXPECT_DOUBLE_EQ(f[1], 1.5);
}

TEST(Pava, RepeatedXArePooledAndKnotsInterpolate) {
  // x = 1 twice (mean 3, weight 2) then x = 2 (value 1): pooled to 7/3.
  auto c = fit_isotonic({1, 1, 2}, {2, 4, 1}, {}, Shape::kIncreasing);
  ASSERT_EQ(c.x.size(), 2u);
  EXPECT_DOUBLE_EQ(c.y[0], 7.0 / 3);
  EXPECT_DOUBLE_EQ(c.y[1], 7.0 / 3);
  double m = 7.0 / 3;
  EXPECT_NEAR(c.sse, (2 - m) * (2 - m) + (4 - m) * (4 - m) + (1 - m) * (1 - m), 1e-12);

  auto d = fit_isotonic({0, 1, 2}, {0, 1, 3}, {}, Shape::kIncreasing);
  EXPECT_DOUBLE_EQ(d.predict(0.5), 0.5);
  EXPECT_DOUBLE_EQ(d.predict(1.5), 2);
  EXPECT_DOUBLE_EQ(d.predict(-1), 0);  // clamped below
  EXPECT_DOUBLE_EQ(d.predict(9), 3);   // clamped above
  EXPECT_DOUBLE_EQ(d.sse, 0);
}

TEST(Pava, PoolingInSortedOrderMatchesPoolPoints) {
  // Ties (x = 2 three times, x = 5 twice) among distinct values, in scrambled order.
  const std::vector<double> x = {5, 2, 7, 2, 1, 5, 2, 3}, y = {0.3, 1.5, -2, 0.25, 4, 0.7, 9, 1};
  std::vector<size_t> order = {4, 1, 3, 6, 7, 0, 5, 2};  // increasing x, ties in index order
  const PooledPoints a = pool_points(x, y, {}), b = pool_points_in_order(x, y, order);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);  // exact: the same updates in the same order
  EXPECT_EQ(a.w, b.w);
  EXPECT_EQ(a.within_sse, b.within_sse);
  // A subset: the points a held-out fold keeps.
  const std::vector<size_t> kept = {4, 3, 6, 0, 2};
  const PooledPoints c = pool_points_in_order(x, y, kept);
  const PooledPoints d = pool_points({1, 2, 2, 5, 7}, {4, 0.25, 9, 0.3, -2}, {});
  EXPECT_EQ(c.x, d.x);
  EXPECT_EQ(c.y, d.y);
  EXPECT_EQ(c.within_sse, d.within_sse);
  EXPECT_THROW(pool_points_in_order(x, y, {1, 4}), std::invalid_argument);  // x 2 then 1: not sorted
  EXPECT_THROW(pool_points_in_order(x, y, {}), std::invalid_argument);
}

TEST(Pava, KnotsDropInteriorPointsOfFlatRuns) {
  auto c = fit_isotonic({1, 2, 3, 4, 5}, {5, 4, 3, 2, 1}, {}, Shape::kIncreasing);
  // Everything pools to 3; the run keeps its two ends only.
  ASSERT_EQ(c.x.size(), 2u);
  EXPECT_DOUBLE_EQ(c.x[0], 1);
  EXPECT_DOUBLE_EQ(c.x[1], 5);
  EXPECT_DOUBLE_EQ(c.predict(2.7), 3);
}

TEST(Pava, MatchesBruteForceOnSmallRandomInputs) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> val(-5, 5), wt(0.1, 3);
  for (int trial = 0; trial < 300; ++trial) {
    size_t n = 1 + trial % 8;
    std::vector<double> x(n), y(n), w(n);
    for (size_t i = 0; i < n; ++i) x[i] = double(i), y[i] = val(rng), w[i] = wt(rng);
    for (Shape s : {Shape::kIncreasing, Shape::kDecreasing}) {
      auto c = fit_isotonic(x, y, w, s);
      EXPECT_NEAR(c.sse, brute_force_sse(y, w, s), 1e-9) << "trial " << trial << " shape " << to_string(s);
      for (size_t i = 1; i < c.y.size(); ++i) {
        if (s == Shape::kIncreasing) EXPECT_GE(c.y[i], c.y[i - 1] - 1e-12);
        else EXPECT_LE(c.y[i], c.y[i - 1] + 1e-12);
      }
    }
  }
}

TEST(Pava, UnimodalMatchesBruteForceOnSmallRandomInputs) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> val(-5, 5), wt(0.1, 3);
  for (int trial = 0; trial < 300; ++trial) {
    size_t n = 1 + trial % 8;
    std::vector<double> x(n), y(n), w(n);
    for (size_t i = 0; i < n; ++i) x[i] = double(i), y[i] = val(rng), w[i] = wt(rng);
    for (Shape s : {Shape::kPeak, Shape::kValley}) {
      auto c = fit_isotonic(x, y, w, s);
      EXPECT_NEAR(c.sse, brute_force_sse(y, w, s), 1e-9) << "trial " << trial << " shape " << to_string(s);
      // Never worse than the monotone fits it contains.
      EXPECT_LE(c.sse, fit_isotonic(x, y, w, Shape::kIncreasing).sse + 1e-9);
      EXPECT_LE(c.sse, fit_isotonic(x, y, w, Shape::kDecreasing).sse + 1e-9);
    }
  }
}

TEST(Pava, UnimodalFitsAPeakExactly) {
  std::vector<double> x{1, 2, 3, 4, 5}, y{1, 3, 5, 4, 2};
  auto peak = fit_isotonic(x, y, {}, Shape::kPeak);
  EXPECT_NEAR(peak.sse, 0, 1e-12);
  EXPECT_DOUBLE_EQ(peak.predict(3), 5);
  EXPECT_DOUBLE_EQ(peak.predict(3.5), 4.5);
  EXPECT_GT(fit_isotonic(x, y, {}, Shape::kIncreasing).sse, 1);
  // The same data as a valley pools heavily.
  EXPECT_GT(fit_isotonic(x, y, {}, Shape::kValley).sse, 1);
}

TEST(Pava, RejectsBadInput) {
  EXPECT_THROW(fit_isotonic({}, {}, {}, Shape::kIncreasing), std::invalid_argument);
  EXPECT_THROW(fit_isotonic({1, 2}, {1}, {}, Shape::kIncreasing), std::invalid_argument);
  EXPECT_THROW(fit_isotonic({1, NAN}, {1, 2}, {}, Shape::kIncreasing), std::invalid_argument);
  EXPECT_THROW(fit_isotonic({1, 2}, {1, 2}, {1, 0}, Shape::kIncreasing), std::invalid_argument);
}

TEST(Pava, GroupByValueHashedAndSortedPathsAgree) {
  std::mt19937 rng(5);
  // Few distinct values (hashed) and nearly all distinct (sorted).
  for (int distinct : {30, 1000000}) {
    std::uniform_int_distribution<int> pick(0, distinct - 1);
    std::vector<double> v(5000);
    for (auto& x : v) x = 0.5 * pick(rng) - 7;
    auto g = group_by_value(v);
    size_t total = 0;
    for (size_t k = 0; k < g.values.size(); ++k) {
      if (k > 0) EXPECT_LT(g.values[k - 1], g.values[k]);
      total += g.counts[k];
    }
    EXPECT_EQ(total, v.size());
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(g.values[g.group[i]], v[i]);
  }
}

TEST(Pava, PoolingRepeatedXEqualsFittingTheWeightedMeans) {
  // 3000 points on 12 distinct x: the fit must equal PAVA on the per-x means
  // weighted by counts, and the SSE must add the spread within each x.
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> xi(0, 11);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> x, y;
  std::vector<double> sum(12, 0), cnt(12, 0), sq(12, 0);
  for (int i = 0; i < 3000; ++i) {
    int k = xi(rng);
    double v = std::sin(k) + noise(rng);
    x.push_back(k), y.push_back(v);
    sum[k] += v, cnt[k] += 1, sq[k] += v * v;
  }
  std::vector<double> means(12), within(12);
  double within_sse = 0;
  for (int k = 0; k < 12; ++k) means[k] = sum[k] / cnt[k], within_sse += sq[k] - cnt[k] * means[k] * means[k];
  auto fitted = pava(means, cnt, false);
  double between = 0;
  for (int k = 0; k < 12; ++k) between += cnt[k] * (means[k] - fitted[k]) * (means[k] - fitted[k]);
  auto c = fit_isotonic(x, y, {}, Shape::kDecreasing);
  EXPECT_NEAR(c.sse, within_sse + between, 1e-6);
  for (int k = 0; k < 12; ++k) EXPECT_NEAR(c.predict(k), fitted[k], 1e-9);
}
