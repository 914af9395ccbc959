// Termination signals held back over a short step that must not be cut in
// two: a temporary file written and renamed into place, a chart's temporary
// folder made, used and removed. SIGINT, SIGTERM, SIGHUP and SIGQUIT that
// arrive meanwhile are delivered once the holder is destroyed, after the step
// has cleaned up (so a Ctrl-C still ends the program, a moment later, with
// nothing left behind). For the calling thread (pthread_sigmask): a signal
// sent to the process goes to another thread that does not hold it, where
// there is one. Holders nest. Two of one signal held meanwhile arrive as one:
// a step that may last (a child program waited for) polls
// termination_signal_held() and ends itself when one is.
#pragma once
#include <signal.h>

namespace trainplan {

class TerminationSignalsHeld {
 public:
  TerminationSignalsHeld();
  ~TerminationSignalsHeld();
  TerminationSignalsHeld(const TerminationSignalsHeld&) = delete;
  TerminationSignalsHeld& operator=(const TerminationSignalsHeld&) = delete;

  // The thread's signal mask before this holder: what a child started
  // meanwhile should run with, so that a Ctrl-C reaches it.
  const sigset_t& mask_before() const { return before_; }

 private:
  sigset_t before_;
};

// Whether a termination signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) waits,
// held, for this thread or the process.
bool termination_signal_held();

}  // namespace trainplan
