#include "models/isotonic_mi.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "models/registry.h"
#include "replay/sampler.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::models;
using namespace trainplan::numerics;

namespace {

Sample make(double b, int r, double e, double t, std::optional<double> m = std::nullopt) {
  Sample s;
  s.batch = b;
  s.workers = r;
  s.epochs = e;
  s.epoch_time_s = t;
  s.metric = m;
  s.nodes = 1;
  return s;
}

}  // namespace

TEST(IsotonicMi, ConstantParameterGetsNoWeightSoTheFitIsOneIsotonicCurve) {
  // Workers never vary: they carry no information, weight 0, and f1 is the
  // isotonic fit of time on batch, exact on these decreasing times.
  SampleSet s;
  for (double b : {16, 32, 64, 128}) s.samples.push_back(make(b, 2, 1, 1000 / b));
  IsotonicMiTimeModel m;
  m.fit(s);
  const auto& dims = m.additive().dimensions();
  ASSERT_EQ(dims.size(), 2u);
  EXPECT_DOUBLE_EQ(dims[0].weight, 1);
  EXPECT_DOUBLE_EQ(dims[1].weight, 0);
  EXPECT_EQ(dims[0].curve.shape, Shape::kDecreasing);
  for (double b : {16, 32, 64, 128}) EXPECT_NEAR(m.predict(b, 2, 1), 1000 / b, 1e-12);
  EXPECT_NEAR(m.predict(48, 7, 2), (1000.0 / 32 + 1000.0 / 64) / 2, 1e-12);  // linear between knots
  EXPECT_NEAR(m.predict(512, 2, 1), 1000.0 / 128, 1e-12);                 // clamped
}

TEST(IsotonicMi, PredictionIsTheWeightedSumOfOneDimensionalFits) {
  // t = 100/b + 10/r on a grid: both directions decreasing; the prediction
  // must be w_b g_b(b) + w_r g_r(r) with each g the per-parameter isotonic fit.
  SampleSet s;
  for (double b : {16, 32, 64, 128, 256})
    for (int r = 1; r <= 8; ++r) s.samples.push_back(make(b, r, 1, 100 / b + 10.0 / r));
  IsotonicMiTimeModel m;
  m.fit(s);
  const auto& d = m.additive().dimensions();
  EXPECT_EQ(d[0].curve.shape, Shape::kDecreasing);
  EXPECT_EQ(d[1].curve.shape, Shape::kDecreasing);
  EXPECT_NEAR(d[0].weight + d[1].weight, 1, 1e-12);
  // g_b(16) is the mean time over r at b = 16.
  double mean_r = 0;
  for (int r = 1; r <= 8; ++r) mean_r += 10.0 / r;
  mean_r /= 8;
  EXPECT_NEAR(d[0].curve.predict(16), 100.0 / 16 + mean_r, 1e-12);
  EXPECT_NEAR(m.predict(16, 3, 1), d[0].weight * d[0].curve.predict(16) + d[1].weight * d[1].curve.predict(3), 1e-12);
  // Both parameters carry information about the time, so both weigh in.
  EXPECT_EQ(d[0].name, "batch");
  EXPECT_EQ(d[1].name, "workers");
  EXPECT_GT(d[0].weight, 0);
  EXPECT_GT(d[1].weight, 0);
  EXPECT_GT(d[0].mi, 0);
}

TEST(IsotonicMi, MetricIgnoresWorkersAndUnimodalFindsThePeak) {
  // Metric rises then falls in batch (peak at 64), the same at every epoch count.
  SampleSet s;
  std::map<double, double> acc{{16, 0.6}, {32, 0.7}, {64, 0.8}, {128, 0.7}, {256, 0.5}};
  for (auto [b, a] : acc)
    for (int e : {1, 2, 3}) s.samples.push_back(make(b, 1 + e, e, 1, a));
  IsotonicMiMetricModel mono;
  mono.fit(s);
  EXPECT_DOUBLE_EQ(mono.predict(64, 1, 2), mono.predict(64, 8, 2));  // workers ignored

  IsotonicMiParams p;
  p.unimodal_metric_batch = true;
  IsotonicMiMetricModel uni(p, "isotonic-mi-unimodal");
  uni.fit(s);
  EXPECT_EQ(uni.additive().dimensions()[0].curve.shape, Shape::kPeak);
  EXPECT_NEAR(uni.additive().dimensions()[0].curve.sse, 0, 1e-12);
  EXPECT_GT(mono.additive().dimensions()[0].curve.sse, 0.01);
  EXPECT_NE(mono.additive().dimensions()[0].curve.shape, Shape::kPeak);  // only the unimodal model may rise then fall
  // Epochs carry nothing here (weight 0), so the batch curve alone predicts.
  EXPECT_NEAR(uni.predict(64, 1, 2), 0.8, 1e-12);
}

TEST(IsotonicMi, EmptyOrMetricFreeSamplesAreInputErrors) {
  SampleSet empty;
  empty.source = "empty.csv";
  IsotonicMiTimeModel t;
  EXPECT_THROW(t.fit(empty), InputError);
  SampleSet time_only;
  time_only.source = "t.csv";
  time_only.samples.push_back(make(32, 1, 1, 10));
  IsotonicMiMetricModel m;
  try {
    m.fit(time_only);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "t.csv") << e.what();
    EXPECT_EQ(e.field(), "metric") << e.what();
  }
}

TEST(IsotonicMi, RegisteredWithBothParts) {
  auto& reg = ModelRegistry::instance();
  for (const char* name : {"isotonic-mi", "isotonic-mi-unimodal"}) {
    const auto* e = reg.find(name);
    ASSERT_NE(e, nullptr) << name;
    ASSERT_TRUE(e->make_time);
    ASSERT_TRUE(e->make_metric);
    EXPECT_EQ(e->make_metric({})->name(), name);
  }
}

TEST(IsotonicMi, FitsCifarPaperPlanWithTimeFallingInWorkers) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto o = replay::ReplayOracle::from_dir(tptest::shared_data_dir() + "/pollux-t4/cifar10");
  auto s = replay::draw_samples(o, replay::named_plan("paper", 1)).samples;
  IsotonicMiTimeModel t;
  t.fit(s);
  const auto& d = t.additive().dimensions();
  EXPECT_EQ(d[1].name, "workers");
  EXPECT_EQ(d[1].curve.shape, Shape::kDecreasing);  // more workers, shorter epochs
  EXPECT_GT(t.predict(64, 1, 1), t.predict(64, 8, 2));
  IsotonicMiMetricModel m;
  m.fit(s);
  EXPECT_EQ(m.additive().dimensions()[1].curve.shape, Shape::kIncreasing);  // accuracy grows with epochs
}
