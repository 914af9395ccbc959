#include "core/signals_held.h"

#include <pthread.h>

namespace trainplan {
namespace {

constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

}  // namespace

TerminationSignalsHeld::TerminationSignalsHeld() {
  sigset_t held;
  sigemptyset(&held);
  for (int sig : kTerminationSignals) sigaddset(&held, sig);
  pthread_sigmask(SIG_BLOCK, &held, &before_);
}

TerminationSignalsHeld::~TerminationSignalsHeld() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }

bool termination_signal_held() {
  sigset_t pending;
  if (sigpending(&pending) != 0) return false;
  for (int sig : kTerminationSignals)
    if (sigismember(&pending, sig) == 1) return true;
  return false;
}

}  // namespace trainplan
