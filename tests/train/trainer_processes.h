// Running trainplan-train as subprocesses for the trainer tests: where the
// binary is, and several processes (ranks) started at once with their
// stdout read back as JSON lines.
#pragma once
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

extern char** environ;

namespace tptrain {

namespace fs = std::filesystem;
using nlohmann::json;

// $TRAINPLAN_TRAIN_BIN, else trainplan-train next to this test binary; "" when neither exists.
inline std::string trainer_path() {
  if (const char* env = std::getenv("TRAINPLAN_TRAIN_BIN"); env && *env) return fs::exists(env) ? env : "";
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  fs::path p = self.parent_path() / "trainplan-train";
  return fs::exists(p) ? p.string() : "";
}

// The directory the trainer reads by default.
inline std::string data_dir() {
  if (const char* env = std::getenv("TRAINPLAN_DATA_DIR"); env && *env) return env;
  return tptest::source_dir() + "/third_party/datasets";
}

#define REQUIRE_TRAINER(workload_subdir)                                                                  \
  do {                                                                                                    \
    if (trainer_path().empty())                                                                           \
      GTEST_SKIP() << "trainplan-train not built (configure with -DTRAINPLAN_WITH_TORCH=ON and build the " \
                      "trainplan-train target, or set TRAINPLAN_TRAIN_BIN)";                             \
    if (!fs::exists(data_dir() + "/" workload_subdir "/train-images-idx3-ubyte"))                        \
      GTEST_SKIP() << "no " workload_subdir " data under " << data_dir() << " (run scripts/install-deps.sh)"; \
  } while (0)

struct RankResult {
  int exit_code = -1;
  std::string out, err;
  std::vector<json> events;  // stdout parsed as JSON lines
};

inline std::vector<std::string> split_args(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> v;
  for (std::string w; in >> w;) v.push_back(w);
  return v;
}

// Starts one trainer process per entry of `arg_lists` at once, and waits
// for all of them. With a `launcher` (a program and its leading arguments),
// each runs as `launcher... trainer args`.
inline std::vector<RankResult> run_processes(const std::vector<std::string>& arg_lists,
                                             const std::vector<std::string>& launcher = {}) {
  fs::path dir = tptest::temp_dir("train");
  const int n = int(arg_lists.size());
  std::vector<pid_t> pids(n, -1);
  const std::string bin = trainer_path();
  const std::string program = launcher.empty() ? bin : launcher.front();
  for (int k = 0; k < n; ++k) {
    std::vector<std::string> argv_s = launcher;
    argv_s.push_back(bin);
    for (auto& a : split_args(arg_lists[k])) argv_s.push_back(a);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    std::string out = (dir / ("out" + std::to_string(k))).string(), err = (dir / ("err" + std::to_string(k))).string();
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = posix_spawn(&pids[k], program.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    EXPECT_EQ(rc, 0) << "could not start " << program;
  }
  std::vector<RankResult> results(n);
  for (int k = 0; k < n; ++k) {
    if (pids[k] <= 0) continue;
    int status = 0;
    waitpid(pids[k], &status, 0);
    RankResult& r = results[k];
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = tptest::read_file(dir / ("out" + std::to_string(k)));
    r.err = tptest::read_file(dir / ("err" + std::to_string(k)));
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;
      try {
        r.events.push_back(json::parse(line));
      } catch (const json::exception&) {
        ADD_FAILURE() << "stdout line is not JSON: " << line;
      }
    }
  }
  fs::remove_all(dir);
  return results;
}

inline std::vector<json> events_named(const RankResult& r, const std::string& name) {
  std::vector<json> v;
  for (const auto& e : r.events)
    if (e.value("event", "") == name) v.push_back(e);
  return v;
}

}  // namespace tptrain
