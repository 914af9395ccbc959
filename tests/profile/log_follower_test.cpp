#include "profile/log_follower.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iterator>
#include <thread>
#include <fstream>
#include <vector>

#include "test_util.h"

namespace {

using trainplan::profile::LogFollower;
using trainplan::profile::LogFollowerOptions;
using Status = LogFollower::Status;

// Polled fast and stalled soon, so that a test waits little.
LogFollowerOptions quick(double stall_s = 0.3) {
  LogFollowerOptions o;
  o.poll_s = 0.02;
  o.stall_s = stall_s;
  return o;
}

TEST(LogFollower, FileLinesThenStallWhenItStopsGrowing) {
  auto dir = tptest::temp_dir("follow");
  const auto path = tptest::write_file(dir / "log", "a\nb\n");
  auto f = LogFollower::file(path, quick());
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

// on_wait is called only when next() has no line to give and waits for more:
// never while lines are there to read, repeatedly while a file is quiet, and
// while a command is quiet too.
TEST(LogFollower, OnWaitIsCalledOnlyWhileWaiting) {
  auto dir = tptest::temp_dir("follow_wait");
  const auto path = tptest::write_file(dir / "log", "a\nb\n");
  int waits = 0;
  auto o = quick();
  o.on_wait = [&waits] { ++waits; };
  auto f = LogFollower::file(path, o);
  std::string line;
  ASSERT_EQ(f.next(line), Status::kLine);
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(waits, 0);
  EXPECT_EQ(f.next(line), Status::kStalled);
  EXPECT_GE(waits, 2);

  waits = 0;
  o.stall_s = 5;
  auto c = LogFollower::command("echo a; sleep 0.5; echo b", o);
  ASSERT_EQ(c.next(line), Status::kLine);
  EXPECT_EQ(line, "a");
  ASSERT_EQ(c.next(line), Status::kLine);
  EXPECT_EQ(line, "b");
  EXPECT_GE(waits, 1);
}

// A line past the longest kept (a progress bar's \r updates in the log) is
// returned as a marker and the rest of it dropped; the lines after it read on.
TEST(LogFollower, ALineTooLongIsSkippedNotKept) {
  auto dir = tptest::temp_dir("follow");
  const std::string huge(3 * LogFollower::kMostLineBytes + 17, 'x');
  const auto path = tptest::write_file(dir / "log", "a\n" + huge + "\nb\n" + huge);
  auto f = LogFollower::file(path, quick());
  std::string line;
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, "a");
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, LogFollower::kLongLineText);
  EXPECT_EQ(f.line_number(), 2);
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, "b");
  EXPECT_EQ(f.line_number(), 3);
  // The last line, still without its newline: one marker, then nothing more of it.
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, LogFollower::kLongLineText);
  std::ofstream(path, std::ios::app) << "yyy\nc\n";
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, "c");
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

// The job runs in a background group of its own; with SIGTTOU ignored its writes to the
// terminal go through under `stty tostop` instead of stopping it (and the watch) for good.
TEST(LogFollower, TheJobMayWriteToTheTerminalFromItsBackgroundGroup) {
  LogFollowerOptions o;
  o.stall_s = 0;
  const auto before = signal(SIGTTOU, SIG_DFL);  // not ignored already by whoever runs the tests
  auto f = LogFollower::command("sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status", o);
  signal(SIGTTOU, before);
  std::string line;
  ASSERT_EQ(f.next(line), Status::kLine);
  const unsigned long long ignored = std::stoull(line, nullptr, 16);
  EXPECT_TRUE(ignored & (1ULL << (SIGTTOU - 1))) << line;
}

TEST(LogFollower, QuietCommandIsStalled) {
  LogFollowerOptions o;
  o.stall_s = 0.2;
  auto f = LogFollower::command("echo a; sleep 5", o);
  std::string line;
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(f.next(line), Status::kStalled);
}

