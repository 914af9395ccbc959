// Ctrl-C for long runs: SIGINT, SIGTERM and SIGHUP (a closed terminal) set a
// flag that the profiler polls, so that it kills the running trial, keeps
// every finished one and exits cleanly. A second signal exits at once, first
// killing the process groups of the trials still running, so that no trial
// (a training job holding GPUs) outlives the tool.
#pragma once
#include <sys/types.h>

#include <atomic>

namespace trainplan::profile {

// Installs the handlers (idempotent) and returns the flag they set.
const std::atomic<bool>& install_interrupt_handler();
// Which signal set the flag (0 if none).
int interrupt_signal();

// The process groups a second signal kills (a table of kMostRunningGroups;
// past it, a group is not noted). Async-signal-safe to read; call from the
// thread that starts and reaps the groups.
inline constexpr int kMostRunningGroups = 64;
void note_running_group(pid_t pgid);
void forget_running_group(pid_t pgid);

}  // namespace trainplan::profile
