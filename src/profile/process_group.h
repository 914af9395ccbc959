// Runs a set of shell commands as one process group (one trial's ranks),
// with a time limit and a cancel flag, and kills the whole group when any
// process fails, when time runs out, or when cancelled. Why one group: a
// failed rank leaves its peers blocked in a collective, and a launcher
// (torchrun, srun) has children of its own; killing the group gets them all.
// A descendant that left the group (setsid, setpgid) is orphaned to this
// process, a child subreaper, and killed when the group ends. Not for
// concurrent use: the orphans are told apart as children that this process
// did not have before the group started.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace trainplan::profile {

struct ProcessGroupOptions {
  double timeout_s = 0;                      // 0: no limit
  // A regular expression (ECMAScript) whose first match in a whole line of
  // stderr restarts the timeout (srun's "srun: job N has been allocated
  // resources", after "queued and waiting for resources"): timeout_s then
  // bounds the wait before it and, afresh, the run after it, so that a
  // trial's time in a queue is not taken from its run. Not once the group is
  // being ended. "": never.
  std::string timeout_restarts_at;
  const std::atomic<bool>* cancel = nullptr;  // polled every 100 ms; true stops the group
  size_t stderr_tail_bytes = 2048;           // how much of the merged stderr to keep
  size_t stdout_max_bytes = 16 << 20;        // command 0's stdout kept beyond this is dropped (stdout_truncated)
  // Keep only the lines of command 0's stdout that hold a '{' (the trial
  // protocol's JSON lines), so that a program's other logging does not push
  // them past stdout_max_bytes.
  bool stdout_json_lines_only = false;
  // With stdout_json_lines_only: keep only the lines labelled rank 0 ("0: ",
  // srun --label; rank0_line), so that other ranks' lines count against no cap.
  bool stdout_rank0_labelled_only = false;
  // With stdout_json_lines_only: called with each whole line kept (its
  // newline included), as it is read, whether or not stdout_max_bytes still
  // has room for it.
  std::function<void(const std::string& line)> on_json_line0;
  // Polled every 100 ms; true ends the group as finished, not failed (the
  // command said it is done but did not exit): SIGTERM, then SIGKILL after
  // kill_grace_s; ProcessGroupResult::ended_on_request says so.
  const std::atomic<bool>* end = nullptr;
  double kill_grace_s = 2;                   // SIGTERM, then SIGKILL after this
  std::function<void(double elapsed_s)> on_tick;  // called about once a second while running
  // Called with each piece of command 0's stdout as it is read (pieces split
  // anywhere, lines included), beside collecting it in stdout0.
  std::function<void(const char* data, size_t n)> on_stdout0;
  // CPUs each command is pinned to (by index; empty or missing: not pinned).
  std::vector<std::vector<int>> cpus;
};

struct ProcessGroupResult {
  bool timed_out = false;
  bool cancelled = false;
  int failed_index = -1;  // the first command that exited non-zero or died, -1 if none
  int exit_code = 0;      // its exit status, or 128 + signal
  std::string stdout0;    // stdout of command 0 (other commands' stdout is discarded)
  bool stdout_truncated = false;  // some of it was dropped at stdout_max_bytes
  std::string stderr_tail;  // the last stderr_tail_bytes of all commands' stderr
  double wall_s = 0;
  // Processes that had left the group (setsid, a daemon's double fork) and
  // were still running when it ended: killed with it (this process is a
  // child subreaper, so such orphans come back to it rather than to init).
  int escaped_killed = 0;
  bool ended_on_request = false;  // ended by ProcessGroupOptions::end
  // Seconds from the start to ProcessGroupOptions::timeout_restarts_at's
  // appearance (the time in a queue); -1 where it did not appear.
  double restarted_after_s = -1;
  bool ok() const { return !timed_out && !cancelled && failed_index < 0; }
};

// One line of `srun --label` output: its text when labelled "0: " (leading
// spaces allowed, as with ten tasks or more), else nullopt.
std::optional<std::string> rank0_line(const std::string& line);

// Starts each command with /bin/bash -c (else /bin/sh -c) in a new process
// group and waits. Children get SIGKILL if this process dies
// (PR_SET_PDEATHSIG; bash execs the command itself, so the program gets it),
// so a killed profiler does not leave ranks behind. Throws std::runtime_error if a
// process cannot be started.
ProcessGroupResult run_process_group(const std::vector<std::string>& commands, const ProcessGroupOptions& opts);

// What a trial says of a result whose stdout_truncated is set, with the
// ProcessGroupOptions::stdout_max_bytes it ran under.
std::string stdout_truncated_text(size_t stdout_max_bytes);

// Starts `command` as run_process_group starts a rank (/bin/bash -c, a new
// process group of its own, PR_SET_PDEATHSIG, default signals, stdin and
// stderr /dev/null) with stdout on `out_fd` (-1: /dev/null), and returns its
// pid (-1 when fork fails) without waiting: for a helper that lives beside
// the trials, such as the trainer's fork server.
pid_t start_process(const std::string& command, int out_fd);

// The CPUs this process may run on (its affinity mask), in increasing order.
std::vector<int> allowed_cpus();

// Whether `processes` of `threads` threads each need more CPUs than
// allowed_cpus() gives (false when the mask cannot be read).
bool oversubscribes(int processes, int threads);

// Disjoint CPU sets for `processes` processes of `threads` threads each, from
// allowed_cpus() in order; empty when they do not fit (pinning an
// oversubscribed group would only stop the OS from spreading it).
std::vector<std::vector<int>> pin_plan(int processes, int threads);

}  // namespace trainplan::profile
