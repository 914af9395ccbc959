#include "models/metric_anchored.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.h"
#include "scoring/mre.h"
#include "models/metric_global_batch.h"

using namespace trainplan;
using namespace trainplan::scoring;
using models::AnchoredCurvesModel;
using models::AnchoredCurvesParams;

namespace {

// Runs measured at B = 64 * 2^k, k = 0..4. Each has a smooth curve in data
// epochs, a wiggle of its own (runs differ by more than their batch) and a
// learning-rate drop of 0.12 at its own data epoch (15 + 3k, later for larger
// batches); between two of them the surface is their blend, linear in log2 B,
// as the replay oracle blends a trace's runs.
double run_curve(int k, double e) {
  const double B = 64.0 * std::exp2(k);
  const double x = e * 528.0 / (400.0 + B);
  return 0.8 - 0.5 / (1 + x / 4) + 0.03 * std::sin(0.4 * e + 1.7 * k) + (e >= 15 + 3 * k ? 0.12 : 0.0);
}

double truth(double B, double e) {
  const double f = std::clamp(std::log2(B / 64.0), 0.0, 4.0);
  const int k = std::min(static_cast<int>(f), 3);
  const double t = f - k;
  return (1 - t) * run_curve(k, e) + t * run_curve(k + 1, e);
}

SampleSet blended(int seed, int n) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> batch(16, 128), workers(1, 8), epochs(1, 40);
  SampleSet s;
  s.direction = MetricDirection::kMax;
  for (int i = 0; i < n; ++i) {
    Sample x;
    x.batch = batch(rng), x.workers = workers(rng), x.epochs = epochs(rng);
    if (x.global_batch() < 64 || x.global_batch() > 1024) { --i; continue; }
    x.epoch_time_s = 1;
    x.metric = truth(x.global_batch(), x.epochs);
    s.samples.push_back(x);
  }
  return s;
}

double held_out_mre(const models::MetricModel& m, const SampleSet& test) {
  std::vector<double> p, t;
  for (const auto& x : test.samples) p.push_back(m.predict(x.batch, x.workers, x.epochs)), t.push_back(*x.metric);
  return scoring::mre(p, t);
}

}  // namespace

TEST(AnchoredCurves, FollowsRunsThatDifferByMoreThanTheirBatch) {
  auto train = blended(1, 240), test = blended(2, 400);
  AnchoredCurvesModel anchored;
  anchored.fit(train);
  models::GlobalBatchModel kernel;
  kernel.fit(train);
  const double a = held_out_mre(anchored, test), k = held_out_mre(kernel, test);
  EXPECT_LT(a, 0.9 * k) << "anchored " << a << " kernel " << k;
  // Leave-one-out puts the anchors on the runs' batches (B = 64 * 2^k), from 64.
  ASSERT_TRUE(anchored.has_correction());
  const auto anchors = anchored.anchor_batches();
  ASSERT_GE(anchors.size(), 2u);
  EXPECT_NEAR(anchors.front(), 64.0, 1e-9);
  for (size_t k = 1; k < anchors.size(); ++k) EXPECT_GT(anchors[k], anchors[k - 1]);
}

TEST(AnchoredCurves, PredictionsAreMonotoneInEpochs) {
  AnchoredCurvesModel m;
  m.fit(blended(3, 240));
  for (int B : {40, 64, 90, 200, 512, 1024, 3000}) {
    double prev = -1e9;
    for (double e = 0.1; e <= 60; e += 0.1) {
      const double v = m.predict(B, 1, e);
      EXPECT_GE(v, prev - 1e-12) << "B=" << B << " e=" << e;
      prev = v;
    }
  }
}

TEST(AnchoredCurves, LossTypeMetricsDecreaseInEpochs) {
  auto s = blended(4, 240);
  s.direction = MetricDirection::kMin;
  for (auto& x : s.samples) x.metric = 2.0 - *x.metric;
  AnchoredCurvesModel m;
  m.fit(s);
  double prev = 1e9;
  for (double e = 0.5; e <= 50; e += 0.5) {
    const double v = m.predict(30, 4, e);
    EXPECT_LE(v, prev + 1e-12) << "e=" << e;
    prev = v;
  }
  EXPECT_NEAR(m.predict(64, 2, 30), 2.0 - truth(128, 30), 0.03);
}

TEST(AnchoredCurves, PureNoiseLeavesLittleCorrection) {
  // One smooth curve (which the base fits) plus independent noise, sd 0.01,
  // at 240 distinct configurations: leave-one-out should shrink the anchored
  // curves almost to nothing. (Repeats of a configuration are left out
  // together, so on 30 configurations measured 8 times each the curves are
  // chosen on 30 points, not on 240.)
  std::mt19937 rng(11);
  std::normal_distribution<double> eps(0, 0.01);
  SampleSet s;
  s.direction = MetricDirection::kMax;
  for (int i = 0; i < 240; ++i) {
    Sample x;
    x.batch = 16 << (i % 5), x.workers = 1 + (i / 5) % 3, x.epochs = 1 + 2 * (i / 15), x.epoch_time_s = 1;
    const double xe = x.epochs * 528.0 / (400.0 + x.global_batch());
    x.metric = 0.9 - 0.5 / (1 + xe / 4) + eps(rng);
    s.samples.push_back(x);
  }
  AnchoredCurvesModel m;
  m.fit(s);
  double mean_abs = 0;
  for (const auto& x : s.samples) mean_abs += std::abs(m.correction(x.global_batch(), x.epochs)) / double(s.size());
  // Measured: 0.00054. (On 30 configurations x 8 repeats, 0.00018 when the
  // repeats were left out one at a time, with the other 7 still in; 0.0022
  // with each configuration left out whole, the correction then following the
  // noise of the 30 means, sd 0.0035.)
  EXPECT_LT(mean_abs, 0.001) << m.describe();  // the noise's mean |e| is 0.008
}

TEST(AnchoredCurves, FewSamplesFallBackOnTheBaseCurve) {
  auto s = blended(5, 6);
  AnchoredCurvesParams p;
  p.min_samples = 8;
  AnchoredCurvesModel m(p);
  m.fit(s);
  EXPECT_EQ(m.correction(256, 20), 0.0);
  EXPECT_FALSE(m.has_correction());
  EXPECT_TRUE(m.anchor_batches().empty());
  models::GlobalBatchModel base(p.base);
  base.fit(s);
  for (double e : {2.0, 10.0, 30.0}) EXPECT_NEAR(m.predict(64, 4, e), base.predict(64, 4, e), 0.01);
}

TEST(AnchoredCurves, NoMetricSamplesIsAnInputError) {
  SampleSet s;
  Sample x;
  x.batch = 32, x.workers = 1, x.epochs = 1, x.epoch_time_s = 1;
  s.samples.push_back(x);
  AnchoredCurvesModel m;
  EXPECT_THROW(m.fit(s), InputError);
}
