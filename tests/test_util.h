// Helpers shared by the tests: locating ../shared/data, running the CLI,
// writing small fixture files, and scoped changes to the environment and to
// the calling thread's CPUs.
#pragma once
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "profile/launcher.h"

namespace tptest {

// Removes the directories handed to it when the test process exits (not in a
// forked child, which exits with _exit or execs), so a test run leaves nothing
// in the temporary directory; TRAINPLAN_KEEP_TEST_FILES=1 keeps them to debug.
inline void remove_at_exit(const std::filesystem::path& dir) {
  struct Registry {
    pid_t owner = ::getpid();
    std::vector<std::filesystem::path> dirs;
    ~Registry() {
      if (::getpid() != owner || std::getenv("TRAINPLAN_KEEP_TEST_FILES")) return;
      std::error_code ec;
      for (const auto& d : dirs) std::filesystem::remove_all(d, ec);
    }
  };
  static Registry registry;
  registry.dirs.push_back(dir);
}

// `path` as the tests paste it into command lines: itself when the shell
// takes it literally, else a symbolic link to it in the temporary folder
// (made once per process and name): a checkout path may hold a space.
inline std::string shell_safe_path(const std::string& path, const std::string& name) {
  if (trainplan::profile::shell_word(path) == path) return path;
  namespace fs = std::filesystem;
  const fs::path link = fs::temp_directory_path() / ("trainplan_" + name + "_" + std::to_string(::getpid()));
  std::error_code ec;
  if (!fs::is_symlink(link, ec)) {
    fs::create_directory_symlink(path, link, ec);
    remove_at_exit(link);  // remove_all removes the link, not what it points to
  }
  return link.string();
}

// The source tree (its examples, third_party), as shell_safe_path.
inline std::string source_dir() {
  static const std::string dir = shell_safe_path(TRAINPLAN_SOURCE_DIR, "source");
  return dir;
}

// Path of ../shared/data, or "" when this clone has none (a user's clone).
inline std::string shared_data_dir() {
  std::string p = TRAINPLAN_SHARED_DATA;
  if (!std::filesystem::exists(p + "/README.md")) return "";
  static const std::string dir = shell_safe_path(p, "shared_data");
  return dir;
}

// Skips the current test with a clear message when ../shared/data is absent.
#define TRAINPLAN_REQUIRE_SHARED_DATA()                                                      \
  do {                                                                                       \
    if (::tptest::shared_data_dir().empty())                                     \
      GTEST_SKIP() << "needs ../shared/data (the measured public traces), absent in this clone"; \
  } while (0)

// The whole content of a file ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the built `trainplan` binary with `args` (a shell-quoted string).
// The CLI's path as one shell word (a checkout path may hold a space), as
// the CLI itself writes a command to run again.
inline std::string cli_word() { return trainplan::profile::shell_word(TRAINPLAN_CLI_PATH); }

inline CliResult run_cli(const std::string& args) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("trainplan_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  static const bool registered = (remove_at_exit(dir), true);  // once per process: the pid names it
  (void)registered;
  std::string out = (dir / "out").string(), err = (dir / "err").string();
  std::string cmd = cli_word() + " " + args + " >" + out + " 2>" + err;
  int rc = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

// A fresh, empty temporary directory for one test. The name mixes the pid
// with a random_device draw, because pids repeat across ctest's processes and
// a reused directory would carry another test's files.
inline std::filesystem::path temp_dir(const std::string& tag) {
  std::random_device rd;
  auto d = std::filesystem::temp_directory_path() /
           ("trainplan_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  remove_at_exit(d);
  return d;
}

inline std::string write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p.string();
}

// The InputError `f` throws, or a test failure (and an empty error).
inline trainplan::InputError input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const trainplan::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError";
  return trainplan::InputError("none");
}

// 48 samples as CSV text: epoch time 50000/(b r) (0.01 + 0.0005 b), 10% more
// past 4 workers, accuracy 0.95 - 0.6/(1 + x/4) with x = e * 528 / (400 + b r).
// `with_metric` false leaves the metric column empty; `wobble` perturbs the
// metric by a deterministic relative amount (0: exact).
inline std::string synthetic_samples_csv(bool with_metric = true, double wobble = 0) {
  std::string csv = "# trainplan: metric=max dataset_size=50000\nbatch,workers,epochs,epoch_time_s,metric,nodes\n";
  for (int b : {16, 32, 64, 128})
    for (int r : {1, 2, 4, 8})
      for (int e : {2, 10, 30}) {
        double t = 50000.0 / (b * r) * (0.01 + 0.0005 * b) * (r > 4 ? 1.1 : 1.0);
        double x = e * 528.0 / (400 + b * r);
        const double jitter = 1 + wobble * std::sin(7.0 * b + 13.0 * r + e);
        std::string m = with_metric ? std::to_string((0.95 - 0.6 / (1 + x / 4)) * jitter) : "";
        csv += std::to_string(b) + "," + std::to_string(r) + "," + std::to_string(e) + "," + std::to_string(t) + "," +
               m + "," + std::to_string((r + 3) / 4) + "\n";
      }
  return csv;
}

// The lines of `text`, without their newlines.
inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from < text.size()) {
    size_t end = text.find('\n', from);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(from, end - from));
    from = end + 1;
  }
  return out;
}

// Whether the CLI's stderr `err` reports an InputError (core/error.h) at the
// given place: its line "error: FILE:LINE: column 'FIELD': MESSAGE" (an
// option named like "--x" reads "option '--x'"; an empty file, a line <= 0 or
// an empty field is left out, as InputError leaves it out) names `file`,
// `line` and `field` in that order, and its MESSAGE names each of `values`
// (the bad values the user has to find). The place, not the wording, is the
// contract with the user.
inline ::testing::AssertionResult names_input_error(const std::string& err, const std::string& file, long line,
                                                    const std::string& field,
                                                    const std::vector<std::string>& values = {}) {
  // The place as InputError itself writes it (its what() with an empty message).
  const std::string head = "error: " + std::string(trainplan::InputError(file, line, field, "").what());
  const size_t at = err.find(head);
  if (at == std::string::npos)
    return ::testing::AssertionFailure() << "no line starting \"" << head << "\" in stderr:\n" << err;
  const size_t from = at + head.size();
  const std::string message = err.substr(from, err.find('\n', from) - from);
  for (const auto& v : values)
    if (message.find(v) == std::string::npos)
      return ::testing::AssertionFailure() << "the message \"" << message << "\" does not name " << v;
  return ::testing::AssertionSuccess();
}

// Sets an environment variable (or unsets it, given nullptr) for a scope,
// restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Pins the calling thread to one CPU for a scope (children spawned meanwhile inherit it).
class ScopedPin {
 public:
  explicit ScopedPin(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ok_ = sched_getaffinity(0, sizeof saved_, &saved_) == 0 && sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~ScopedPin() {
    if (ok_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_{};
  bool ok_ = false;
};

// Runs `command` + each case's arguments and expects exit 2 with the case's
// option named on stderr.
inline void expect_each_exits_two_naming(const std::string& command,
                                         const std::vector<std::pair<std::string, std::string>>& args_and_option) {
  for (const auto& [args, option] : args_and_option) {
    auto r = run_cli(command + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << args << "\n" << r.err;
  }
}

}  // namespace tptest
