// SpinBackoff (src/train/spin_backoff.h): which waits count as a spinning
// loop's repeats, and when the loop is told to pause.
#include "train/spin_backoff.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using trainplan::train::SpinBackoff;
using trainplan::train::SpinBackoffOptions;

constexpr int64_t kUs = 1000;

// A loop whose every wait returns one ready event 1 us after it began and
// begins again 1 us later: the first repeats_before_pause repeats pass, every
// wait after them pauses.
TEST(SpinBackoff, PausesAfterTheToleratedRepeats) {
  SpinBackoff b(SpinBackoffOptions{.repeats_before_pause = 4, .quick_ns = 20 * kUs, .pause_ns = 50 * kUs});
  int64_t t = 1'000'000;
  std::vector<bool> paused;
  for (int k = 0; k < 8; ++k) {
    paused.push_back(b.before_wait(t));
    b.after_wait(1, t + kUs);
    t += 2 * kUs;
  }
  EXPECT_EQ(paused, (std::vector<bool>{false, false, false, false, false, true, true, true}));
  EXPECT_EQ(b.repeats(), 7);
}

// A wait after a timeout or an error, or one that begins after `quick`, is
// the loop waiting, not spinning: the run starts again.
TEST(SpinBackoff, AnIdleOrLateWaitEndsTheRun) {
  SpinBackoff b(SpinBackoffOptions{.repeats_before_pause = 1, .quick_ns = 20 * kUs, .pause_ns = 50 * kUs});
  int64_t t = 0;
  auto spin = [&](int events) {
    const bool p = b.before_wait(t);
    b.after_wait(events, t + kUs);
    t += 2 * kUs;
    return p;
  };
  spin(1);
  spin(1);
  EXPECT_TRUE(spin(1));  // second repeat
  EXPECT_TRUE(spin(0));  // third repeat; this wait timed out
  EXPECT_FALSE(spin(1));  // after a timeout: not a repeat
  EXPECT_EQ(b.repeats(), 0);
  spin(-1);               // a repeat; the wait failed
  EXPECT_FALSE(spin(1));  // after an error: not a repeat
  EXPECT_EQ(b.repeats(), 0);
  spin(1);
  EXPECT_TRUE(spin(1));
  t += 30 * kUs;  // begins 31 us after the last return
  EXPECT_FALSE(spin(1));
  EXPECT_EQ(b.repeats(), 0);
}

}  // namespace
