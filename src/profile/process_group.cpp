#include "profile/process_group.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <regex>
#include <string>
#include <stdexcept>

#include "core/valid_utf8.h"
#include "profile/interrupt.h"

namespace trainplan::profile {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
}

// In the child: never returns.
// `envp`: the environment to exec with (nullptr: this process's), built
// before fork, as the child may only make async-signal-safe calls.
[[noreturn]] void exec_child(const std::string& cmd, pid_t pgid, pid_t parent, int out_fd, int err_fd,
                             const std::vector<int>& cpus, char* const* envp = nullptr) {
  setpgid(0, pgid);
  if (!cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    sched_setaffinity(0, sizeof set, &set);  // best effort: a refusal leaves the process unpinned
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the parent died before prctl
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  int devnull = open("/dev/null", O_RDWR);
  dup2(devnull, STDIN_FILENO);
  dup2(out_fd >= 0 ? out_fd : devnull, STDOUT_FILENO);
  dup2(err_fd >= 0 ? err_fd : devnull, STDERR_FILENO);
  if (devnull > STDERR_FILENO) close(devnull);  // the program gets its three streams and nothing more
  // bash execs the last simple command in place of itself, so the program
  // inherits PR_SET_PDEATHSIG; sh (dash) would leave it as a grandchild.
  char* const* env = envp ? envp : environ;
  if (access("/bin/bash", X_OK) == 0) execle("/bin/bash", "bash", "-c", cmd.c_str(), static_cast<char*>(nullptr), env);
  execle("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr), env);
  _exit(127);
}

// This environment plus TRAINPLAN_HELPER_CPUS, the CPUs this process may use:
// a pinned rank's communication helpers may run on all of them while the
// rank computes on its own (trainplan-train's train/affinity.h).
class PinnedRankEnvironment {
 public:
  PinnedRankEnvironment() {
    std::string shared;
    for (int c : allowed_cpus()) shared += (shared.empty() ? "" : ",") + std::to_string(c);
    const std::string name = "TRAINPLAN_HELPER_CPUS=";
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, name.c_str(), name.size()) != 0) strings_.emplace_back(*e);
    if (!shared.empty()) strings_.push_back(name + shared);
    for (auto& s : strings_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
  }
  char* const* envp() const { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

void append_tail(std::string& tail, const char* data, size_t n, size_t keep) {
  tail.append(data, n);
  if (tail.size() > 2 * keep + 4096) tail.erase(0, tail.size() - keep);
}

// One run of a process group: its ranks, the pipes that carry rank 0's
// stdout and every rank's stderr, and the kill and drain timers. The steps
// of run_process_group's loop, each once per pass.
class GroupRun {
 public:
  GroupRun(const ProcessGroupOptions& opts, ProcessGroupResult& res) : opts_(opts), res_(res) {
    make_pipe(out_);
    make_pipe(err_);
    t0_ = limit_t0_ = Clock::now();
  }
  ~GroupRun() {
    if (pgid_ > 0) forget_running_group(pgid_);
  }
  GroupRun(const GroupRun&) = delete;
  GroupRun& operator=(const GroupRun&) = delete;

  // Forks one rank per command, all in one process group (the first rank's).
  void spawn(const std::vector<std::string>& commands, const std::vector<std::vector<int>>& cpus) {
    pid_t parent = getpid();
    const bool pinned = std::any_of(cpus.begin(), cpus.end(), [](const auto& c) { return !c.empty(); });
    std::optional<PinnedRankEnvironment> env;
    if (pinned) env.emplace();
    for (size_t i = 0; i < commands.size(); ++i) {
      pid_t pid = fork();
      if (pid < 0) {
        if (pgid_ > 0) kill(-pgid_, SIGKILL);
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
      }
      if (pid == 0)
        exec_child(commands[i], pgid_, parent, i == 0 ? out_[1] : -1, err_[1],
                   i < cpus.size() ? cpus[i] : std::vector<int>{}, env ? env->envp() : nullptr);
      if (pgid_ == 0) pgid_ = pid, note_running_group(pgid_);
      setpgid(pid, pgid_);  // also in the parent, so kill(-pgid) works at once
      pids_.push_back(pid);
    }
    close(out_[1]);
    close(err_[1]);
    running_.assign(pids_.size(), true);
    alive_ = pids_.size();
  }

  bool active() const { return alive_ > 0 || out_open_ || err_open_; }
  pid_t pgid() const { return pgid_; }

  // Reads what the open pipes have within 100 ms (sleeps as long when both
  // are closed). False when poll fails.
  bool read_output() {
    pollfd fds[2];
    int nfds = 0;
    if (out_open_) fds[nfds++] = {out_[0], POLLIN, 0};
    if (err_open_) fds[nfds++] = {err_[0], POLLIN, 0};
    if (nfds == 0) {
      usleep(100000);
      return true;
    }
    int rc = poll(fds, nfds, 100);
    if (rc < 0 && errno != EINTR) return false;
    for (int k = 0; rc > 0 && k < nfds; ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[k].fd, buf_, sizeof buf_);
      if (n <= 0) {
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (fds[k].fd == out_[0]) {
          out_open_ = false;
          keep_line(line_);  // a last line without its newline
        } else {
          err_open_ = false;
        }
        continue;
      }
      if (fds[k].fd == out_[0]) {
        keep_stdout(buf_, size_t(n));
        if (opts_.on_stdout0) opts_.on_stdout0(buf_, size_t(n));
      } else {
        watch_for_restart(buf_, size_t(n));
        append_tail(res_.stderr_tail, buf_, size_t(n), opts_.stderr_tail_bytes);
      }
    }
    return true;
  }

  // Collects the ranks that exited; the first to fail brings the group down.
  void reap_ranks() {
    for (size_t i = 0; i < pids_.size(); ++i) {
      if (!running_[i]) continue;
      int status = 0;
      pid_t w = waitpid(pids_[i], &status, WNOHANG);
      if (w == 0) continue;
      running_[i] = false;
      --alive_;
      int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      if (code != 0 && res_.failed_index < 0 && !killing_) {
        res_.failed_index = int(i);
        res_.exit_code = code;
        start_kill();  // the other ranks would wait for the failed one forever
      }
    }
  }

  // Calls on_tick once a second.
  void report_tick() {
    if (opts_.on_tick && seconds_since(t0_) >= next_tick_) {
      opts_.on_tick(seconds_since(t0_));
      next_tick_ += 1;
    }
  }

  // Starts the kill on cancellation or timeout; once killing, SIGKILL after the grace period.
  // A group whose ranks have all exited is finished: what it printed is read
  // to the end, whatever was asked since.
  void enforce_limits() {
    if (!killing_ && alive_ > 0) {
      if (opts_.cancel && opts_.cancel->load()) {
        res_.cancelled = true;
        start_kill();
      } else if (opts_.timeout_s > 0 && seconds_since(limit_t0_) > opts_.timeout_s) {
        res_.timed_out = true;
        start_kill();
      } else if (opts_.end && opts_.end->load()) {
        res_.ended_on_request = true;
        start_kill();
      }
    } else if (Clock::now() >= kill_at_) {
      kill(-pgid_, SIGKILL);
      kill_at_ = Clock::now() + std::chrono::hours(1);
    }
  }

  // All ranks exited but a background grandchild may still hold a pipe:
  // read for half a second more, then stop waiting for it (true: stop now).
  bool drain_timed_out() {
    if (alive_ == 0 && (out_open_ || err_open_)) {
      if (!draining_) {
        draining_ = true;
        drain_deadline_ = Clock::now() + std::chrono::milliseconds(500);
      } else if (Clock::now() >= drain_deadline_) {
        kill(-pgid_, SIGKILL);
        return true;
      }
    }
    return false;
  }

  // Closes the pipes, trims the stderr tail and records the wall time.
  void finish() {
    keep_line(line_);  // a last line without its newline, when the drain was cut short
    close(out_[0]);
    close(err_[0]);
    // Valid UTF-8, cut between characters: the tail is stored and shown as JSON.
    res_.stderr_tail = std::string(utf8_suffix(valid_utf8(res_.stderr_tail), opts_.stderr_tail_bytes));
    res_.wall_s = seconds_since(t0_);
  }

 private:
  // Restarts the timeout at the first whole stderr line timeout_restarts_at
  // matches, lines gathered across reads (a line past 4 KiB is cut there).
  void watch_for_restart(const char* data, size_t n) {
    if (opts_.timeout_restarts_at.empty() || res_.restarted_after_s >= 0 || killing_) return;
    if (!restart_pattern_) restart_pattern_.emplace(opts_.timeout_restarts_at);
    constexpr size_t kLongestLine = 4096;
    for (size_t i = 0; i < n; ++i) {
      if (data[i] != '\n') {
        if (err_line_.size() < kLongestLine) err_line_ += data[i];
        continue;
      }
      const bool started = std::regex_search(err_line_, *restart_pattern_);
      err_line_.clear();
      if (started) {
        res_.restarted_after_s = seconds_since(t0_);
        limit_t0_ = Clock::now();
        return;
      }
    }
  }

  // Adds a piece of command 0's stdout to stdout0: all of it, or (with
  // stdout_json_lines_only) its whole lines that hold a '{'.
  void keep_stdout(const char* data, size_t n) {
    if (!opts_.stdout_json_lines_only) {
      const size_t room = opts_.stdout_max_bytes - std::min(opts_.stdout_max_bytes, res_.stdout0.size());
      res_.stdout0.append(data, std::min(n, room));
      if (n > room) res_.stdout_truncated = true;
      return;
    }
    for (size_t i = 0; i < n;) {
      const char* nl = static_cast<const char*>(std::memchr(data + i, '\n', n - i));
      const size_t end = nl ? size_t(nl - data) + 1 : n;
      if (line_head_.size() < kHeadBytes) line_head_.append(data + i, std::min(end - i, kHeadBytes - line_head_.size()));
      // A line longer than the whole budget cannot be kept: only whether it held a '{' is.
      if (line_.size() + (end - i) <= opts_.stdout_max_bytes) line_.append(data + i, end - i);
      else {
        line_overflow_ = true;
        line_brace_ |= std::memchr(data + i, '{', end - i) != nullptr;
      }
      if (nl) keep_line(line_);
      i = end;
    }
  }

  void keep_line(std::string& line) {
    const bool other_rank = opts_.stdout_rank0_labelled_only && !rank0_line(line_head_);
    line_head_.clear();
    if (!other_rank && (line_brace_ || line.find('{') != std::string::npos)) {
      if (!line_overflow_ && opts_.on_json_line0) opts_.on_json_line0(line);
      if (!line_overflow_ && res_.stdout0.size() + line.size() <= opts_.stdout_max_bytes) res_.stdout0 += line;
      else res_.stdout_truncated = true;
    }
    line.clear();
    line_overflow_ = line_brace_ = false;
  }

  // SIGTERM to the whole group, SIGKILL after kill_grace_s (enforce_limits).
  void start_kill() {
    if (killing_) return;
    killing_ = true;
    kill(-pgid_, SIGTERM);
    kill_at_ = Clock::now() + std::chrono::milliseconds(long(opts_.kill_grace_s * 1000));
  }

  const ProcessGroupOptions& opts_;
  ProcessGroupResult& res_;
  int out_[2], err_[2];
  Clock::time_point t0_;
  Clock::time_point limit_t0_;  // where the timeout counts from: t0_, or the restart
  std::optional<std::regex> restart_pattern_;  // timeout_restarts_at, compiled once
  std::string err_line_;                       // the stderr line being read, for watch_for_restart
  std::vector<pid_t> pids_;
  pid_t pgid_ = 0;
  std::vector<bool> running_;
  size_t alive_ = 0;
  bool out_open_ = true, err_open_ = true;
  bool killing_ = false;
  Clock::time_point kill_at_{}, drain_deadline_{};
  bool draining_ = false;
  char buf_[8192];
  std::string line_;  // command 0's stdout line being read (stdout_json_lines_only)
  static constexpr size_t kHeadBytes = 32;
  std::string line_head_;  // its first kHeadBytes, kept when the line itself is not
  bool line_overflow_ = false, line_brace_ = false;  // line_ lost bytes; they held a '{'
  double next_tick_ = 1;
};

// A child of this process, as /proc says: its pid, and whether it still runs
// (not a zombie) outside the process group `pgid`.
struct Child {
  pid_t pid = 0;
  bool running_elsewhere = false;
};

// The processes whose parent is this one, from /proc; running_elsewhere
// against the process group `pgid` (0: none). nullopt when /proc cannot be
// read, which is not the same as no children.
std::optional<std::vector<Child>> children(pid_t pgid = 0) {
  std::vector<Child> out;
  const pid_t self = getpid();
  DIR* d = opendir("/proc");
  if (!d) return std::nullopt;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE* f = std::fopen(path, "r");
    if (!f) continue;
    char buf[512];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read past the last ')'.
    const char* close = std::strrchr(buf, ')');
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (close && std::sscanf(close + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && ppid == self)
      out.push_back({pid_t(pid), state != 'Z' && pgrp != pgid});
  }
  closedir(d);
  return out;
}

// Kills and reaps the children this process has now and did not have in
// `before`: the group's members orphaned to this subreaper as it was killed
// (reaped), and descendants that escaped the group (counted). Rounds, as a
// killed orphan's own children come back in turn.
int kill_escaped(const std::vector<Child>& before, pid_t pgid) {
  int escaped = 0;
  for (int round = 0; round < 8; ++round) {
    const auto now = children(pgid);
    if (!now) break;
    std::vector<Child> extra;
    for (const Child& c : *now)
      if (std::none_of(before.begin(), before.end(), [&](const Child& b) { return b.pid == c.pid; }))
        extra.push_back(c);
    if (extra.empty()) break;
    for (const Child& c : extra) kill(c.pid, SIGKILL);
    for (const Child& c : extra) {
      bool reaped = false;
      for (int i = 0; i < 200 && !reaped; ++i) {  // at most 2 s each: SIGKILL is not refused
        const pid_t w = waitpid(c.pid, nullptr, WNOHANG);
        reaped = w == c.pid;
        if (!reaped && w < 0 && errno == ECHILD) break;
        if (!reaped) usleep(10000);
      }
      escaped += c.running_elsewhere && reaped;
    }
  }
  return escaped;
}

}  // namespace

std::optional<std::string> rank0_line(const std::string& line) {
  const size_t i = line.find_first_not_of(' ');
  if (i == std::string::npos || line.compare(i, 3, "0: ") != 0) return std::nullopt;
  return line.substr(i + 3);
}

pid_t start_process(const std::string& command, int out_fd) {
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) exec_child(command, 0, parent, out_fd, -1, {});
  if (pid > 0) setpgid(pid, pid);
  return pid;
}

