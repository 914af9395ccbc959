// uncertainty::RunPinnedMetricModel: a model pinned to each measured run's samples,
// on runs with known answers, and under the conformal wrapper (pin_runs).
#include "uncertainty/metric_run_pinned.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "core/error.h"
#include "uncertainty/conformal.h"

using namespace trainplan;
using namespace trainplan::models;
using namespace trainplan::uncertainty;

namespace {

// A fixed curve in epochs, the same for every configuration: 1 - exp(-e / 10)
// rising (kMax), or 100 exp(-e / 10) + 20 falling (kMin). fit() learns nothing.
class FixedCurve : public MetricModel {
 public:
  explicit FixedCurve(MetricDirection d) : d_(d) {}
  std::string name() const override { return "fixed"; }
  void fit(const SampleSet& s) override {
    if (!s.has_metric()) throw InputError("no metric samples");
  }
  double predict(double, int, double e) const override { return at(e); }
  double at(double e) const {
    return d_ == MetricDirection::kMax ? 1 - std::exp(-e / 10) : 100 * std::exp(-e / 10) + 20;
  }

 private:
  MetricDirection d_;
};

Sample trial(double batch, int workers, double epochs, double metric) {
  Sample s;
  s.batch = batch, s.workers = workers, s.epochs = epochs, s.epoch_time_s = 1, s.metric = metric;
  return s;
}

RunPinnedMetricModel pinned(MetricDirection d, const std::vector<Sample>& trials) {
  RunPinnedMetricModel m(std::make_unique<FixedCurve>(d));
  SampleSet s;
  s.direction = d;
  s.samples = trials;
  m.fit(s);
  return m;
}

}  // namespace

TEST(RunPinned, RunOffsetByAConstantIsPredictedExactlyEverywhere) {
  FixedCurve f(MetricDirection::kMax);
  const double off = -0.03;
  auto m = pinned(MetricDirection::kMax, {trial(64, 2, 5, f.at(5) + off), trial(64, 2, 20, f.at(20) + off),
                                          trial(64, 2, 31, f.at(31) + off)});
  for (double e : {1.0, 3.0, 5.0, 7.5, 12.0, 19.0, 20.0, 26.0, 31.0, 45.0, 90.0})
    EXPECT_NEAR(m.predict(64, 2, e), f.at(e) + off, 1e-12) << "epochs " << e;
  // A configuration without samples is the wrapped model's own prediction.
  EXPECT_DOUBLE_EQ(m.predict(64, 4, 12), f.at(12));
  EXPECT_DOUBLE_EQ(m.predict(32, 2, 12), f.at(12));
  EXPECT_EQ(m.runs(), 1u);
}

TEST(RunPinned, BetweenSamplesARunScaledFromTheModelIsExact) {
  // y = 0.9 m(e): the model's shape rescaled through two samples is exact
  // between them; outside, the shift by the residual is not (a known answer).
  FixedCurve f(MetricDirection::kMax);
  auto m = pinned(MetricDirection::kMax, {trial(8, 1, 4, 0.9 * f.at(4)), trial(8, 1, 24, 0.9 * f.at(24))});
  for (double e : {4.0, 6.0, 10.0, 17.5, 24.0}) EXPECT_NEAR(m.predict(8, 1, e), 0.9 * f.at(e), 1e-12);
  EXPECT_NEAR(m.predict(8, 1, 40), f.at(40) - 0.1 * f.at(24), 1e-12);
  EXPECT_NEAR(m.predict(8, 1, 2), f.at(2) - 0.1 * f.at(4), 1e-12);
}