// A watch started before the job writes its log waits for the file, then reads it.
TEST(LogFollower, AFileNotCreatedYetIsWaitedFor) {
  auto dir = tptest::temp_dir("follow");
  const auto path = (dir / "later.log").string();
  auto f = LogFollower::file(path, quick(5));
  EXPECT_TRUE(f.waiting_for_file());
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    std::ofstream(path) << "first\n";
  });
  std::string line;
  const auto st = f.next(line);
  writer.join();
  ASSERT_EQ(st, Status::kLine);
  EXPECT_EQ(line, "first");
  EXPECT_FALSE(f.waiting_for_file());
}

TEST(LogFollower, AFileNeverCreatedIsStalled) {
  auto f = LogFollower::file("/nonexistent/trainplan.log", quick());
  std::string line;
  EXPECT_EQ(f.next(line), Status::kStalled);
  EXPECT_TRUE(f.waiting_for_file());
}

// A FIFO is opened without waiting for its writer, and read as its lines come.
TEST(LogFollower, AFifoNeitherBlocksTheOpenNorTheWait) {
  auto dir = tptest::temp_dir("follow");
  const auto path = (dir / "pipe").string();
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  auto f = LogFollower::file(path, quick(0.3));  // no writer yet: returns at once
  std::string line;
  EXPECT_EQ(f.next(line), Status::kStalled);  // nothing written: a stall, not a hang
  std::thread writer([&] { std::ofstream(path) << "over the pipe\n"; });
  Status st = f.next(line);
  writer.join();
  ASSERT_EQ(st, Status::kLine);
  EXPECT_EQ(line, "over the pipe");
}

// A directory is no log: refused at once, naming it.
TEST(LogFollower, ADirectoryIsAnInputError) {
  auto dir = tptest::temp_dir("follow");
  auto e = tptest::input_error_of([&] { LogFollower::file(dir.string()); });
  EXPECT_EQ(e.file(), dir.string());
  EXPECT_NE(e.message().find("is a directory"), std::string::npos) << e.message();
}

// A path that cannot be opened (a file where a directory should be) is refused at once; root reads
// any file, so permissions cannot stand in.
TEST(LogFollower, AnUnreadableLogIsAnInputError) {
  auto dir = tptest::temp_dir("follow");
  const auto blocked = tptest::write_file(dir / "not-a-dir", "x");
  EXPECT_THROW(LogFollower::file(blocked + "/log"), trainplan::InputError);
}

// Whether process `pid` has ended (gone, or a zombie no one reaped yet).
bool ended(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close_paren = all.rfind(')');
  return all.empty() || (close_paren != std::string::npos && all.substr(close_paren + 2, 1) == "Z");
}

TEST(LogFollower, TerminatingEndsEveryProcessOfAPipeline) {
  LogFollowerOptions o;
  o.stall_s = 0;
  // The pipeline's first process prints its pid, then sleeps: sh's SIGTERM alone would leave it.
  auto f = LogFollower::command("sh -c 'echo $$; exec sleep 30' | cat", o);
  std::string pid;
  ASSERT_EQ(f.next(pid), Status::kLine);
  ASSERT_FALSE(ended(pid)) << pid;
  f.terminate();
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ended(pid);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "the pipeline's sleep " << pid << " outlived its follower";
}