std::string stdout_truncated_text(size_t stdout_max_bytes) {
  return "some of its JSON lines on stdout were not read (past " + std::to_string(stdout_max_bytes >> 20) +
         " MiB in all)";
}

ProcessGroupResult run_process_group(const std::vector<std::string>& commands, const ProcessGroupOptions& opts) {
  ProcessGroupResult res;
  if (commands.empty()) return res;
  // A child subreaper for the trial only: orphans from outside trials (a
  // plot's helpers) go to init as before, and are never left unreaped here.
  // Without /proc the group is not told from the rest, and nothing is killed.
  const std::optional<std::vector<Child>> before = children();
  const bool subreaper = before && prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  GroupRun run(opts, res);
  run.spawn(commands, opts.cpus);
  while (run.active()) {
    if (!run.read_output()) break;
    run.reap_ranks();
    run.report_tick();
    run.enforce_limits();
    if (run.drain_timed_out()) break;
  }
  run.finish();
  if (subreaper) {
    res.escaped_killed = kill_escaped(*before, run.pgid());
    prctl(PR_SET_CHILD_SUBREAPER, 0);
  }
  return res;
}

std::vector<int> allowed_cpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

bool oversubscribes(int processes, int threads) {
  const size_t cpus = allowed_cpus().size();
  return cpus > 0 && size_t(std::max(processes, 0)) * size_t(std::max(threads, 0)) > cpus;
}

std::vector<std::vector<int>> pin_plan(int processes, int threads) {
  const std::vector<int> cpus = allowed_cpus();
  if (processes < 1 || threads < 1 || size_t(processes) * size_t(threads) > cpus.size()) return {};
  std::vector<std::vector<int>> plan(static_cast<size_t>(processes));
  for (size_t i = 0; i < plan.size(); ++i)
    plan[i].assign(cpus.begin() + long(i * size_t(threads)), cpus.begin() + long((i + 1) * size_t(threads)));
  return plan;
}

}  // namespace trainplan::profile
