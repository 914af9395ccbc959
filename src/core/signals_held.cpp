#include "core/signals_held.h"

#include <pthread.h>

#include <initializer_list>

namespace trainplan {

TerminationSignalsHeld::TerminationSignalsHeld() {
  sigset_t held;
  sigemptyset(&held);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&held, sig);
  pthread_sigmask(SIG_BLOCK, &held, &before_);
}

TerminationSignalsHeld::~TerminationSignalsHeld() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }

}  // namespace trainplan
