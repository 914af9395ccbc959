#include "profile/log_follower.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "core/error.h"
#include "profile/interrupt.h"

namespace trainplan::profile {

namespace {

// A waitpid status as a shell reports it: the exit code, or 128 + the signal.
int exit_status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Opens a log to follow, or -1 with errno ENOENT when it does not exist yet.
// Non-blocking, so that a FIFO with no writer neither blocks the open nor a
// read (a read with nothing to give returns EAGAIN, as a file at its end
// returns 0); a directory is refused, naming the path.
int open_log(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) return -1;
  if (fd < 0) throw InputError(path, 0, "--log", std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    throw InputError(path, 0, "--log", "is a directory: give the job's log file");
  }
  return fd;
}

}  // namespace

LogFollower::LogFollower(int fd, int pid, LogFollowerOptions o) : fd_(fd), pid_(pid), o_(o), last_byte_(now_s()) {}

LogFollower::LogFollower(LogFollower&& o) noexcept
    : fd_(o.fd_), pid_(o.pid_), o_(o.o_), path_(std::move(o.path_)), buf_(std::move(o.buf_)),
      scanned_(o.scanned_), skipping_(o.skipping_), tail_(std::move(o.tail_)), line_no_(o.line_no_), exit_code_(o.exit_code_),
      eof_(o.eof_), output_closed_(o.output_closed_), stall_reported_(o.stall_reported_), pending_restart_(o.pending_restart_), last_byte_(o.last_byte_) {
  o.fd_ = -1, o.pid_ = -1;
}

LogFollower::~LogFollower() {
  terminate();
  if (fd_ >= 0) close(fd_);
}

