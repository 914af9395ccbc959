#include "app/watch_chart.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace {

using trainplan::app::LiveWatch;
using trainplan::app::WatchOptions;
using trainplan::io::PlotPanel;
using trainplan::io::PlotSeries;

std::string epoch_line(int k, double metric, double epoch_time_s, const char* name) {
  return fmt::format(R"({{"event":"epoch","epoch":{},"epoch_time_s":{},"metric":{},"metric_name":"{}"}})", k,
                     epoch_time_s, metric, name);
}

const PlotSeries* series(const PlotPanel& p, const std::string& title) {
  for (const auto& s : p.series)
    if (s.title == title) return &s;
  return nullptr;
}

double accuracy(int k) { return 0.95 - 0.6 * std::exp(-0.2 * k); }

WatchOptions aiming_at(double target, std::optional<double> deadline_s = std::nullopt) {
  WatchOptions o;
  o.target = target;
  o.deadline_s = deadline_s;
  return o;
}

// Epochs 1..`epochs` of accuracy(k), each `epoch_time_s` long, from line `first_line`.
void feed_accuracy(LiveWatch& w, int epochs, double epoch_time_s, long first_line = 1) {
  for (int k = 1; k <= epochs; ++k) w.feed(epoch_line(k, accuracy(k), epoch_time_s, "accuracy"), first_line + k - 1);
}

TEST(WatchChart, NothingToDrawBeforeTheFirstMetric) {
  LiveWatch w(aiming_at(0.9));
  EXPECT_TRUE(trainplan::app::watch_chart(w).empty());
  w.feed(R"({"event":"epoch","epoch":1,"epoch_time_s":10})", 1);  // an epoch without a metric
  EXPECT_TRUE(trainplan::app::watch_chart(w).empty());
}

// The metric panel holds the run's epochs as measured, the target across the
// axis, the forecast on the target at the predicted epoch with its interval,
// and a fitted curve that follows the measurements and meets the target near
// the forecast; the time panel the elapsed time summed from the epoch times,
// and the deadline.
TEST(WatchChart, DrawsTheRunItsFitTheForecastAndTheDeadline) {
  LiveWatch w(aiming_at(0.9, 3600));
  for (int k = 1; k <= 8; ++k) ASSERT_TRUE(w.feed(epoch_line(k, accuracy(k), 20 + k, "val_acc"), k));
  const auto& u = *w.last();
  ASSERT_TRUE(u["predicted_epoch"].is_number()) << u;
  const double predicted = u["predicted_epoch"];

  const auto panels = trainplan::app::watch_chart(w);
  ASSERT_EQ(panels.size(), 2u);
  const PlotPanel& m = panels[0];
  EXPECT_NE(m.title.find("val_acc by epoch, up to epoch 8"), std::string::npos) << m.title;
  EXPECT_NE(m.title.find(fmt::format("forecast at epoch {:.4g}", predicted)), std::string::npos) << m.title;
  const PlotSeries* measured = series(m, "measured");
  ASSERT_TRUE(measured);
  ASSERT_EQ(measured->points.size(), 8u);
  for (int k = 1; k <= 8; ++k) {
    EXPECT_DOUBLE_EQ(measured->points[size_t(k - 1)].first, k);
    EXPECT_DOUBLE_EQ(measured->points[size_t(k - 1)].second, accuracy(k));
  }
  const PlotSeries* target = series(m, "target");
  ASSERT_TRUE(target);
  for (const auto& [x, y] : target->points) EXPECT_DOUBLE_EQ(y, 0.9);
  const PlotSeries* forecast = series(m, "forecast");
  ASSERT_TRUE(forecast);
  ASSERT_EQ(forecast->points.size(), 1u);
  EXPECT_DOUBLE_EQ(forecast->points[0].first, predicted);
  EXPECT_DOUBLE_EQ(forecast->points[0].second, 0.9);
  ASSERT_TRUE(m.xrange);
  EXPECT_GE(m.xrange->second, predicted);

  const PlotSeries* fit = series(m, "fit (median of the curves)");
  ASSERT_TRUE(fit);
  const auto* fc = w.forecaster();
  for (int k = 2; k <= 8; ++k) {
    const auto v = fc->fitted_metric(k, 0.9);
    ASSERT_TRUE(v);
    EXPECT_NEAR(*v, accuracy(k), 0.02) << "epoch " << k;
  }
  // The curve crosses the target within a tenth of the forecast's epochs of it.
  const auto before = fc->fitted_metric(predicted * 0.9, 0.9), after = fc->fitted_metric(predicted * 1.1, 0.9);
  ASSERT_TRUE(before && after);
  EXPECT_LT(*before, 0.9);
  EXPECT_GT(*after, 0.9);

  const PlotPanel& t = panels[1];
  const PlotSeries* elapsed = series(t, "elapsed");
  ASSERT_TRUE(elapsed);
  ASSERT_EQ(elapsed->points.size(), 8u);
  double sum_s = 0;
  for (int k = 1; k <= 8; ++k) sum_s += 20 + k;
  // 8 epochs of 21..28 s: 196 s, in minutes.
  EXPECT_NEAR(elapsed->points.back().second, sum_s / 60, 1e-9);
  EXPECT_NE(t.ylabel.find("minutes"), std::string::npos) << t.ylabel;
  const PlotSeries* deadline = series(t, "deadline");
  ASSERT_TRUE(deadline);
  EXPECT_DOUBLE_EQ(deadline->points.front().second, 60.0);
  EXPECT_NE(t.title.find("deadline 60 min: " + u["deadline"].get<std::string>()), std::string::npos) << t.title;
}

