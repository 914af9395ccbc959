#include "profile/interrupt.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

namespace trainplan::profile {
namespace {

std::atomic<bool> g_interrupted{false};
volatile sig_atomic_t g_signal = 0;
// Lock-free atomics: read in the signal handler.
std::atomic<pid_t> g_groups[kMostRunningGroups];
std::atomic<pid_t> g_spared{0};

void on_signal(int sig) {
  // A closed output pipe (`| head`, or `| tee` ended by the same Ctrl-C)
  // stops the run as a Ctrl-C does; the writes after it fail quietly rather
  // than signal again.
  if (sig == SIGPIPE) signal(SIGPIPE, SIG_IGN);
  if (g_interrupted.load()) {
    if (sig == SIGPIPE) return;
    for (auto& g : g_groups)
      if (const pid_t pgid = g.load(); pgid > 0) kill(-pgid, SIGKILL);
    // Descendants that left their group (setsid) come back to this process,
    // their subreaper, as their parents die: for 0.2 s, kill every child.
    for (int round = 0; round < 20; ++round) {
      kill_children();
      const timespec tick{0, 10'000'000};
      nanosleep(&tick, nullptr);
    }
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  g_signal = sig;
  g_interrupted.store(true);
}

}  // namespace

// SIGKILL to every child of every thread of this process but the spared one,
// from /proc/self/task/*/children, with system calls only (async-signal-safe).
void kill_children() {
  const int tasks = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (tasks < 0) return;
  char entries[4096];
  for (long n; (n = syscall(SYS_getdents64, tasks, entries, sizeof entries)) > 0;) {
    for (long at = 0; at < n;) {
      const auto* d = reinterpret_cast<const dirent64*>(entries + at);
      at += d->d_reclen;
      if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
      char path[64] = "/proc/self/task/";
      size_t len = 16;
      for (const char* c = d->d_name; *c && len < 40; ++c) path[len++] = *c;
      for (const char* c = "/children"; *c; ++c) path[len++] = *c;
      path[len] = '\0';
      const int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char buf[4096];
      const ssize_t got = read(fd, buf, sizeof buf - 1);
      close(fd);
      pid_t pid = 0;
      for (ssize_t i = 0; i <= got; ++i) {
        if (i < got && buf[i] >= '0' && buf[i] <= '9') {
          pid = pid * 10 + (buf[i] - '0');
        } else if (pid > 0) {
          if (pid != g_spared.load()) kill(pid, SIGKILL);
          pid = 0;
        }
      }
    }
  }
  close(tasks);
}

const std::atomic<bool>& install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaction(sig, &sa, nullptr);
  return g_interrupted;
}

int interrupt_signal() { return g_signal; }

void note_running_group(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t empty = 0;
    if (g.compare_exchange_strong(empty, pgid)) return;
  }
}

void forget_running_group(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t was = pgid;
    if (g.compare_exchange_strong(was, 0)) return;
  }
}

void spare_from_second_signal(pid_t pid) { g_spared.store(pid); }

}  // namespace trainplan::profile