void LogFollower::terminate() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGTERM);
  // A job that ignores SIGTERM, or takes long over its cleanup, is killed after a grace.
  const double until = now_s() + kKillGraceS;
  int st = 0;
  for (;;) {
    if (exit_code_ < 0) {
      const pid_t r = waitpid(pid_, &st, WNOHANG);
      if (r == pid_) exit_code_ = exit_status(st);
      else if (r < 0 && errno != EINTR) break;
    }
    // The shell gone, a process of its group may still be cleaning up (a
    // checkpoint on SIGTERM): the group is waited for as long, then killed.
    if (exit_code_ >= 0 && kill(-pid_, 0) != 0) break;
    if (now_s() >= until) {
      kill(-pid_, SIGKILL);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (exit_code_ < 0) {
    reap();
  } else {
    forget_running_group(pid_);
    pid_ = -1;
  }
  // What left the group (setsid) and came back to this process, its
  // subreaper, as its parents died: killed and reaped, in rounds, as a killed
  // orphan's own children come back in turn.
  for (int round = 0; round < 5; ++round) {
    kill_children();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
}

LogFollower LogFollower::file(const std::string& path, LogFollowerOptions o) {
  // Not there yet (-1): a watch is often started before the job writes its first line.
  LogFollower f(open_log(path), -1, o);
  f.path_ = path;
  return f;
}

LogFollower LogFollower::command(const std::string& command, LogFollowerOptions o) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  // The job's descendants that leave its group (setsid) come back to the
  // watch when their parents die, so that terminate() can end them too.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The job's stdout goes nowhere once the watch is gone: it ends with it.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(143);
    // A group of its own, so that terminate() reaches every process of a
    // pipeline; stdin from /dev/null, as a background group must not read the terminal.
    // SIGTTOU ignored (kept across exec): under `stty tostop` a background group's first
    // write to the terminal (the job's stderr) would otherwise stop the job, and the watch
    // with it.
    setpgid(0, 0);
    signal(SIGTTOU, SIG_IGN);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    if (null_fd > STDIN_FILENO) close(null_fd);
    dup2(p[1], STDOUT_FILENO);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first
  note_running_group(pid);
  close(p[1]);
  return LogFollower(p[0], pid, o);
}

bool LogFollower::rewritten(bool at_end) {
  struct stat now {};
  // Replaced under its name (a new file, or the old one moved away): the new
  // one is read once the old one has been read to its end.
  struct stat named {};
  if (at_end && !path_.empty() && stat(path_.c_str(), &named) == 0 && fstat(fd_, &now) == 0 &&
      (named.st_ino != now.st_ino || named.st_dev != now.st_dev)) {
    const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // as open_log, for a FIFO
    if (fd >= 0 && !S_ISDIR(named.st_mode)) {
      close(fd_);
      fd_ = fd;
      return true;
    }
    if (fd >= 0) close(fd);
  }
  const off_t at = lseek(fd_, 0, SEEK_CUR);
  if (at <= 0 || fstat(fd_, &now) != 0) return false;
  bool moved = now.st_size < at;  // truncated
  // Truncated and written past the old end between two reads: the bytes
  // before the offset are no longer the ones read.
  if (!moved && now.st_size >= at && !tail_.empty() && off_t(tail_.size()) <= at) {
    std::string before(tail_.size(), '\0');
    const ssize_t n = pread(fd_, before.data(), before.size(), at - off_t(tail_.size()));
    moved = n != ssize_t(before.size()) || before != tail_;
  }
  if (moved) lseek(fd_, 0, SEEK_SET);
  return moved;
}

LogFollower::Status LogFollower::restart() {
  buf_.clear();
  scanned_ = 0;
  skipping_ = false;
  tail_.clear();
  line_no_ = 0;
  pending_restart_ = false;
  return Status::kRestarted;
}

double LogFollower::quiet_s() const { return now_s() - last_byte_; }

bool LogFollower::take_line(std::string& line) {
  if (skipping_) {
    const auto nl = buf_.find('\n');
    if (nl == std::string::npos) {
      buf_.clear();
      return false;
    }
    buf_.erase(0, nl + 1);
    skipping_ = false;
    scanned_ = 0;
  }
  // Only the bytes not searched yet: a long line arriving in many reads is
  // searched once, not once a read.
  const auto nl = buf_.find('\n', scanned_);
  if (nl == std::string::npos) {
    scanned_ = buf_.size();
    if (buf_.size() <= kMostLineBytes) return false;
    line = kLongLineText;
    buf_.clear();
    scanned_ = 0;
    skipping_ = true;
    ++line_no_;
    return true;
  }
  line = buf_.substr(0, nl);
  buf_.erase(0, nl + 1);
  scanned_ = 0;
  ++line_no_;
  return true;
}

bool LogFollower::take_rest(std::string& line) {
  if (skipping_) {
    buf_.clear();
    skipping_ = false;
    return false;
  }
  scanned_ = 0;
  if (buf_.empty()) return false;
  line = std::move(buf_);
  buf_.clear();
  ++line_no_;
  return true;
}

bool LogFollower::job_ended() {
  int st = 0;
  const pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r != pid_) return false;
  exit_code_ = exit_status(st);
  // What it wrote before it ended is read; a process it left behind holding
  // the output open is ended with the job (it would outlive the watch).
  char chunk[65536];
  for (pollfd pfd{fd_, POLLIN, 0}; !output_closed_ && poll(&pfd, 1, 0) > 0;) {
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n <= 0) break;
    buf_.append(chunk, size_t(n));
    last_byte_ = now_s();
  }
  kill(-pid_, SIGTERM);
  forget_running_group(pid_);
  pid_ = -1;
  eof_ = true;
  return true;
}

void LogFollower::reap() {
  if (pid_ <= 0) return;
  int st = 0;
  pid_t r;
  while ((r = waitpid(pid_, &st, 0)) < 0 && errno == EINTR) {
  }
  if (r == pid_) exit_code_ = exit_status(st);
  forget_running_group(pid_);
  pid_ = -1;
}

int LogFollower::wait_for_exit() {
  char chunk[65536];
  while (pid_ > 0) {
    if (o_.interrupted && o_.interrupted->load()) {
      terminate();
      return exit_code_;
    }
    int st = 0;
    const pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      exit_code_ = exit_status(st);
      forget_running_group(pid_);
      pid_ = -1;
      break;
    }
    if (r < 0) break;
    if (eof_) {
      reap();
      break;
    }
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, 100) > 0) {
      const ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n == 0) eof_ = true;
    }
  }
  return exit_code_;
}

