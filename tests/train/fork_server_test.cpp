// The trainer's fork server (train/fork_server.h), started as the profiler
// starts it (profile/trainer_fork_server.h): a run through trainplan-forkrun
// is the run a plain launch makes, exits as it does, and ends when its client
// is killed. Skipped when the optional trainer was not built.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "profile/launcher.h"
#include "profile/sample_store.h"
#include "profile/trainer_fork_server.h"
#include "test_util.h"
#include "train/trainer_processes.h"

namespace {

namespace fs = std::filesystem;
using namespace tptrain;
using trainplan::profile::TrainerForkServer;

// The processes `pid` has started and not yet reaped.
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> v;
  for (pid_t c; in >> c;) v.push_back(c);
  return v;
}

bool wait_until(const std::function<bool()>& done, double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

std::string run_args(int rank, int port, const std::string& extra) {
  return "--workload lenet-mnist --batch 32 --workers 2 --rank " + std::to_string(rank) +
         " --master-addr 127.0.0.1 --master-port " + std::to_string(port) + " " + extra;
}

TEST(TrainForkServer, ARunIsAPlainLaunchsRun) {
  REQUIRE_TRAINER("mnist");
  TrainerForkServer server(trainer_path());
  ASSERT_TRUE(server.active()) << server.why_not();
  const std::vector<std::string> launcher{server.client_path(), server.socket_path()};
  const std::string extra = "--epochs 1 --train-subset 2000 --test-subset 500 --seed 3";
  int p1 = trainplan::profile::free_loopback_port(), p2 = trainplan::profile::free_loopback_port();
  auto plain = run_processes({run_args(0, p1, extra), run_args(1, p1, extra)});
  auto forked = run_processes({run_args(0, p2, extra), run_args(1, p2, extra)}, launcher);
  for (const auto& r : {plain[0], plain[1], forked[0], forked[1]}) ASSERT_EQ(r.exit_code, 0) << r.err;
  auto a = events_named(plain[0], "epoch"), b = events_named(forked[0], "epoch");
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  // The same arithmetic, to the last bit: the child sizes OpenBLAS as a
  // process launched on its CPUs would.
  EXPECT_EQ(a[0]["metric"], b[0]["metric"]);
  EXPECT_EQ(a[0]["train_loss"], b[0]["train_loss"]);
  // A bad command line exits as a plain launch does, with its message.
  auto bad = run_processes({"--workload nope --batch 8"}, launcher);
  EXPECT_EQ(bad[0].exit_code, 2);
  EXPECT_NE(bad[0].err.find("workload"), std::string::npos) << bad[0].err;
}

TEST(TrainForkServer, AKilledClientEndsItsRun) {
  REQUIRE_TRAINER("mnist");
  TrainerForkServer server(trainer_path());
  ASSERT_TRUE(server.active()) << server.why_not();
  std::vector<std::string> argv_s{server.client_path(), server.socket_path(), trainer_path()};
  for (auto& a : split_args("--workload lenet-mnist --batch 32 --workers 1 --rank 0 --epochs 1000 --train-subset 2000"))
    argv_s.push_back(a);
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t client = -1;
  ASSERT_EQ(posix_spawn(&client, argv[0], &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  ASSERT_TRUE(wait_until([&] { return !children_of(server.pid()).empty(); }, 20)) << "the run never started";
  kill(client, SIGKILL);
  waitpid(client, nullptr, 0);
  EXPECT_TRUE(wait_until([&] { return children_of(server.pid()).empty(); }, 5))
      << "the run outlived its killed client";
}

// A Ctrl-C at a terminal signals the whole foreground process group. With the
// fork server running, it still stops the profile as a cancel: exit 130, the
// finished trials kept, none recorded as failed, nothing left running.
TEST(TrainForkServer, ACtrlCAtTheTerminalCancelsTheProfileCleanly) {
  REQUIRE_TRAINER("mnist");
  fs::path dir = tptest::temp_dir("fork_ctrlc");
  std::string store = (dir / "s.db").string();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // a terminal's foreground group: the CLI and all it starts without a group of its own
    std::string c = "TMPDIR=" + dir.string() + " exec " + tptest::cli_word() + " profile --workload lenet-mnist --trainer " +
                    trainer_path() + " --batches 32,64,128 --workers 1,2 --epochs 1 --train-subset 2000" +
                    " --test-subset 500 --timing epochs --store " + store + " --json >" + (dir / "out").string() + " 2>" +
                    (dir / "err").string();
    execl("/bin/sh", "sh", "-c", c.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  // Training trials only (--timing epochs): each is stored as it ends, where
  // the time trials of a worker count are stored after all their runs.
  auto rows = [&] {
    return fs::exists(store) ? trainplan::profile::SampleStore(store).trials().size() : size_t(0);
  };
  ASSERT_TRUE(wait_until([&] { return rows() >= 1; }, 60)) << tptest::read_file(dir / "err");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into the next trial
  ASSERT_EQ(kill(-pid, SIGINT), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << tptest::read_file(dir / "err");
  EXPECT_EQ(WEXITSTATUS(status), 130) << tptest::read_file(dir / "err");
  for (const auto& t : trainplan::profile::SampleStore(store).trials())
    EXPECT_EQ(t.status, trainplan::profile::TrialStatus::kOk) << t.reason;
  // Nothing is left: no process of the group, and the server (in a group of
  // its own, its directory under TMPDIR) was stopped and cleaned up.
  EXPECT_TRUE(wait_until([&] { return kill(-pid, 0) != 0; }, 5)) << "processes of the profile outlived it";
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_NE(e.path().filename().string().rfind("trainplan-fork-", 0), 0u) << e.path() << " was left behind";
}

// A profiler killed outright (SIGKILL: no handler runs) still leaves no
// server behind, nor the server's directory with its socket.
TEST(TrainForkServer, AKilledProfilerLeavesNoDirectory) {
  REQUIRE_TRAINER("mnist");
  fs::path dir = tptest::temp_dir("fork_sigkill");
  std::string store = (dir / "s.db").string();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    std::string c = "TMPDIR=" + dir.string() + " exec " + tptest::cli_word() + " profile --workload lenet-mnist --trainer " +
                    trainer_path() + " --batches 32,64 --workers 1 --epochs 1 --train-subset 2000" +
                    " --test-subset 500 --timing epochs --store " + store + " >" + (dir / "out").string() + " 2>" +
                    (dir / "err").string();
    execl("/bin/sh", "sh", "-c", c.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  // Directories of fork servers, and of those the ones whose server listens.
  auto fork_dirs = [&](bool listening) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir))
      n += e.path().filename().string().rfind("trainplan-fork-", 0) == 0 && (!listening || fs::exists(e.path() / "socket"));
    return n;
  };
  // Killed while the server is still loading libtorch, before it listens, the
  // directory stays: the server cannot yet tell the profiler's death.
  ASSERT_TRUE(wait_until([&] { return fork_dirs(true) == 1; }, 60)) << tptest::read_file(dir / "err");
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  waitpid(pid, nullptr, 0);
  EXPECT_TRUE(wait_until([&] { return fork_dirs(false) == 0; }, 10)) << "the fork server's directory was left behind";
  EXPECT_TRUE(wait_until([&] { return kill(-pid, 0) != 0; }, 10)) << "processes of the profile outlived it";
  kill(-pid, SIGKILL);
}

TEST(TrainForkServer, StaysOffWithoutItsClientOrWhenTurnedOff) {
  fs::path dir = tptest::temp_dir("forkless");
  fs::path trainer = dir / "trainplan-train";
  tptest::write_file(trainer, "#!/bin/sh\nexit 0\n");
  fs::permissions(trainer, fs::perms::owner_all);
  TrainerForkServer alone(trainer.string());
  EXPECT_FALSE(alone.active());
  EXPECT_NE(alone.why_not().find("trainplan-forkrun"), std::string::npos) << alone.why_not();
  EXPECT_TRUE(alone.wrap().program.empty());
  if (!trainer_path().empty()) {
    std::optional<TrainerForkServer> off;
    {
      tptest::ScopedEnv no_server("TRAINPLAN_FORK_SERVER", "0");
      off.emplace(trainer_path());
    }
    EXPECT_FALSE(off->active());
    EXPECT_EQ(off->why_not(), "TRAINPLAN_FORK_SERVER=0");
  }
}

}  // namespace
