#include "app/live_watch.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace {

using trainplan::app::WatchOptions;
using trainplan::app::LiveWatch;

// A watch for `target`, its warnings naming `source`.
WatchOptions watching(double target, const char* source = "log") {
  WatchOptions o;
  o.target = target;
  o.source = source;
  return o;
}

std::string epoch_line(int k, double metric, const char* name = "accuracy") {
  return fmt::format(R"({{"event":"epoch","epoch":{},"epoch_time_s":10,"metric":{},"metric_name":"{}"}})", k, metric,
                     name);
}

TEST(LiveWatch, ForecastsEachEpochAndWarnsOnBadLinesWithTheirNumber) {
  WatchOptions o;
  o.target = 0.9;
  o.deadline_s = 1000;
  o.source = "job.log";
  LiveWatch s(o);
  long n = 0;
  EXPECT_FALSE(s.feed("starting the job", ++n) == std::nullopt);  // not JSON: a warning
  for (int k = 1; k <= 6; ++k) {
    auto u = s.feed(epoch_line(k, 0.95 - 0.6 * std::exp(-0.2 * k)), ++n);
    ASSERT_TRUE(u);
    EXPECT_EQ((*u)["event"], "forecast");
    EXPECT_EQ((*u)["epoch"], k);
    EXPECT_EQ((*u)["line"], n);
    EXPECT_EQ((*u)["direction"], "max");
    EXPECT_TRUE(u->contains("deadline"));
  }
  auto w = s.feed("{\"event\": \"epoch\", broken", ++n);  // a JSON object that is not whole
  ASSERT_TRUE(w);
  EXPECT_EQ((*w)["event"], "warning");
  EXPECT_EQ((*w)["line"], 8);
  EXPECT_NE((*w)["message"].get<std::string>().find("job.log:8"), std::string::npos);
  const auto& last = s.last();
  ASSERT_TRUE(last);
  EXPECT_TRUE((*last)["predicted_epoch"].is_number());
  EXPECT_GT((*last)["predicted_epoch"].get<double>(), 6);
  EXPECT_FALSE(s.feed(R"({"event":"step_timing"})", ++n));  // ignored by the protocol
  auto d = s.feed(R"({"event":"done"})", ++n);
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)["event"], "done");
  EXPECT_TRUE(s.done());
}

// An event a typo away from the protocol's is warned of once (its epochs
// would go unseen); a program's own events are not.
TEST(LiveWatch, AMisspeltEventIsWarnedOfOnce) {
  LiveWatch s(watching(0.9, "job.log"));
  auto w = s.feed(R"({"event":"epoc","epoch":1,"epoch_time_s":10,"metric":0.5})", 1);
  ASSERT_TRUE(w);
  EXPECT_EQ((*w)["event"], "warning");
  EXPECT_EQ((*w)["field"], "event");
  EXPECT_NE((*w)["message"].get<std::string>().find("job.log:1: column 'event': 'epoc'"), std::string::npos) << *w;
  EXPECT_NE((*w)["message"].get<std::string>().find("did you mean 'epoch'?"), std::string::npos) << *w;
  EXPECT_FALSE(s.feed(R"({"event":"epoc","epoch":2,"epoch_time_s":10,"metric":0.6})", 2));  // once
  auto other = s.feed(R"({"event":"Done"})", 3);  // case is no excuse either
  ASSERT_TRUE(other);
  EXPECT_EQ((*other)["event"], "warning");
  EXPECT_FALSE(s.feed(R"({"event":"checkpoint_saved"})", 4));
  EXPECT_FALSE(s.feed(R"({"event":"step_timing"})", 5));
  for (const char* own : {"node", "note", "none", "epochs"})  // a program's own, near "done" or "epoch"
    EXPECT_FALSE(s.feed(fmt::format(R"({{"event":"{}"}})", own), 6)) << own;
}