LogFollower::Status LogFollower::next(std::string& line) {
  char chunk[65536];
  if (pending_restart_) return restart();
  for (;;) {
    if (o_.interrupted && o_.interrupted->load()) return Status::kInterrupted;
    if (take_line(line)) return Status::kLine;
    if (eof_) {
      if (take_rest(line)) return Status::kLine;  // the last line had no newline
      return Status::kEnded;
    }
    if (pid_ > 0 && job_ended()) continue;  // eof_ now set, or pid_ gone
    if (pid_ > 0 && output_closed_) {
      // The job closed its output and runs on (`exec > train.log`): wait for
      // its exit without blocking, so that a Ctrl-C or a stall is still seen.
      if (o_.stall_s > 0 && !stall_reported_ && quiet_s() >= o_.stall_s) {
        stall_reported_ = true;
        return Status::kStalled;
      }
      if (o_.on_wait) o_.on_wait();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (pid_ > 0) {
      // A pipe: wait for bytes, at most until the stall would be due.
      double left = o_.stall_s > 0 && !stall_reported_ ? o_.stall_s - quiet_s() : 1.0;
      // Also within a second: the job's exit is looked for between reads, as a
      // process it left in the background may hold its output open.
      left = std::min(left, 1.0);  // on_wait is then called again within a second too
      if (o_.on_wait) o_.on_wait();
      pollfd pfd{fd_, POLLIN, 0};
      const int r = poll(&pfd, 1, std::max(0, int(left * 1000)));
      if (r < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      if (r < 0) continue;  // a signal: look at the flag again, never block in read()
      if (r == 0) {
        if (o_.stall_s > 0 && !stall_reported_ && quiet_s() >= o_.stall_s) {
          stall_reported_ = true;
          return Status::kStalled;
        }
        continue;
      }
    }
    if (pid_ <= 0 && fd_ < 0) {
      fd_ = open_log(path_);
      if (fd_ < 0) {
        if (o_.stall_s > 0 && !stall_reported_ && quiet_s() >= o_.stall_s) {
          stall_reported_ = true;
          return Status::kStalled;
        }
        if (o_.call_off && o_.call_off()) return Status::kCalledOff;
        if (o_.on_wait) o_.on_wait();
        std::this_thread::sleep_for(std::chrono::duration<double>(o_.poll_s));
        continue;
      }
    }
    if (pid_ <= 0 && rewritten(false)) return restart();
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n > 0) {
      buf_.append(chunk, size_t(n));
      tail_.append(chunk, size_t(n));
      if (tail_.size() > kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
      last_byte_ = now_s();
      stall_reported_ = false;
      continue;
    }
    if (n < 0 && errno != EINTR && errno != EAGAIN) throw std::runtime_error(std::string("read: ") + std::strerror(errno));
    if (n == 0 && pid_ > 0) {
      output_closed_ = true;
      continue;
    }
    if (n == 0 && pid_ <= 0 && rewritten(true)) {
      // The old file's last line without its newline is whole: it came before the switch.
      if (take_rest(line)) {
        pending_restart_ = true;
        return Status::kLine;
      }
      return restart();
    }
    if (o_.stall_s > 0 && !stall_reported_ && quiet_s() >= o_.stall_s) {
      // A last line without its newline, quiet this long, is whole: it is read
      // first. One over the length limit that is being skipped stays skipped
      // to its newline: its rest, when it comes, is no line of its own.
      if (!skipping_ && take_rest(line)) return Status::kLine;
      stall_reported_ = true;
      return Status::kStalled;
    }
    if (o_.call_off && o_.call_off()) {
      if (!skipping_ && take_rest(line)) return Status::kLine;  // whole: nothing more will come
      return Status::kCalledOff;
    }
    if (o_.on_wait) o_.on_wait();
    std::this_thread::sleep_for(std::chrono::duration<double>(o_.poll_s));
  }
}

}  // namespace trainplan::profile
