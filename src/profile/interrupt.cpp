#include "profile/interrupt.h"

#include <signal.h>

namespace trainplan::profile {
namespace {

std::atomic<bool> g_interrupted{false};
volatile sig_atomic_t g_signal = 0;

void on_signal(int sig) {
  if (g_interrupted.load()) {
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
  return g_interrupted;
}

int interrupt_signal() { return g_signal; }

}  // namespace trainplan::profile
