// The built-in trainer's fork server (train/fork_server.h) for the length of
// one profile. Each time-trial run of a built-in workload is a fresh process,
// and most of a short one is libtorch's load (about 0.75 s here); with the
// server running, a launch of `TRAINER ARGS` runs as `trainplan-forkrun SOCKET
// TRAINER ARGS`, a child forked from a trainer that has loaded libtorch once.
// The runs' measurements are a fresh process's: the child starts from the
// loaded image before any tensor operation, with the client's CPUs.
//
// Used when trainplan-forkrun sits beside the trainer and the environment
// does not set TRAINPLAN_FORK_SERVER=0; when the server cannot start, the
// launches stay plain.
#pragma once
#include <sys/types.h>

#include <string>

#include "profile/launcher.h"

namespace trainplan::profile {

class TrainerForkServer {
 public:
  // Starts `trainer --fork-server SOCKET` (an empty `trainer`: find_trainer())
  // and waits up to 30 s for it to say
  // it is ready; on any failure the object is inactive. Never throws.
  explicit TrainerForkServer(const std::string& trainer);
  ~TrainerForkServer();  // stops the server and removes its socket
  TrainerForkServer(const TrainerForkServer&) = delete;
  TrainerForkServer& operator=(const TrainerForkServer&) = delete;

  bool active() const { return pid_ > 0; }
  // Why the server is not running ("" when it is).
  const std::string& why_not() const { return why_not_; }
  // The launch rewrite: commands that start with the quoted trainer run
  // through trainplan-forkrun. Empty when inactive.
  CommandWrap wrap() const;
  pid_t pid() const { return pid_; }                         // the server's, -1 when inactive
  const std::string& socket_path() const { return socket_; }  // where it listens
  const std::string& client_path() const { return forkrun_; }  // trainplan-forkrun
  // Stops the server and removes its socket now (the destructor does it too):
  // for a caller about to std::exit.
  void stop();

 private:

  std::string trainer_, forkrun_, dir_, socket_, why_not_;
  pid_t pid_ = -1;
};

}  // namespace trainplan::profile
