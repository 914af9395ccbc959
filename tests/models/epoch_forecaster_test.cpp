#include "models/epoch_forecaster.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using trainplan::MetricDirection;
using trainplan::models::DeadlineVerdict;
using trainplan::models::EpochForecaster;
using trainplan::models::EpochForecasterParams;
using trainplan::models::ForecastMethod;

EpochForecasterParams params(ForecastMethod m, MetricDirection d = MetricDirection::kMax) {
  EpochForecasterParams p;
  p.method = m;
  p.direction = d;
  return p;
}

TEST(EpochForecaster, NaiveExtendsTheLastEpochsSlope) {
  EpochForecaster f(params(ForecastMethod::kNaive));
  f.add(1, 0.50);
  f.add(2, 0.60);
  f.add(3, 0.65);  // slope 0.05 per epoch: 0.80 is 3 epochs on
  const auto r = f.forecast(0.80);
  ASSERT_TRUE(r.epoch);
  EXPECT_NEAR(*r.epoch, 6.0, 1e-9);
  EXPECT_FALSE(r.reached_at);
  // A flat or worsening last step never gets there.
  f.add(4, 0.64);
  EXPECT_FALSE(f.forecast(0.80).epoch);
  EXPECT_TRUE(f.forecast(0.80).never);
}

// A run getting worse: the naive line's slope leads away from the target,
// which it never reaches (not "at the next epoch", as its intercept below the
// target once made it say).
TEST(EpochForecaster, NaiveNeverReachesATargetTheRunMovesAwayFrom) {
  EpochForecaster f(params(ForecastMethod::kNaive));
  for (int k = 1; k <= 3; ++k) f.add(k, 0.6 - 0.1 * k, 2.0);
  const auto fc = f.forecast(0.55);
  EXPECT_TRUE(fc.never);
  EXPECT_FALSE(fc.epoch.has_value());
}

TEST(EpochForecaster, NaiveInTheMinDirection) {
  EpochForecaster f(params(ForecastMethod::kNaive, MetricDirection::kMin));
  f.add(1, 2.0);
  f.add(2, 1.8);  // falls 0.2 per epoch: 1.0 at epoch 6
  ASSERT_TRUE(f.forecast(1.0).epoch);
  EXPECT_NEAR(*f.forecast(1.0).epoch, 6.0, 1e-9);
}

TEST(EpochForecaster, OptimusRecoversItsOwnCurve) {
  // loss = 1/(0.1 k + 1) + 0.2 meets 0.3 at k = (1/0.1 - 1) / 0.1 = 90.
  EpochForecaster f(params(ForecastMethod::kOptimus, MetricDirection::kMin));
  for (int k = 1; k <= 30; ++k) f.add(k, 1 / (0.1 * k + 1) + 0.2);
  const auto r = f.forecast(0.3);
  ASSERT_TRUE(r.epoch);
  EXPECT_NEAR(*r.epoch, 90.0, 0.02 * 90);
}

TEST(EpochForecaster, EnsembleRecoversAnExactFamily) {
  // accuracy = 0.95 - 0.6 exp(-0.05 k) meets 0.9 at k = ln(12) / 0.05 = 49.7.
  EpochForecaster f(params(ForecastMethod::kEnsemble));
  for (int k = 1; k <= 20; ++k) f.add(k, 0.95 - 0.6 * std::exp(-0.05 * k));
  const auto r = f.forecast(0.9);
  ASSERT_TRUE(r.epoch);
  EXPECT_NEAR(*r.epoch, std::log(12.0) / 0.05, 0.05 * 49.7);
  // The exponential family predicts the held-out epochs best and carries the most weight.
  const auto& curves = f.curves();
  ASSERT_EQ(curves.size(), 4u);
  size_t best = 0;
  for (size_t i = 1; i < curves.size(); ++i)
    if (curves[i].weight > curves[best].weight) best = i;
  EXPECT_EQ(curves[best].family, EpochForecaster::Family::kExp);
}

// A run of a thousand epochs, each a new best: the work kept per epoch is
// bounded (the older fits and errors thinned, the fit on at most
// kMostFitPoints epochs), and the forecast still finds the curve.
TEST(EpochForecaster, ALongRunKeepsBoundedStateAndStillForecasts) {
  // accuracy = 0.95 - 0.6 exp(-0.005 k) meets 0.9495 at k = ln(1200) / 0.005 = 1418.
  EpochForecaster f(params(ForecastMethod::kEnsemble));
  for (int k = 1; k <= 1000; ++k) f.add(k, 0.95 - 0.6 * std::exp(-0.005 * k));
  EXPECT_LE(f.own_errors().size(), EpochForecaster::kMostOwnErrors);
  EXPECT_GT(f.own_errors().size(), 0u);
  const auto r = f.forecast(0.9495);
  ASSERT_TRUE(r.epoch);
  EXPECT_NEAR(*r.epoch, std::log(1200.0) / 0.005, 0.1 * 1418);
}

