// Ctrl-C for long runs: SIGINT and SIGTERM set a flag that the profiler
// polls, so that it kills the running trial, keeps every finished one and
// exits cleanly. A second Ctrl-C falls back to the default (immediate) exit.
#pragma once
#include <atomic>

namespace trainplan::profile {

// Installs the handlers (idempotent) and returns the flag they set.
const std::atomic<bool>& install_interrupt_handler();
// Which signal set the flag (0 if none).
int interrupt_signal();

}  // namespace trainplan::profile
