#include "profile/interrupt.h"

#include <signal.h>

namespace trainplan::profile {
namespace {

std::atomic<bool> g_interrupted{false};
volatile sig_atomic_t g_signal = 0;
// Lock-free atomics: read in the signal handler.
std::atomic<pid_t> g_groups[kMostRunningGroups];

void on_signal(int sig) {
  if (g_interrupted.load()) {
    for (auto& g : g_groups)
      if (const pid_t pgid = g.load(); pgid > 0) kill(-pgid, SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  g_signal = sig;
  g_interrupted.store(true);
}

}  // namespace

const std::atomic<bool>& install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
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

}  // namespace trainplan::profile