TEST(EpochForecaster, ReachedTargetIsReportedNotForecast) {
  EpochForecaster f(params(ForecastMethod::kEnsemble));
  for (int k = 1; k <= 5; ++k) f.add(k, 0.1 * k, 10.0);
  const auto r = f.forecast(0.25);
  ASSERT_TRUE(r.reached_at);
  EXPECT_EQ(*r.reached_at, 3);
  ASSERT_TRUE(r.finish_s);
  EXPECT_DOUBLE_EQ(*r.finish_s, 30.0);
  EXPECT_EQ(trainplan::models::deadline_verdict(r, 40), DeadlineVerdict::kMet);
  EXPECT_EQ(trainplan::models::deadline_verdict(r, 20), DeadlineVerdict::kMissed);
}

TEST(EpochForecaster, IntervalsComeFromPastErrorsAndHoldThePrediction) {
  EpochForecasterParams p = params(ForecastMethod::kEnsemble);
  // Noisy saturating curve: the run's own records give calibration errors.
  EpochForecaster f(p);
  for (int k = 1; k <= 40; ++k) f.add(k, 0.9 - 0.5 / std::sqrt(k) + 0.01 * std::sin(3.0 * k), 60.0);
  EXPECT_GT(f.own_errors().size(), 5u);
  const auto r = f.forecast(0.86);
  ASSERT_TRUE(r.epoch);
  ASSERT_TRUE(r.epoch_lo && r.epoch_hi);
  EXPECT_LE(*r.epoch_lo, *r.epoch);
  EXPECT_GE(*r.epoch_hi, *r.epoch);
  EXPECT_GT(*r.epoch_lo, 40);  // not yet met: no earlier than the next epoch
  ASSERT_TRUE(r.finish_s && r.elapsed_s);
  EXPECT_DOUBLE_EQ(*r.elapsed_s, 40 * 60.0);
  EXPECT_NEAR(*r.finish_s, 40 * 60.0 + (*r.epoch - 40) * 60.0, 1e-6);
}

TEST(EpochForecaster, PriorErrorsGiveAnIntervalFromTheStart) {
  std::vector<trainplan::models::ForecastError> prior;
  for (int i = 0; i < 50; ++i) prior.push_back({1.0 + 0.2 * i, 0.01 * (i - 25)});
  EpochForecaster f(params(ForecastMethod::kNaive), prior);
  f.add(1, 0.5);
  f.add(2, 0.6);
  const auto r = f.forecast(0.9);
  ASSERT_TRUE(r.epoch && r.epoch_lo && r.epoch_hi);
  EXPECT_LT(*r.epoch_lo, *r.epoch);
  EXPECT_GT(*r.epoch_hi, *r.epoch);
}

// Calibration errors all on one side (every past forecast came true later):
// the interval still holds the point, so that a deadline verdict taken on the
// interval cannot contradict it.
TEST(EpochForecaster, AnIntervalFromOneSidedErrorsStillHoldsThePoint) {
  std::vector<trainplan::models::ForecastError> prior;
  for (int i = 0; i < 50; ++i) prior.push_back({1.0 + 0.2 * i, 0.3 + 0.01 * i});
  EpochForecaster f(params(ForecastMethod::kNaive), prior);
  f.add(1, 0.5, 60.0);
  f.add(2, 0.6, 60.0);
  const auto r = f.forecast(0.9);
  ASSERT_TRUE(r.epoch && r.epoch_lo && r.epoch_hi);
  EXPECT_DOUBLE_EQ(*r.epoch_lo, *r.epoch);
  EXPECT_GT(*r.epoch_hi, *r.epoch);
  // A deadline the point misses is not met.
  EXPECT_NE(trainplan::models::deadline_verdict(r, *r.finish_s - 1), DeadlineVerdict::kMet);
}

// A curve that levels off at 0.95, asked for 0.99: most families never get
// there, so the interval's upper end is never (the point is the others').
TEST(EpochForecaster, ATargetPastTheFittedCeilingHasNoUpperEnd) {
  std::vector<trainplan::models::ForecastError> prior;
  for (int i = 0; i < 50; ++i) prior.push_back({1.0 + 0.2 * i, 0.01 * (i - 25)});
  EpochForecaster f(params(ForecastMethod::kEnsemble), prior);
  for (int k = 1; k <= 30; ++k) f.add(k, 0.95 - 0.5 / (k + 1), 10.0);
  const auto r = f.forecast(0.99);
  // The logarithm family reaches any level: there is a point, from it alone.
  ASSERT_TRUE(r.epoch && r.epoch_hi);
  EXPECT_TRUE(std::isinf(*r.epoch_hi));
  EXPECT_NE(trainplan::models::deadline_verdict(r, 1e9), DeadlineVerdict::kMet);
}

TEST(EpochForecaster, RejectsEpochsThatDoNotIncrease) {
  EpochForecaster f;
  f.add(1, 0.5);
  EXPECT_THROW(f.add(1, 0.6), std::invalid_argument);
  EXPECT_THROW(f.add(2, NAN), std::invalid_argument);
  EXPECT_THROW(f.add(2, 0.6, 0.0), std::invalid_argument);
}

}  // namespace
