#include "profile/trial_log_line.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace {

using trainplan::InputError;
using trainplan::profile::null_nonfinite_tokens;
using trainplan::profile::parse_trial_log_line;
using Kind = trainplan::profile::TrialLogLine::Kind;

TEST(TrialLogLine, ReadsEpochDoneAndOtherLines) {
  auto e = parse_trial_log_line(
      R"(rank0: {"event":"epoch","epoch":3,"epoch_time_s":2.5,"metric":0.9,"metric_name":"accuracy"})", "f", 1);
  EXPECT_EQ(e.kind, Kind::kEpoch);
  EXPECT_EQ(*e.epoch, 3);
  EXPECT_EQ(*e.epoch_time_s, 2.5);
  EXPECT_EQ(*e.metric, 0.9);
  EXPECT_EQ(e.metric_name, "accuracy");
  EXPECT_EQ(parse_trial_log_line(R"({"event":"done"})", "f", 2).kind, Kind::kDone);
  EXPECT_EQ(parse_trial_log_line(R"({"event":"step_timing"})", "f", 3).kind, Kind::kOther);
  EXPECT_EQ(parse_trial_log_line("   ", "f", 4).kind, Kind::kBlank);
}

TEST(TrialLogLine, BadLinesNameFileLineAndField) {
  try {
    parse_trial_log_line("Epoch 3 done, loss 0.2", "run.log", 7);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "run.log");
    EXPECT_EQ(e.line(), 7);
    EXPECT_EQ(e.field(), "line");
  }
  try {
    parse_trial_log_line(R"({"event":"epoch","epoch":2,"epoch_time_s":-1})", "run.log", 9);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 9);
    EXPECT_EQ(e.field(), "epoch_time_s");
  }
  EXPECT_THROW(parse_trial_log_line(R"({"event":"epoch",)", "f", 1), InputError);
  // Past the bounds `profile` reads epochs within (a sum of such epochs is infinite).
  for (const char* t : {"1e308", "2e9", "1e-12"})
    try {
      parse_trial_log_line(std::string(R"({"event":"epoch","epoch":5,"epoch_time_s":)") + t + "}", "run.log", 11);
      FAIL() << t;
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), 11);
      EXPECT_EQ(e.field(), "epoch_time_s");
      EXPECT_NE(std::string(e.what()).find("outside"), std::string::npos) << e.what();
    }
  EXPECT_EQ(*parse_trial_log_line(R"({"event":"epoch","epoch":5,"epoch_time_s":9e8})", "f", 1).epoch_time_s, 9e8);
}

// A metric that is not a number loses the metric only: the epoch ran, and its time is kept.
TEST(TrialLogLine, AMetricThatIsNoNumberKeepsTheEpochAndItsTime) {
  const auto l = parse_trial_log_line(R"({"event":"epoch","epoch":3,"epoch_time_s":2.5,"metric":"high"})", "f", 1);
  EXPECT_EQ(l.kind, trainplan::profile::TrialLogLine::Kind::kEpoch);
  EXPECT_FALSE(l.metric.has_value());
  EXPECT_EQ(l.unreadable_metric, "\"high\"");
  ASSERT_TRUE(l.epoch_time_s.has_value());
  EXPECT_DOUBLE_EQ(*l.epoch_time_s, 2.5);
}

// Python's json.dumps writes NaN and Infinity, which JSON has not: the field
// is named, not the line called "not JSON".
TEST(TrialLogLine, ANanFieldIsNamed) {
  std::string text = R"({"event":"epoch","note":"NaN, Infinity","epoch_time_s": NaN,"metric":-Infinity,"x":[Infinity]})";
  const auto keys = null_nonfinite_tokens(text);
  EXPECT_EQ(keys, (std::vector<std::string>{"epoch_time_s", "metric", ""}));
  EXPECT_EQ(text, R"({"event":"epoch","note":"NaN, Infinity","epoch_time_s": null,"metric":null,"x":[null]})");
  std::string plain = R"({"event":"done","why":"NaN"})";
  EXPECT_TRUE(null_nonfinite_tokens(plain).empty());
  // A metric so written is absent, and said; an epoch time so written is an error naming it.
  const auto nan_metric = parse_trial_log_line(R"({"event":"epoch","epoch":2,"epoch_time_s":1.5,"metric":NaN})", "f", 3);
  EXPECT_EQ(nan_metric.kind, Kind::kEpoch);
  EXPECT_FALSE(nan_metric.metric.has_value());
  EXPECT_EQ(*nan_metric.epoch_time_s, 1.5);
  EXPECT_EQ(nan_metric.nonfinite, std::vector<std::string>{"metric"});
  // A field beside them so written (a loss) does not cost the epoch.
  const auto nan_loss = parse_trial_log_line(R"({"event":"epoch","epoch_time_s":30,"metric":0.8,"loss":NaN})", "f", 5);
  EXPECT_EQ(*nan_loss.metric, 0.8);
  try {
    parse_trial_log_line(R"({"event":"epoch","epoch":2,"epoch_time_s":NaN,"metric":0.5})", "run.log", 4);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.field(), "epoch_time_s");
    EXPECT_NE(std::string(e.what()).find("diverge"), std::string::npos) << e.what();
  }
}

}  // namespace

namespace {

// A key written twice is named (the parser would keep the last value
// silently), and a number past a double's range is said to be one, not
// "not a JSON object".
TEST(TrialLogLine, ATwiceNamedKeyAndAnOverflowingNumberAreSaid) {
  try {
    parse_trial_log_line(R"({"event":"epoch","epoch":7,"epoch_time_s":2.3,"metric":0.8,"metric":0.1})", "run.log", 4);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.field(), "metric");
    EXPECT_NE(e.message().find("twice"), std::string::npos) << e.what();
  }
  try {
    parse_trial_log_line(R"({"event":"epoch","epoch":8,"epoch_time_s":1e400})", "run.log", 5);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(e.message().find("overflow"), std::string::npos) << e.what();
  }
  // A program's own line may repeat a key as its logger allows; NaN beside a
  // repeated key does not hide it.
  EXPECT_EQ(parse_trial_log_line(R"({"level":"info","msg":"a","msg":"b"})", "run.log", 7).kind, Kind::kOther);
  try {
    parse_trial_log_line(R"({"event":"epoch","epoch":9,"epoch_time_s":2.0,"metric":NaN,"epoch":10})", "run.log", 8);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "epoch") << e.what();
  }
  // NaN is still read as absent, not taken for a broken line.
  auto nan = parse_trial_log_line(R"({"event":"epoch","epoch":9,"epoch_time_s":2.0,"metric":NaN})", "run.log", 6);
  EXPECT_EQ(nan.kind, Kind::kEpoch);
  EXPECT_FALSE(nan.metric);
}

}  // namespace

TEST(TrialLogLine, APrefixMayHoldBraces) {
  auto e = parse_trial_log_line(R"([rank{0}] {"event":"epoch","epoch":2,"epoch_time_s":1.5})", "f", 1);
  EXPECT_EQ(e.kind, Kind::kEpoch);
  EXPECT_EQ(*e.epoch_time_s, 1.5);
  EXPECT_EQ(trainplan::profile::protocol_object_start("a {b} {\"x\":1}"), 6u);
  EXPECT_EQ(trainplan::profile::protocol_object_start("no braces"), std::string::npos);
  // No object anywhere: the first brace, whose error names the line.
  EXPECT_EQ(trainplan::profile::protocol_object_start("a {b} {c"), 2u);
  EXPECT_THROW(parse_trial_log_line("a {b} {c", "f", 2), InputError);
}