TEST(RunPinned, NoisySamplesArePooledMonotoneAndThePredictionIsMonotone) {
  for (MetricDirection d : {MetricDirection::kMax, MetricDirection::kMin}) {
    FixedCurve f(d);
    const double sign = d == MetricDirection::kMax ? 1 : -1;
    // The sample at 12 epochs is worse than the one at 10 (noise), and 10 is
    // measured twice: PAVA pools all three to their mean.
    const double a = f.at(10) + sign * 0.02, b = f.at(10) + sign * 0.01, c = f.at(10) - sign * 0.01;
    auto m = pinned(d, {trial(16, 3, 10, a), trial(16, 3, 12, c), trial(16, 3, 10, b), trial(16, 3, 30, f.at(30))});
    const double pooled = (a + b + c) / 3;
    EXPECT_NEAR(m.predict(16, 3, 10), pooled, 1e-12);
    EXPECT_NEAR(m.predict(16, 3, 12), pooled, 1e-12);
    EXPECT_NEAR(m.predict(16, 3, 30), f.at(30), 1e-12);
    double prev = m.predict(16, 3, 0.5);
    for (double e = 0.75; e <= 60; e += 0.25) {
      double v = m.predict(16, 3, e);
      EXPECT_GE(sign * (v - prev), -1e-12) << "direction " << to_string(d) << ", epochs " << e;
      prev = v;
    }
  }
}

TEST(RunPinned, WithoutMetricSamplesTheWrappedModelsErrorPasses) {
  RunPinnedMetricModel m(std::make_unique<FixedCurve>(MetricDirection::kMax));
  SampleSet s;
  Sample t = trial(8, 1, 3, 0.5);
  t.metric.reset();
  s.samples = {t};
  EXPECT_THROW(m.fit(s), InputError);
  EXPECT_THROW(RunPinnedMetricModel(nullptr), InputError);
}

TEST(RunPinned, ConformalPinRunsPinsThePointAndNarrowsBetweenSamples) {
  // Runs at 8 batches x 2 worker counts, each offset from a shared curve by
  // its own level (what a model fitted across runs cannot know), sampled at
  // 3 epochs. Unpinned, the point between samples is off by the run's offset;
  // pinned it is exact, and the within-run residuals that calibrate the
  // interval there shrink with it.
  std::mt19937 rng(7);
  std::normal_distribution<double> offset(0, 0.02);
  std::uniform_int_distribution<int> epoch(1, 40);
  FixedCurve f(MetricDirection::kMax);
  SampleSet s;
  s.direction = MetricDirection::kMax;
  std::map<std::pair<double, int>, double> off;
  for (int b = 0; b < 8; ++b)
    for (int r : {1, 2}) {
      double batch = 16 << b, o = offset(rng);
      off[{batch, r}] = o;
      for (int k = 0; k < 3; ++k) {
        double e = epoch(rng);
        s.samples.push_back(trial(batch, r, e, f.at(e) + o));
      }
    }
  auto make = [] { return std::make_unique<FixedCurve>(MetricDirection::kMax); };
  ConformalParams p;
  p.min_per_bin = 4;
  auto plain = with_conformal_metric(make, p);
  auto pin = with_conformal_metric([make] { return std::make_unique<RunPinnedMetricModel>(make()); }, p);
  plain->fit(s);
  pin->fit(s);
  double plain_err = 0, pin_err = 0, plain_width = 0, pin_width = 0;
  int n = 0;
  for (const auto& [key, o] : off)
    for (double e = 2; e <= 40; e += 1) {
      const double truth = f.at(e) + o;
      plain_err += std::abs(plain->predict(key.first, key.second, e) - truth);
      pin_err += std::abs(pin->predict(key.first, key.second, e) - truth);
      auto ip = plain->predict_interval(key.first, key.second, e, 0.9);
      auto iq = pin->predict_interval(key.first, key.second, e, 0.9);
      ASSERT_TRUE(ip && iq);
      plain_width += ip->hi - ip->lo;
      pin_width += iq->hi - iq->lo;
      ++n;
    }
  EXPECT_GT(plain_err / n, 0.01);  // the offsets, sd 0.02
  EXPECT_LT(pin_err / n, 1e-9);    // the runs are the curve shifted: pinned exactly
  EXPECT_LT(pin_width, plain_width);
}
