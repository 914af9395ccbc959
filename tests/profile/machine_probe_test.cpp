// The machine probe: a positive CPU time that repeats on one machine, kept
// with a time trial in the store.
#include <gtest/gtest.h>

#include <algorithm>

#include "profile/machine_probe.h"
#include "profile/sample_store.h"
#include "test_util.h"

using namespace trainplan::profile;

TEST(MachineProbe, TakesAPositiveTimeThatRepeats) {
  const double a = machine_probe_s(), b = machine_probe_s();
  EXPECT_GT(a, 0);
  EXPECT_LT(a, 1.0);  // about 2 ms of work, the median of 5 runs
  // Back to back on one machine the same work costs about the same CPU time;
  // a factor of 3 would mean the probe measures something else.
  EXPECT_LT(std::max(a, b) / std::min(a, b), 3.0) << a << " " << b;
}

TEST(MachineProbe, IsKeptWithTheTimeTrialInTheStore) {
  auto dir = tptest::temp_dir("probe_store");
  const std::string path = (dir / "s.db").string();
  {
    SampleStore s(path);
    TrialRecord r;
    r.key = {32, 1, 0};
    StepTiming t;
    t.step_time_s = 0.004;
    t.steps_per_epoch = 100;
    t.probe_s = 0.0021;
    r.timing = t;
    r.epoch_time_s = t.epoch_time_s();
    s.put(r);
    TrialRecord old = r;  // a trial from a profiler without the probe
    old.key = {64, 1, 0};
    old.timing->probe_s = 0;
    s.put(old);
  }
  SampleStore s(path);
  EXPECT_DOUBLE_EQ(s.find({32, 1, 0})->timing->probe_s, 0.0021);
  EXPECT_EQ(s.find({64, 1, 0})->timing->probe_s, 0.0);
}
