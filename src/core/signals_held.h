// Termination signals held back over a short step that must not be cut in
// two: a temporary file written and renamed into place, a chart's temporary
// folder made, used and removed. SIGINT, SIGTERM, SIGHUP and SIGQUIT that
// arrive meanwhile are delivered once the holder is destroyed, after the step
// has cleaned up (so a Ctrl-C still ends the program, a moment later, with
// nothing left behind). For the calling thread (pthread_sigmask): a signal
// sent to the process goes to another thread that does not hold it, where
// there is one. Holders nest.
#pragma once
#include <signal.h>

namespace trainplan {

class TerminationSignalsHeld {
 public:
  TerminationSignalsHeld();
  ~TerminationSignalsHeld();
  TerminationSignalsHeld(const TerminationSignalsHeld&) = delete;
  TerminationSignalsHeld& operator=(const TerminationSignalsHeld&) = delete;

 private:
  sigset_t before_;
};

}  // namespace trainplan
