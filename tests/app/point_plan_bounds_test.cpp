// A point plan is held to the measurements: where a model promises a
// configuration more than a measured run of as many epochs or more reached,
// the planned side says what was measured.
#include <gtest/gtest.h>

#include "app/planning_model.h"

using namespace trainplan;

namespace {

SampleSet curves() {
  SampleSet set;
  set.dataset_size = 6000;
  for (int b : {16, 32, 64, 128})
    for (int e : {1, 2, 4, 8}) {
      if (b == 32 && (e == 2 || e == 4)) continue;  // (32, 1): a 1-epoch and an 8-epoch run only
      Sample s;
      s.batch = b;
      s.workers = 1;
      s.nodes = 1;
      s.epochs = e;
      s.epoch_time_s = 10.0 * 32 / b + 1;
      s.metric = 0.99 - 0.2 / (e + 1) - 0.0004 * b;
      set.samples.push_back(s);
    }
  // One long run that fell short of the family's curve (a bad seed, a plateau).
  for (auto& s : set.samples)
    if (s.batch == 32 && s.epochs == 8) s.metric = *s.metric - 0.04;
  return set;
}

}  // namespace

TEST(PointPlanBounds, NoConfigurationIsPromisedMoreThanItsLongerRunReached) {
  const SampleSet set = curves();
  app::PlanningModelOptions held, free;
  free.measured_bounds = false;
  auto with = app::fit_planning_model("allreduce-physical", "global-batch", set, held);
  auto without = app::fit_planning_model("allreduce-physical", "global-batch", set, free);
  const double measured = 0.99 - 0.2 / 9 - 0.0004 * 32 - 0.04;
  // The fitted curve passes above the short run (the precondition that makes
  // this test able to fail)...
  ASSERT_GT(*without.planned->metric(32, 1, 8), measured);
  // ...and the planned side does not, at 8 epochs or fewer.
  for (double e : {2.0, 4.0, 7.0, 8.0}) EXPECT_LE(*with.planned->metric(32, 1, e), measured + 1e-12) << e;
  // Elsewhere the point model is untouched.
  EXPECT_DOUBLE_EQ(*with.planned->metric(64, 1, 3), *without.planned->metric(64, 1, 3));
}
