#include "profile/log_follower.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_util.h"

namespace {

using trainplan::profile::LogFollower;
using trainplan::profile::LogFollowerOptions;
using Status = LogFollower::Status;

TEST(LogFollower, FileLinesThenStallWhenItStopsGrowing) {
  auto dir = tptest::temp_dir("follow");
  const auto path = tptest::write_file(dir / "log", "a\nb\n");
  LogFollowerOptions o;
  o.poll_s = 0.02;
  o.stall_s = 0.3;
  auto f = LogFollower::file(path, o);
  std::string line;
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, "a");
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, "b");
  EXPECT_EQ(f.line_number(), 2);
  // The file grows: its new line is read after the old end.
  std::ofstream(path, std::ios::app) << "c\n";
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, "c");
  EXPECT_EQ(f.line_number(), 3);
  EXPECT_EQ(f.next(line), Status::kStalled);
  EXPECT_GE(f.quiet_s(), 0.3);
}

TEST(LogFollower, CommandStdoutEndsWithItsExitCode) {
  LogFollowerOptions o;
  o.stall_s = 0;
  auto f = LogFollower::command("printf 'x\\ny'; exit 3", o);
  std::string line;
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, "x");
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, "y");  // the last line had no newline
  EXPECT_EQ(f.next(line), Status::kEnded);
  EXPECT_EQ(f.exit_code(), 3);
}

TEST(LogFollower, QuietCommandIsStalled) {
  LogFollowerOptions o;
  o.stall_s = 0.2;
  auto f = LogFollower::command("echo a; sleep 5", o);
  std::string line;
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(f.next(line), Status::kStalled);
}

TEST(LogFollower, MissingFileIsAnInputError) {
  EXPECT_THROW(LogFollower::file("/nonexistent/trainplan.log"), trainplan::InputError);
}

}  // namespace
