// Ctrl-C for long runs: SIGINT, SIGTERM, SIGHUP (a closed terminal) and
// SIGPIPE (a closed output pipe) set a flag that the profiler polls, so that
// it kills the running trial, keeps every finished one and exits cleanly. A
// second signal exits at once, first killing the process groups of the
// trials still running and every child of this process (the descendants
// that left their group come back to it, their subreaper), so that no trial
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

// A child a second signal leaves alone: one that stops and cleans up after
// itself at this process's death (the trainer's fork server, whose parent-
// death signal is SIGTERM). One at a time; 0 forgets it.
void spare_from_second_signal(pid_t pid);

// SIGKILL to every child of every thread of this process but the spared one
// (from /proc; async-signal-safe). A subreaper's children include the
// descendants that left their group (setsid) once their parents died.
void kill_children();

}  // namespace trainplan::profile
