// Profiling samples as a transfer model's steps: placements, the median step
// per configuration, and the errors that name what is missing.
#include <gtest/gtest.h>

#include "app/transfer_samples.h"
#include "core/error.h"
#include "test_util.h"

using namespace trainplan;

TEST(TransferSamples, PlacementsSpreadWorkersEvenly) {
  EXPECT_EQ(app::sample_placement(8, 2, 4), (std::vector<int>{4, 4}));
  EXPECT_EQ(app::sample_placement(7, 2, 4), (std::vector<int>{3, 4}));  // the larger last, as the traces write them
  EXPECT_EQ(app::sample_placement(5, 0, 4), (std::vector<int>{2, 3}));  // nodes unknown: as few as hold them
  EXPECT_EQ(app::sample_placement(3, 0, 8), (std::vector<int>{3}));
  EXPECT_EQ(app::sample_placement(12, 1, 4), (std::vector<int>{12}));  // the samples' own nodes win
  EXPECT_THROW(app::sample_placement(1, 2, 4), InputError);
  EXPECT_THROW(app::sample_placement(0, 1, 4), InputError);
}

TEST(TransferSamples, OneStepPerConfigurationAtTheMedian) {
  SampleSet set;
  set.dataset_size = 1000;
  set.source = "s.csv";
  auto add = [&](double b, int r, int nodes, double epoch) {
    Sample s;
    s.batch = b, s.workers = r, s.nodes = nodes, s.epochs = 1, s.epoch_time_s = epoch;
    set.samples.push_back(s);
  };
  add(10, 1, 1, 10), add(10, 1, 1, 12), add(10, 1, 1, 30);  // a disturbed repeat: the median ignores it
  add(10, 4, 0, 5);
  auto steps = app::sample_steps(set, 2);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_DOUBLE_EQ(steps[0].step_s, 12 * 10 * 1 / 1000.0);
  EXPECT_FALSE(steps[0].sync_s.has_value());
  EXPECT_EQ(steps[1].gpus_per_node, (std::vector<int>{2, 2}));
  EXPECT_DOUBLE_EQ(steps[1].step_s, 5 * 10 * 4 / 1000.0);

  set.dataset_size.reset();
  auto e = tptest::input_error_of([&] { app::sample_steps(set, 2); });
  EXPECT_EQ(e.file(), "s.csv");
  EXPECT_EQ(e.field(), "dataset_size");
  set.dataset_size = 1000;
  set.samples.clear();
  EXPECT_THROW(app::sample_steps(set, 2), InputError);
}
