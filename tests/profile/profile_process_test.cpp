// Process groups: a failing rank stops its peers, a hung group is killed at
// its timeout, cancellation stops it, and stdout/stderr are captured.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <filesystem>
#include <fstream>
#include <string>
#include <signal.h>
#include <unistd.h>

#include "profile/process_group.h"

using namespace trainplan::profile;

TEST(ProfileProcess, CapturesRank0StdoutAndMergedStderrTail) {
  ProcessGroupOptions o;
  o.stderr_tail_bytes = 16;
  auto r = run_process_group({"echo zero; echo err0 >&2", "echo one; echo 0123456789abcdefXYZ >&2"}, o);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.stdout0, "zero\n");  // rank 1's stdout is discarded
  EXPECT_LE(r.stderr_tail.size(), 16u);
  EXPECT_FALSE(r.stderr_tail.empty());
}

TEST(ProfileProcess, AFailedRankKillsItsPeers) {
  ProcessGroupOptions o;
  o.timeout_s = 60;
  o.kill_grace_s = 0.5;
  auto r = run_process_group({"sleep 30", "echo dying >&2; exit 3"}, o);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.failed_index, 1);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.stderr_tail.find("dying"), std::string::npos);
}

TEST(ProfileProcess, TimeoutKillsTheGroupEvenIfItIgnoresSigterm) {
  ProcessGroupOptions o;
  o.timeout_s = 0.5;
  o.kill_grace_s = 0.5;
  auto r = run_process_group({"trap '' TERM; sleep 30; sleep 30"}, o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.failed_index, -1);
}

// Time in a queue is not the run's: the timeout restarts where the group
// says its job left the queue (srun's line, split across two writes here),
// and bounds the run afresh; without that line it counts from the start.
TEST(ProfileProcess, TheTimeoutRestartsWhenTheJobLeavesTheQueue) {
  ProcessGroupOptions o;
  o.timeout_s = 3;
  o.kill_grace_s = 0.5;
  o.timeout_restarts_at = "^srun: job [0-9]+ has been allocated resources";
  // A program's own line with those words restarts nothing: only srun's whole line does.
  const std::string job =
      "echo 'srun: job 7 queued and waiting for resources' >&2; echo '0: has been allocated resources' >&2; "
      "sleep 1.5; printf 'srun: job 7 has been all' >&2; sleep 0.3; printf 'ocated resources\n' >&2; sleep 1.5; "
      "echo ran";
  auto r = run_process_group({job}, o);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.stdout0, "ran\n");
  EXPECT_GE(r.restarted_after_s, 1.7);  // at the line's end, after the pause inside it
  EXPECT_LT(r.restarted_after_s, 3);
  // The run after it is still bounded.
  auto hung = run_process_group({"echo 'srun: job 8 has been allocated resources' >&2; sleep 30"}, o);
  EXPECT_TRUE(hung.timed_out);
  EXPECT_GE(hung.restarted_after_s, 0);
  o.timeout_restarts_at.clear();
  auto plain = run_process_group({job}, o);
  EXPECT_TRUE(plain.timed_out);
  EXPECT_LT(plain.restarted_after_s, 0);
}

TEST(ProfileProcess, CancelStopsTheGroup) {
  std::atomic<bool> cancel{false};
  ProcessGroupOptions o;
  o.cancel = &cancel;
  o.kill_grace_s = 0.5;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  auto r = run_process_group({"sleep 30", "sleep 30"}, o);
  t.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
}

TEST(ProfileProcess, CommandNotFoundIs127) {
  auto r = run_process_group({"/nonexistent/trainer --batch 3"}, {});
  EXPECT_EQ(r.failed_index, 0);
  EXPECT_EQ(r.exit_code, 127);
}

// A chatty program: 8 MB of log lines before its JSON line, against a 1 MiB
// budget. Only the lines with a '{' are kept, so the JSON line is read; when
// the JSON lines themselves pass the budget, the result says so.
TEST(ProfileProcess, OnlyJsonLinesAreKeptAndTruncationIsSaid) {
  ProcessGroupOptions o;
  o.stdout_json_lines_only = true;
  o.stdout_max_bytes = 1 << 20;
  auto r = run_process_group({"yes 'step 12 loss 0.5 lr 0.1 ...' | head -c 8000000; echo; "
                              "printf '{\"event\":\"done\"}'"},
                             o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.stdout0, "{\"event\":\"done\"}");  // a last line without its newline
  EXPECT_FALSE(r.stdout_truncated);
  r = run_process_group({"yes '{\"event\":\"other\"}' | head -c 2000000; echo '{\"event\":\"done\"}'"}, o);
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_LE(r.stdout0.size(), o.stdout_max_bytes);
  EXPECT_EQ(r.stdout0.find("{\"event\":\"done\"}"), std::string::npos);
  // One line longer than the budget: it held a '{', so it is a loss to say.
  r = run_process_group({"head -c 1500000 /dev/zero | tr '\\0' 'a'; echo '{}'"}, o);
  EXPECT_TRUE(r.stdout_truncated);
  r = run_process_group({"head -c 1500000 /dev/zero | tr '\\0' 'a'; echo; echo '{}'"}, o);
  EXPECT_FALSE(r.stdout_truncated);
  EXPECT_EQ(r.stdout0, "{}\n");
}

// A descendant that leaves the group (setsid, as a daemon or some
// launchers do) is not reached by killing the group: it comes back to this
// process (a child subreaper) when its parent dies, and is killed then.
TEST(ProfileProcess, ADescendantInItsOwnSessionIsKilledWithTheGroup) {
  const std::string pidfile = (std::filesystem::temp_directory_path() /
                               ("escaped_" + std::to_string(getpid()) + ".pid")).string();
  std::filesystem::remove(pidfile);
  trainplan::profile::ProcessGroupOptions o;
  o.timeout_s = 1;
  o.kill_grace_s = 0.2;
  auto r = trainplan::profile::run_process_group(
      {"setsid sh -c 'echo $$ > " + pidfile + "; exec sleep 300' & sleep 300"}, o);
  EXPECT_TRUE(r.timed_out);
  std::ifstream in(pidfile);
  pid_t escaped = 0;
  ASSERT_TRUE(in >> escaped) << "the escaped process never started";
  EXPECT_EQ(r.escaped_killed, 1);
  const bool alive = kill(escaped, 0) == 0;
  if (alive) kill(escaped, SIGKILL);
  EXPECT_FALSE(alive) << "pid " << escaped << " outlived its trial";
  std::filesystem::remove(pidfile);
}