// A garbled epoch count past any run is skipped with a warning, and the real
// epochs after it are read on (taken, it would make every later epoch "not
// follow" it).
TEST(LiveWatch, AnEpochPastAnyRunIsSkipped) {
  LiveWatch s(watching(0.9, "job.log"));
  long n = 0;
  for (int k = 1; k <= 3; ++k) ASSERT_EQ((*s.feed(epoch_line(k, 0.5 + 0.1 * k), ++n))["event"], "forecast");
  auto w = s.feed(R"({"event":"epoch","epoch":1e300,"epoch_time_s":2,"metric":0.9})", ++n);
  ASSERT_TRUE(w);
  EXPECT_EQ((*w)["event"], "warning");
  EXPECT_EQ((*w)["field"], "epoch");
  auto u = s.feed(epoch_line(4, 0.95), ++n);
  ASSERT_TRUE(u);
  EXPECT_EQ((*u)["event"], "forecast") << *u;
  EXPECT_EQ((*u)["epoch"], 4);
}

// An accuracy (a growing metric that has stayed in [0, 1]) never passes 1:
// a target above it is never met, however far a fitted curve climbs.
TEST(LiveWatch, AnAccuracyNeverPassesOne) {
  WatchOptions o;
  o.target = 1.5;
  LiveWatch s(o);
  std::optional<nlohmann::json> u;
  for (int k = 1; k <= 8; ++k) u = s.feed(epoch_line(k, 0.95 - 0.6 * std::exp(-0.2 * k)), k);
  ASSERT_TRUE(u);
  EXPECT_TRUE((*u)["never"].get<bool>()) << u->dump();
  EXPECT_TRUE((*u)["predicted_epoch"].is_null()) << u->dump();
  // Within [0, 1] the curve decides, as before.
  WatchOptions reachable = o;
  reachable.target = 0.9;
  LiveWatch r(reachable);
  for (int k = 1; k <= 8; ++k) u = r.feed(epoch_line(k, 0.95 - 0.6 * std::exp(-0.2 * k)), k);
  EXPECT_FALSE((*u)["never"].get<bool>()) << u->dump();
  // A score out of 100 may start below 1: its name does not say share, so the curve decides.
  LiveWatch bleu(o);
  for (int k = 1; k <= 8; ++k) u = bleu.feed(epoch_line(k, 0.1 * k, "bleu"), k);
  EXPECT_FALSE((*u)["never"].get<bool>()) << u->dump();
}

TEST(LiveWatch, DirectionFollowsTheMetricName) {
  WatchOptions o;
  o.target = 0.5;
  LiveWatch s(o);
  auto u = s.feed(epoch_line(1, 2.0, "val_loss"), 1);
  ASSERT_TRUE(u);
  EXPECT_EQ((*u)["direction"], "min");
}

TEST(LiveWatch, TextHasABarOnlyWhenAsked) {
  WatchOptions o;
  o.target = 0.9;
  LiveWatch s(o);
  std::optional<nlohmann::json> u;
  for (int k = 1; k <= 4; ++k) u = s.feed(epoch_line(k, 0.5 + 0.05 * k), k);
  EXPECT_EQ(LiveWatch::text(*u, 10).rfind("[", 0), 0u);
  EXPECT_EQ(LiveWatch::text(*u, 0).rfind("epoch 4", 0), 0u);
}

}  // namespace

// In a profiling run's live log a time trial's runs each end with a done line and no epoch: not
// news, so no update. A training trial's done line still reports its last forecast, or that it saw
// no metric.
TEST(LiveWatch, ATimeTrialsDoneLinesAreNotNews) {
  LiveWatch s(watching(0.9, "s.db.live"));
  long n = 0;
  ASSERT_TRUE(s.feed(R"({"event":"trial_start","batch":32,"workers":1,"epochs":0})", ++n));
  EXPECT_FALSE(s.feed(R"({"event":"step_timing"})", ++n));
  EXPECT_FALSE(s.feed(R"({"event":"done"})", ++n));
  EXPECT_FALSE(s.feed(R"({"event":"done"})", ++n));
  auto end = s.feed(R"({"event":"trial_end","status":"ok"})", ++n);
  ASSERT_TRUE(end);
  EXPECT_EQ((*end)["event"], "trial_end");
  ASSERT_TRUE(s.feed(R"({"event":"trial_start","batch":32,"workers":1,"epochs":2})", ++n));
  ASSERT_TRUE(s.feed(epoch_line(1, 0.8), ++n));
  auto done = s.feed(R"({"event":"done"})", ++n);
  ASSERT_TRUE(done);
  EXPECT_EQ((*done)["event"], "done");
  EXPECT_FALSE(s.done());  // a trial's done line ends the trial, not the run
  // A training trial that logged no metric still says it ended without one.
  ASSERT_TRUE(s.feed(R"({"event":"trial_start","batch":64,"workers":1,"epochs":2})", ++n));
  auto bare = s.feed(R"({"event":"done"})", ++n);
  ASSERT_TRUE(bare);
  EXPECT_EQ((*bare)["event"], "done");
}

