#include "models/optimus_curve.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>

#include "core/cancel.h"
#include "models/metric_loss.h"

using namespace trainplan;
using models::OptimusCurve;

namespace {

// Exact points of l(k) = 1/(b0 k + b1) + b2 at k = 0, step, 2 step, ...
void curve_points(double b0, double b1, double b2, int n, double step, std::vector<double>& k, std::vector<double>& l) {
  for (int i = 0; i < n; ++i) {
    k.push_back(i * step);
    l.push_back(1.0 / (b0 * k.back() + b1) + b2);
  }
}

}  // namespace

TEST(OptimusCurve, RecoversBetaFromExactCurve) {
  std::vector<double> k, l;
  curve_points(0.002, 0.5, 0.3, 40, 250, k, l);
  OptimusCurve c;
  c.fit(k, l);
  EXPECT_NEAR(c.beta0(), 0.002, 0.002 * 1e-3);
  EXPECT_NEAR(c.beta1(), 0.5, 0.5 * 1e-3);
  EXPECT_NEAR(c.beta2(), 0.3, 0.3 * 1e-3);
  EXPECT_EQ(c.outliers(), 0u);
  EXPECT_LT(c.rmse(), 1e-6);
  EXPECT_NEAR(c.predict(20000), 1.0 / (0.002 * 20000 + 0.5) + 0.3, 1e-5);
}

TEST(OptimusCurve, RecoversZeroAsymptote) {
  std::vector<double> k, l;
  curve_points(0.01, 1.0, 0.0, 30, 10, k, l);
  OptimusCurve c;
  c.fit(k, l);
  EXPECT_NEAR(c.beta2(), 0.0, 1e-4);
  EXPECT_NEAR(c.beta0(), 0.01, 1e-4);
}

TEST(OptimusCurve, DropsOneGrossOutlier) {
  std::vector<double> k, l;
  curve_points(0.002, 0.5, 0.3, 40, 250, k, l);
  l[17] *= 3;  // a spike in the loss
  OptimusCurve robust;
  robust.fit(k, l);
  EXPECT_EQ(robust.outliers(), 1u);
  EXPECT_NEAR(robust.beta2(), 0.3, 0.3 * 1e-3);
  EXPECT_NEAR(robust.beta0(), 0.002, 0.002 * 1e-3);
  // Without outlier removal the same point drags the fit away.
  models::OptimusCurveParams p;
  p.outlier_z = 0;
  OptimusCurve plain(p);
  plain.fit(k, l);
  EXPECT_GT(std::abs(plain.beta2() - 0.3), 0.01);
}

TEST(OptimusCurve, OnlineRefitConvergesToBatchFit) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.01);
  std::vector<double> k, l;
  curve_points(0.004, 0.8, 0.2, 60, 100, k, l);
  for (auto& v : l) v *= 1 + noise(rng);
  OptimusCurve batch;
  batch.fit(k, l);
  OptimusCurve online;
  double err_early = 0, err_mid = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    online.add_point(k[i], l[i]);
    if (i == 9) err_early = std::abs(online.predict(6000) - batch.predict(6000));
    if (i == 39) err_mid = std::abs(online.predict(6000) - batch.predict(6000));
  }
  ASSERT_TRUE(online.fitted());
  EXPECT_DOUBLE_EQ(online.beta0(), batch.beta0());
  EXPECT_DOUBLE_EQ(online.beta1(), batch.beta1());
  EXPECT_DOUBLE_EQ(online.beta2(), batch.beta2());
  // The online fit approaches the batch fit as points arrive.
  EXPECT_GT(err_early, err_mid);
  // And the fit with all points is close to the truth at the far end.
  EXPECT_NEAR(batch.predict(6000), 1.0 / (0.004 * 6000 + 0.8) + 0.2, 0.01);
}

TEST(OptimusCurve, NotFittedUntilEnoughPoints) {
  OptimusCurve c;
  c.add_point(0, 2.0);
  c.add_point(10, 1.5);
  EXPECT_FALSE(c.fitted());
  c.add_point(20, 1.2);
  EXPECT_TRUE(c.fitted());
}

TEST(OptimusCurve, StepsToTarget) {
  std::vector<double> k, l;
  curve_points(0.002, 0.5, 0.3, 40, 250, k, l);
  OptimusCurve c;
  c.fit(k, l);
  auto s = c.steps_to(0.35);  // 1/(0.002 k + 0.5) = 0.05 -> k = 9750
  ASSERT_TRUE(s.has_value());
  EXPECT_NEAR(*s, 9750, 20);
  EXPECT_FALSE(c.steps_to(0.25).has_value());  // below the asymptote
}

TEST(OptimusCurve, RejectsBadInput) {
  OptimusCurve c;
  EXPECT_THROW(c.fit({0, 1, 2}, {1, 0, 1}), std::invalid_argument);
  EXPECT_THROW(c.fit({0, 1, 2}, {1, NAN, 1}), std::invalid_argument);
  EXPECT_THROW(c.fit({0, 1}, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(c.fit({0, 1}, {1, 2}), std::invalid_argument);  // too few points
}

TEST(MetricLoss, ChoosesCeilingByRange) {
  auto acc = models::MetricLoss::for_values(MetricDirection::kMax, {0.3, 0.9});
  EXPECT_DOUBLE_EQ(acc.to_loss(0.9), 1 - 0.9);
  auto f1 = models::MetricLoss::for_values(MetricDirection::kMax, {80, 88});
  EXPECT_DOUBLE_EQ(f1.to_loss(88), 12);
  auto big = models::MetricLoss::for_values(MetricDirection::kMax, {150, 250});
  EXPECT_DOUBLE_EQ(big.to_loss(250), 100);
  auto wer = models::MetricLoss::for_values(MetricDirection::kMin, {20, 100});
  EXPECT_DOUBLE_EQ(wer.to_loss(20), 20);
  auto neg = models::MetricLoss::for_values(MetricDirection::kMin, {-1, 1});
  EXPECT_GT(neg.to_loss(-1), 0);
  EXPECT_DOUBLE_EQ(neg.to_metric(neg.to_loss(0.5)), 0.5);
}

// A fit is a grid over the asymptote with a least-squares solve at each
// point and outlier passes after it: a request's time limit is checked
// between them (the two-variable solve never reaches nnls's own check), so
// that a server's time limit holds for a large curve.
TEST(OptimusCurve, AFitStopsWhenItsRequestIsCancelled) {
  std::vector<double> k, l;
  curve_points(0.002, 0.5, 0.3, 40, 250, k, l);
  const std::atomic<bool> stop{true};
  trainplan::CancelScope scope(trainplan::CancelScope::Clock::now() + std::chrono::hours(1), &stop);
  OptimusCurve c;
  EXPECT_THROW(c.fit(k, l), trainplan::Cancelled);
}
