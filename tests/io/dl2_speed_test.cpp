#include "io/dl2_speed.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "test_util.h"

using namespace trainplan;

namespace {
const char* kFixture =
    "# a comment\n"
    "('resnet-50', 'dist_sync', 32, 1, 1, [15.783], [1.908], [0.547])\n"
    "\n"
    "('resnet-50', 'dist_sync', 32, 1, 2, [7.702, 7.6], [1.942], [0.436, 0.423])\n"
    "('vgg-16', 'dist_async', 32, 2, 2, [4.0, 0.0], [1.3, 0.9], [0.5, 0.5])\n";
}

TEST(Dl2Speed, ParsesTuples) {
  auto t = io::parse_dl2_speed(kFixture, "speed.txt");
  ASSERT_EQ(t.rows.size(), 3u);
  const auto& r = t.rows[1];
  EXPECT_EQ(r.line, 4);
  EXPECT_EQ(r.model, "resnet-50");
  EXPECT_EQ(r.mode, "dist_sync");
  EXPECT_EQ(r.total_batch, 32);
  EXPECT_EQ(r.num_ps, 1);
  EXPECT_EQ(r.num_workers, 2);
  ASSERT_EQ(r.worker_speed.size(), 2u);
  EXPECT_DOUBLE_EQ(r.worker_speed[1], 7.6);
  EXPECT_EQ(r.ps_cpu.size(), 1u);
  EXPECT_EQ(r.worker_cpu.size(), 2u);
  EXPECT_TRUE(r.sync());
  EXPECT_FALSE(r.stalled());
  EXPECT_FALSE(t.rows[2].sync());
  EXPECT_TRUE(t.rows[2].stalled());
}

TEST(Dl2Speed, JobSpeedUnderBothReadings) {
  auto t = io::parse_dl2_speed(kFixture, "speed.txt");
  const auto& r = t.rows[1];
  // samples/s per worker: a sync step moves M = 32 samples; rate = sum / M.
  EXPECT_NEAR(r.job_speed(io::Dl2SpeedUnit::kSamplesPerWorker), (7.702 + 7.6) / 32, 1e-12);
  // steps/s per worker: sync workers move in lockstep; the mean.
  EXPECT_NEAR(r.job_speed(io::Dl2SpeedUnit::kStepsPerWorker), (7.702 + 7.6) / 2, 1e-12);
  EXPECT_NEAR(t.rows[2].job_speed(io::Dl2SpeedUnit::kStepsPerWorker), 4.0, 1e-12);  // async: sum
  EXPECT_EQ(io::parse_dl2_speed_unit("steps"), io::Dl2SpeedUnit::kStepsPerWorker);
  EXPECT_THROW(io::parse_dl2_speed_unit("bytes"), InputError);
}

TEST(Dl2Speed, RejectsMalformedLineWithFileAndLine) {
  std::string bad = std::string(kFixture) + "('vgg-16', 'dist_sync', 32, 1, [1.0], [1.0], [1.0])\n";
  try {
    io::parse_dl2_speed(bad, "speed.txt");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "speed.txt");
    EXPECT_EQ(e.line(), 6) << e.what();
  }
}

// Columns count from the line's start, leading blanks included.
TEST(Dl2Speed, AnIndentedLinesErrorNamesItsColumnInTheFile) {
  try {
    io::parse_dl2_speed("   ('r', 'dist_sync', 32, 1, 2, [1, 7.7], [1.9], [0.4, 0.4]\n", "speed.txt");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("column 60"), std::string::npos) << e.what();
  }
}

TEST(Dl2Speed, RejectsWrongListLengthAndBadNumbers) {
  try {
    io::parse_dl2_speed("('m', 'dist_sync', 32, 1, 3, [1.0, 2.0], [1.0], [1.0])\n", "f.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.field(), "worker_speed");
  }
  EXPECT_THROW(io::parse_dl2_speed("('m', 'dist_sync', 32, 0, 1, [1.0], [1.0], [1.0])\n", "f"), InputError);
  EXPECT_THROW(io::parse_dl2_speed("('m', 'dist_sync', 32, 1, 1, [nan], [1.0], [1.0])\n", "f"), InputError);
  EXPECT_THROW(io::parse_dl2_speed("('m', 'dist_sync', 32, 1, 1, [1.0], [1.0], [1.0]\n", "f"), InputError);
  EXPECT_THROW(io::parse_dl2_speed("('m', 'dist_sync', 32, 1, 1, [1.0], [1.0], [1.0]) x\n", "f"), InputError);
  EXPECT_THROW(io::parse_dl2_speed("# only a comment\n", "f"), InputError);
  EXPECT_THROW(io::read_dl2_speed("/nonexistent/config_speed.txt"), InputError);
}

TEST(Dl2Speed, ReadsTheSharedTable) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto t = io::read_dl2_speed(tptest::shared_data_dir() + "/dl2/config_speed.txt");
  EXPECT_EQ(t.rows.size(), 420u);
  int stalled = 0;
  for (const auto& r : t.rows) stalled += r.stalled();
  EXPECT_GT(stalled, 0);  // a few vgg-16 runs reported speed 0
}

// A mode that says neither sync nor async, and parameter-server loads that do
// not match their count, are refused naming the line and the field.
TEST(Dl2Speed, AModeOfNeitherKindAndAMiscountedLoadAreRefused) {
  auto weird = tptest::input_error_of(
      [] { io::parse_dl2_speed("('resnet-50', 'dist_weird', 32, 1, 1, [15.7], [1.9], [0.5])\n", "s.txt"); });
  EXPECT_EQ(weird.line(), 1);
  EXPECT_EQ(weird.field(), "mode");
  auto ps = tptest::input_error_of(
      [] { io::parse_dl2_speed("('resnet-50', 'dist_sync', 32, 2, 1, [15.7], [1.9], [0.5])\n", "s.txt"); });
  EXPECT_EQ(ps.field(), "ps_cpu");
}