TEST(LogFollower, AnInterruptEndsTheWaitForAQuietCommand) {
  std::atomic<bool> flag{false};
  LogFollowerOptions o;
  o.stall_s = 0;  // never stalled: only the flag can end the wait
  o.interrupted = &flag;
  auto f = LogFollower::command("sleep 30", o);
  std::thread set([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    flag = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  std::string line;
  EXPECT_EQ(f.next(line), Status::kInterrupted);
  set.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_EQ(f.wait_for_exit(), 128 + 15);  // the job ended by the SIGTERM sent to its group
}

// Read up to the file's end: its lines, until a stall.
std::vector<std::string> lines_until_quiet(LogFollower& f) {
  std::vector<std::string> out;
  std::string line;
  while (f.next(line) == Status::kLine) out.push_back(line);
  return out;
}

// Follows `first` written to dir/log to its end, lets `change` alter the file,
// and returns the follower's next status and the line after it.
// `first` written to a new dir/log, followed to its end (a stall).
struct FollowedFile {
  std::filesystem::path path;
  LogFollower follower;
  std::vector<std::string> lines;  // those read before the end
};
FollowedFile followed_to_end(const std::string& name, const std::string& first) {
  const auto path = tptest::temp_dir(name) / "log";
  tptest::write_file(path, first);
  FollowedFile ff{path, LogFollower::file(path.string(), quick(0.2)), {}};
  ff.lines = lines_until_quiet(ff.follower);
  return ff;
}

std::pair<Status, std::string> after_change(const std::string& name, const std::string& first,
                                            const std::function<void(const std::filesystem::path&)>& change,
                                            std::vector<std::string>* later = nullptr) {
  auto [path, f, read] = followed_to_end(name, first);
  change(path);
  std::string line;
  const Status st = f.next(line);
  if (f.next(line) != Status::kLine) line = "(no line)";
  if (later) *later = lines_until_quiet(f);
  return {st, line};
}

TEST(LogFollower, AFileRewrittenShorterIsReadAgain) {
  const auto [st, line] = after_change("follow-shorter", "first run, epoch 1\nfirst run, epoch 2\n",
                                       [](const auto& p) { tptest::write_file(p, "second\n"); });
  EXPECT_EQ(st, Status::kRestarted);
  EXPECT_EQ(line, "second");
}

TEST(LogFollower, AFileRewrittenPastItsOldEndIsReadAgain) {
  // Truncated and written past the old end before the next read: only the
  // bytes before the offset show it. Growth after that is not a rewrite.
  std::vector<std::string> later;
  const auto [st, line] = after_change(
      "follow-longer", "old 1\nold 2\n",
      [](const auto& p) {
        tptest::write_file(p, "new run, epoch 1\nnew run, epoch 2\n");
        std::ofstream(p, std::ios::app) << "new run, epoch 3\n";
      },
      &later);
  EXPECT_EQ(st, Status::kRestarted);
  EXPECT_EQ(line, "new run, epoch 1");
  EXPECT_EQ(later, (std::vector<std::string>{"new run, epoch 2", "new run, epoch 3"}));
}

TEST(LogFollower, GrowthIsNotARewrite) {
  const auto [st, line] = after_change("follow-growth", "epoch 1\n",
                                       [](const auto& p) { std::ofstream(p, std::ios::app) << "epoch 2\n"; });
  EXPECT_EQ(st, Status::kLine);
  EXPECT_EQ(line, "(no line)");  // the line came as the status's own
}

TEST(LogFollower, AFileReplacedUnderItsNameIsReadToItsEndThenFromTheNewOne) {
  auto [path, f, read] = followed_to_end("follow-replaced", "run 1, epoch 1\n");
  EXPECT_EQ(read.size(), 1u);
  // The old file's last lines, written just before the move (the last without
  // its newline), come first; then the new file, as a new run.
  std::ofstream(path, std::ios::app) << "run 1, epoch 2\n{\"event\":\"done\"}";
  std::filesystem::rename(path, path.string() + ".1");
  tptest::write_file(path, "run 2, epoch 1\n");
  std::string line;
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, "run 1, epoch 2");
  ASSERT_EQ(f.next(line), Status::kLine);
  EXPECT_EQ(line, "{\"event\":\"done\"}");
  EXPECT_EQ(f.next(line), Status::kRestarted);
  EXPECT_EQ(lines_until_quiet(f), (std::vector<std::string>{"run 2, epoch 1"}));
}

TEST(LogFollower, AFileRewrittenToTheSameLengthIsReadAgain) {
  const auto [st, line] = after_change("follow-same", "run1 epoch 1\n",
                                       [](const auto& p) { tptest::write_file(p, "run2 epoch 1\n"); });
  EXPECT_EQ(st, Status::kRestarted);
  EXPECT_EQ(line, "run2 epoch 1");
}

TEST(LogFollower, AJobThatIgnoresSigtermIsKilledAfterTheGrace) {
  LogFollowerOptions o;
  o.stall_s = 0;
  auto f = LogFollower::command("trap '' TERM; echo started; sleep 30", o);
  std::string line;
  ASSERT_EQ(f.next(line), Status::kLine);
  const auto t0 = std::chrono::steady_clock::now();
  f.terminate();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 6.0);
  EXPECT_EQ(f.exit_code(), 128 + 9);
}

}  // namespace
