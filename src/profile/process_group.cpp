#include "profile/process_group.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace trainplan::profile {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
}

// In the child: never returns.
[[noreturn]] void exec_child(const std::string& cmd, pid_t pgid, pid_t parent, int out_fd, int err_fd) {
  setpgid(0, pgid);
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
  dup2(err_fd, STDERR_FILENO);
  // bash execs the last simple command in place of itself, so the program
  // inherits PR_SET_PDEATHSIG; sh (dash) would leave it as a grandchild.
  if (access("/bin/bash", X_OK) == 0) execl("/bin/bash", "bash", "-c", cmd.c_str(), static_cast<char*>(nullptr));
  execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
  _exit(127);
}

void append_tail(std::string& tail, const char* data, size_t n, size_t keep) {
  tail.append(data, n);
  if (tail.size() > 2 * keep + 4096) tail.erase(0, tail.size() - keep);
}

}  // namespace

ProcessGroupResult run_process_group(const std::vector<std::string>& commands, const ProcessGroupOptions& opts) {
  ProcessGroupResult res;
  if (commands.empty()) return res;
  int out[2], err[2];
  make_pipe(out);
  make_pipe(err);
  auto t0 = Clock::now();
  pid_t parent = getpid();
  std::vector<pid_t> pids;
  pid_t pgid = 0;
  for (size_t i = 0; i < commands.size(); ++i) {
    pid_t pid = fork();
    if (pid < 0) {
      if (pgid > 0) kill(-pgid, SIGKILL);
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) exec_child(commands[i], pgid, parent, i == 0 ? out[1] : -1, err[1]);
    if (pgid == 0) pgid = pid;
    setpgid(pid, pgid);  // also in the parent, so kill(-pgid) works at once
    pids.push_back(pid);
  }
  close(out[1]);
  close(err[1]);

  std::vector<bool> running(pids.size(), true);
  size_t alive = pids.size();
  bool out_open = true, err_open = true;
  bool killing = false;
  Clock::time_point kill_at{}, drain_deadline{};
  bool draining = false;
  char buf[8192];
  double next_tick = 1;

  auto start_kill = [&] {
    if (killing) return;
    killing = true;
    kill(-pgid, SIGTERM);
    kill_at = Clock::now() + std::chrono::milliseconds(long(opts.kill_grace_s * 1000));
  };

  while (alive > 0 || out_open || err_open) {
    pollfd fds[2];
    int nfds = 0;
    if (out_open) fds[nfds++] = {out[0], POLLIN, 0};
    if (err_open) fds[nfds++] = {err[0], POLLIN, 0};
    if (nfds > 0) {
      int rc = poll(fds, nfds, 100);
      if (rc < 0 && errno != EINTR) break;
      for (int k = 0; rc > 0 && k < nfds; ++k) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = read(fds[k].fd, buf, sizeof buf);
        if (n <= 0) {
          if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
          if (fds[k].fd == out[0]) out_open = false;
          else err_open = false;
          continue;
        }
        if (fds[k].fd == out[0]) {
          if (res.stdout0.size() < opts.stdout_max_bytes) res.stdout0.append(buf, size_t(n));
        } else {
          append_tail(res.stderr_tail, buf, size_t(n), opts.stderr_tail_bytes);
        }
      }
    } else {
      usleep(100000);
    }

    for (size_t i = 0; i < pids.size(); ++i) {
      if (!running[i]) continue;
      int status = 0;
      pid_t w = waitpid(pids[i], &status, WNOHANG);
      if (w == 0) continue;
      running[i] = false;
      --alive;
      int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      if (code != 0 && res.failed_index < 0 && !killing) {
        res.failed_index = int(i);
        res.exit_code = code;
        start_kill();  // the other ranks would wait for the failed one forever
      }
    }

    if (opts.on_tick && seconds_since(t0) >= next_tick) {
      opts.on_tick(seconds_since(t0));
      next_tick += 1;
    }
    if (!killing) {
      if (opts.cancel && opts.cancel->load()) {
        res.cancelled = true;
        start_kill();
      } else if (opts.timeout_s > 0 && seconds_since(t0) > opts.timeout_s) {
        res.timed_out = true;
        start_kill();
      }
    } else if (Clock::now() >= kill_at) {
      kill(-pgid, SIGKILL);
      kill_at = Clock::now() + std::chrono::hours(1);
    }

    // All ranks exited but a background grandchild may still hold a pipe:
    // read for half a second more, then stop waiting for it.
    if (alive == 0 && (out_open || err_open)) {
      if (!draining) {
        draining = true;
        drain_deadline = Clock::now() + std::chrono::milliseconds(500);
      } else if (Clock::now() >= drain_deadline) {
        kill(-pgid, SIGKILL);
        break;
      }
    }
  }
  close(out[0]);
  close(err[0]);
  if (res.stderr_tail.size() > opts.stderr_tail_bytes)
    res.stderr_tail.erase(0, res.stderr_tail.size() - opts.stderr_tail_bytes);
  res.wall_s = seconds_since(t0);
  return res;
}

}  // namespace trainplan::profile
