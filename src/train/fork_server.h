// `trainplan-train --fork-server SOCKET`: pays for loading libtorch once
// (about 0.75 s on a 2-core machine, most of a short time trial) and runs every trainer
// invocation that `trainplan-forkrun SOCKET ...` sends in a child forked from
// the loaded, still single-purpose process. The child takes the client's
// stdin, stdout, stderr, working directory, environment and CPU affinity, so
// it runs as `trainplan-train ARGS` would; the client exits with its status.
// When the client is killed, the child exits within milliseconds.
//
// The server forks before it has run any tensor operation, so no intra-op
// thread pool exists to be lost in the child. It exits on SIGTERM or SIGINT,
// or when its parent dies (the profiler starts it with PR_SET_PDEATHSIG).
#pragma once
#include <string>

namespace trainplan::train {

// The trainer's main: what each forked child runs with the request's argv.
using TrainerMain = int (*)(int argc, char** argv);

// Listens on `socket_path` (removed first if it is a stale socket, and on
// exit), prints "ready" on stdout, and serves until stopped. Returns the
// process's exit code: 0 when stopped, 1 when the socket cannot be opened.
int serve_forks(const std::string& socket_path, TrainerMain run);

}  // namespace trainplan::train