// A run that has met its target says where, and draws no forecast.
TEST(WatchChart, ATargetMetIsMarkedAndNotForecast) {
  LiveWatch w(aiming_at(0.7));
  feed_accuracy(w, 8, 10);
  const auto panels = trainplan::app::watch_chart(w);
  ASSERT_FALSE(panels.empty());
  EXPECT_NE(panels[0].title.find("target 0.7 met at epoch 5"), std::string::npos) << panels[0].title;
  EXPECT_FALSE(series(panels[0], "forecast"));
  const PlotSeries* met = series(panels[0], "target met");
  ASSERT_TRUE(met);
  EXPECT_DOUBLE_EQ(met->points.at(0).first, 5);
}

// The update that ends a run short of its target replaces the forecast: the
// chart says the run ended, and draws no forecast or interval.
TEST(WatchChart, ARunThatEndedShortShowsNoForecast) {
  LiveWatch w(aiming_at(0.9, 600));
  feed_accuracy(w, 8, 20);
  ASSERT_TRUE((*w.last())["predicted_epoch"].is_number());
  const auto done = w.feed(R"({"event":"done"})", 9);
  ASSERT_TRUE(done);
  ASSERT_EQ((*done)["reached"], false);
  const auto panels = trainplan::app::watch_chart(w, &*done);
  ASSERT_EQ(panels.size(), 2u);
  EXPECT_NE(panels[0].title.find("ended without reaching the target 0.9"), std::string::npos) << panels[0].title;
  for (const char* gone : {"forecast", "80% interval", "the curves that reach the target"})
    EXPECT_FALSE(series(panels[0], gone)) << gone;
  EXPECT_FALSE(series(panels[1], "projected at the recent epochs' pace"));
  EXPECT_NE(panels[1].title.find("deadline 10 min: missed"), std::string::npos) << panels[1].title;
}

// The fit drawn is the median of every curve; where some curves level off
// short of the target, those that reach it are drawn beside it, and that one
// meets the target near the forecast.
TEST(WatchChart, TheCurvesThatReachTheTargetAreDrawnApartFromTheFit) {
  LiveWatch w(aiming_at(0.4));  // a loss levelling off near 0.8: most families never get there
  for (int k = 1; k <= 8; ++k) w.feed(epoch_line(k, 0.8 + 2.0 * std::exp(-k / 3.0), 20, "val_loss"), k);
  const auto& u = *w.last();
  if (!u["predicted_epoch"].is_number()) GTEST_SKIP() << "no family reaches the target here: " << u;
  const auto panels = trainplan::app::watch_chart(w);
  const PlotSeries* fit = series(panels[0], "fit (median of the curves)");
  const PlotSeries* toward = series(panels[0], "the curves that reach the target");
  ASSERT_TRUE(fit);
  ASSERT_TRUE(toward);
  // The fit follows the measurements at the last epoch.
  const auto at8 = w.forecaster()->fitted_metric(8);
  ASSERT_TRUE(at8);
  EXPECT_NEAR(*at8, 0.8 + 2.0 * std::exp(-8 / 3.0), 0.03);
}

// In a profiling run's live log the chart names the trial it forecasts.
TEST(WatchChart, AProfilingRunsTrialIsNamed) {
  LiveWatch w(aiming_at(0.9));
  w.feed(R"({"event":"trial_start","batch":64,"workers":2,"epochs":6})", 1);
  feed_accuracy(w, 4, 10, 2);
  const auto panels = trainplan::app::watch_chart(w);
  ASSERT_FALSE(panels.empty());
  EXPECT_NE(panels[0].title.find("(trial: batch 64 on 2 workers)"), std::string::npos) << panels[0].title;
}

// With earlier trials of the workload (--samples), their forecast is drawn
// beside the run's own, on both panels.
TEST(WatchChart, TheForecastFromEarlierTrialsIsDrawnBeside) {
  LiveWatch w(aiming_at(0.9));
  feed_accuracy(w, 6, 20);
  nlohmann::json u = *w.last();
  u["samples"] = {{"metric_model", "global-batch"}, {"predicted_epoch", 14.0}, {"finish_s", 280.0}};
  const auto panels = trainplan::app::watch_chart(w, &u);
  ASSERT_EQ(panels.size(), 2u);
  const PlotSeries* m = series(panels[0], "forecast from earlier trials (global-batch)");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->points, (std::vector<std::pair<double, double>>{{14.0, 0.9}}));
  ASSERT_TRUE(panels[0].xrange);
  EXPECT_GE(panels[0].xrange->second, 14.0);
  const PlotSeries* t = series(panels[1], "forecast from earlier trials");
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->points.at(0).first, 14.0);
}

// Epochs without times: the metric panel alone.
TEST(WatchChart, WithoutEpochTimesOnlyTheMetricIsDrawn) {
  LiveWatch w(aiming_at(0.9));
  for (int k = 1; k <= 6; ++k)
    w.feed(fmt::format(R"({{"event":"epoch","epoch":{},"metric":{}}})", k, accuracy(k)), k);
  EXPECT_EQ(trainplan::app::watch_chart(w).size(), 1u);
}

}  // namespace