namespace {

TEST(LiveWatch, AShareLeavingZeroToOneIsNotTakenAndItsTimeCounts) {
  LiveWatch s(watching(0.9));
  for (int k = 1; k <= 3; ++k) s.feed(epoch_line(k, 0.5 + 0.1 * k), k);
  auto bad = s.feed(epoch_line(4, 1.7), 4);
  ASSERT_TRUE(bad);
  EXPECT_EQ((*bad)["event"], "warning");
  EXPECT_EQ((*bad)["field"], "metric");
  EXPECT_NE((*bad)["message"].get<std::string>().find("accuracy 1.7 is outside [0, 1]"), std::string::npos)
      << bad->dump();
  auto next = s.feed(epoch_line(5, 0.85), 5);
  ASSERT_TRUE(next);
  EXPECT_EQ((*next)["event"], "forecast");
  EXPECT_DOUBLE_EQ((*next)["best"].get<double>(), 0.85);   // 1.7 never taken
  EXPECT_DOUBLE_EQ((*next)["elapsed_s"].get<double>(), 50);  // five epochs of 10 s
  // An accuracy out of 100 from its first epoch is no share: read as it is.
  LiveWatch percent(watching(90));
  for (int k = 1; k <= 3; ++k) {
    auto u = percent.feed(epoch_line(k, 50.0 + 10 * k), k);
    ASSERT_TRUE(u);
    EXPECT_EQ((*u)["event"], "forecast");
  }
}

TEST(LiveWatch, AGarbledEpochLineCountsAsAnEpochThatRan) {
  // Epochs without numbers, the third garbled: the fourth stands for two, and the elapsed time holds four.
  LiveWatch s(watching(0.9));
  auto line = [](double m) { return fmt::format(R"({{"event":"epoch","epoch_time_s":10,"metric":{}}})", m); };
  s.feed(line(0.5), 1);
  s.feed(line(0.6), 2);
  auto bad = s.feed(R"({"event":"epoch","epoch_time_s":10,"metric":0.6)", 3);
  ASSERT_TRUE(bad);
  EXPECT_EQ((*bad)["event"], "warning");
  EXPECT_NE((*bad)["message"].get<std::string>().find("counted as epoch 3"), std::string::npos) << bad->dump();
  auto u = s.feed(line(0.7), 4);
  ASSERT_TRUE(u);
  EXPECT_EQ((*u)["epoch"], 4);
  EXPECT_DOUBLE_EQ((*u)["elapsed_s"].get<double>(), 40);
}

}  // namespace

namespace {

// A profiling run stopped before its plan's end says so where it ends.
TEST(LiveWatch, AnInterruptedProfileSaysSo) {
  LiveWatch s(watching(0.9));
  auto stopped = s.feed(R"({"event":"profile_done","interrupted":true})", 1);
  ASSERT_TRUE(stopped);
  EXPECT_EQ((*stopped)["event"], "profile_done");
  EXPECT_TRUE((*stopped)["interrupted"].get<bool>());
  EXPECT_NE(LiveWatch::text(*stopped).find("interrupted"), std::string::npos);
  LiveWatch t(watching(0.9));
  auto whole = t.feed(R"({"event":"profile_done","interrupted":false})", 1);
  ASSERT_TRUE(whole);
  EXPECT_FALSE((*whole)["interrupted"].get<bool>());
}

}  // namespace
