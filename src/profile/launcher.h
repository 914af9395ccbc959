// Launchers turn a command template and a trial into the processes to run.
//   local: a {rank} template is started once per rank on this machine; a
//          template without {rank} is started once (it is a launcher itself).
//   slurm: one `srun` per trial. A {rank} template runs as r Slurm tasks, bash
//          on the node putting each task's $SLURM_PROCID where {rank} was and
//          running the template, as the local launcher does; one without
//          {rank} runs as one task per node.
// Both fill {master_port} with a free loopback port chosen per trial.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profile/command_template.h"
#include "profile/process_group.h"
#include "profile/trial.h"

namespace trainplan::profile {

enum class LauncherKind { kLocal, kSlurm };
// "local" or "slurm"; throws InputError otherwise.
LauncherKind parse_launcher(const std::string& s);
const char* to_string(LauncherKind k);

// Local commands that start with `program` (a shell word, as written in the
// template) run as `wrapper program ...`; the trial still records the plain
// command. The built-in trainer's fork server uses it (trainer_fork_server.h).
struct CommandWrap {
  std::string program;  // empty: no wrapping
  std::string wrapper;
};

struct LaunchSettings {
  LauncherKind kind = LauncherKind::kLocal;
  CommandWrap wrap;                     // local launches only
  std::string master_addr = "127.0.0.1";
  int workers_per_node = 0;             // >0: {nodes} = ceil(workers / this); else 1
  std::vector<std::string> srun_args;   // extra srun arguments, e.g. --partition=debug
};

// Whether a trial of `processes` processes of `threads` threads each needs
// more CPUs than this process may use. Only a local launch runs here, so only
// a local launch can oversubscribe (process_group.h's oversubscribes).
bool oversubscribes_locally(const LaunchSettings& s, int processes, int threads);

// The processes for one trial: shell command lines, rank 0 first.
struct LaunchPlan {
  std::vector<std::string> commands;
  bool label_filter = false;  // stdout lines carry srun's "N: " labels; keep rank 0's
  std::string display;        // what to record as the trial's command
  // ProcessGroupOptions::timeout_restarts_at: under Slurm, srun's line that
  // the job left the queue, so that a trial's timeout is its run's.
  std::string timeout_restarts_at;
};

// ", counted from when the Slurm job started: it queued N s" for a trial that
// timed out after ProcessGroupOptions::timeout_restarts_at restarted its
// clock (`restarted_after_s` >= 0); "" otherwise.
std::string queued_text(double restarted_after_s);

// `batches`: the value of {batches} (empty: key.batch alone).
LaunchPlan plan_launch(const CommandTemplate& tmpl, const TrialKey& key, const LaunchSettings& s, int master_port,
                       const std::vector<int>& batches = {});

// Throws InputError naming `option` when the template uses a transformer
// grid's placeholder ({hidden}, {tp}, ...), which a data-parallel trial has
// no value for; plan_launch checks it too, `profile` before its store exists.
void check_data_parallel_template(const CommandTemplate& tmpl, const std::string& option = "--cmd");

// A transformer configuration's layout: tp·pp·dp processes.
struct LayoutKey {
  int tp = 1, pp = 1, dp = 1;
  int micro_batch = 1, global_batch = 1;
  // Values of the shape placeholders ({hidden}, {precision}, ...) by name.
  std::map<std::string, std::string> shape;
  int workers() const { return tp * pp * dp; }
};
std::string to_string(const LayoutKey& k);  // "tp=2 pp=1 dp=1 mb=4 gb=16"

// The processes for one transformer configuration, as plan_launch: {rank}
// templates once per rank (tp·pp·dp of them), others once.
LaunchPlan plan_layout_launch(const CommandTemplate& tmpl, const LayoutKey& key, const LaunchSettings& s,
                              int master_port);

// Keeps the lines labelled "0: " by `srun --label` and strips the label.
std::string rank0_lines(const std::string& labelled);

// The first executable `program` in the folders of $PATH, or "" when none.
std::string find_on_path(const std::string& program);

// Throws InputError (option --launcher) when Slurm cannot run a trial: srun
// is not on PATH, or the controller does not answer `sinfo` within 30 s;
// checked before the first trial, so that a profile does not fill its store
// with failed trials.
void check_slurm_reachable();

// Why a trial launched by srun failed, from srun's and slurmstepd's messages
// in its stderr: the first task that ended badly ("rank N exited with
// status C", "rank N: Segmentation fault"; not one --kill-on-bad-exit
// terminated), else a cancelled job step (scancel, a time or memory limit),
// else a job srun could not start; nullopt when none of them is there.
std::optional<std::string> slurm_failure(const std::string& stderr_tail);

// Why a trial launched by srun ran out of time without starting: srun said
// its job was queued and never that it was allocated (a request the
// partition cannot meet, with srun's reason when it gave one, or a busy
// cluster); nullopt when the job started or srun said nothing of a queue.
std::optional<std::string> slurm_never_started(const std::string& stderr_tail);

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0).
int free_loopback_port();

// Quotes `s` for /bin/sh as one word.
std::string shell_quote(const std::string& s);
// `s` as one shell word: as it is when it holds only characters the shell
// takes literally, else shell_quote(s) (for commands people read).
std::string shell_word(const std::string& s);

// `s` as literal text of a command template (profile/command_template.h):
// its braces doubled, so that a path holding '{' is not read as a placeholder.
std::string template_literal(const std::string& s);

// Throws InputError (`option`) unless `addr` is a host name or an IPv4 or IPv6
// address (letters, digits and . - _ : %): it is pasted into the trial's
// shell command as {master_addr}.
void check_host_address(const std::string& addr, const std::string& option = "--master-addr");

}  // namespace trainplan::profile
