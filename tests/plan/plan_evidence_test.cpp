#include <gtest/gtest.h>

#include <cmath>

#include "plan/evidence.h"

using namespace trainplan;

namespace {

Sample trial(double batch, int workers, double epochs, std::optional<double> metric) {
  Sample s;
  s.batch = batch;
  s.workers = workers;
  s.epochs = epochs;
  s.epoch_time_s = 10;
  s.metric = metric;
  return s;
}

}  // namespace

TEST(NearestTrials, OrdersByOctavesOfGlobalBatchAndEpochs) {
  SampleSet set;
  set.direction = MetricDirection::kMax;
  set.samples = {trial(64, 1, 10, 0.70),   // 1 octave of batch away
                 trial(16, 2, 10, 0.80),   // global batch 32: same cell, same epochs
                 trial(32, 1, 40, 0.90),   // 2 octaves of epochs
                 trial(32, 1, 14, 0.75),   // log2(1.4) = 0.49 octave of epochs
                 trial(32, 1, 10, std::nullopt)};  // time-only: never listed
  auto near = plan::nearest_trials(set, 32, 10, 0.75, 3);
  ASSERT_EQ(near.size(), 3u);
  EXPECT_EQ(near[0].sample.workers, 2);
  EXPECT_DOUBLE_EQ(near[0].distance, 0);
  EXPECT_TRUE(near[0].meets_target);
  EXPECT_DOUBLE_EQ(near[1].sample.epochs, 14);
  EXPECT_NEAR(near[1].epoch_octaves, std::log2(1.4), 1e-12);
  EXPECT_TRUE(near[1].meets_target);  // 0.75 >= 0.75
  EXPECT_DOUBLE_EQ(near[2].sample.batch, 64);
  EXPECT_DOUBLE_EQ(near[2].batch_octaves, 1);
  EXPECT_FALSE(near[2].meets_target);
}

TEST(NearestTrials, MinimisedMetricMeetsBelowTheTarget) {
  SampleSet set;
  set.direction = MetricDirection::kMin;
  set.samples = {trial(20, 1, 12, 42.0), trial(20, 1, 20, 31.0)};
  auto near = plan::nearest_trials(set, 20, 12, 38.0, 5);
  ASSERT_EQ(near.size(), 2u);  // k larger than the trials: all of them
  EXPECT_FALSE(near[0].meets_target);
  EXPECT_TRUE(near[1].meets_target);
  EXPECT_GT(near[1].distance, near[0].distance);
}

TEST(NearestTrials, NoMetricNoTrials) {
  SampleSet set;
  set.samples = {trial(20, 1, 12, std::nullopt)};
  EXPECT_TRUE(plan::nearest_trials(set, 20, 12, 1.0, 3).empty());
}
