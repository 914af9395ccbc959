// One measured transformer configuration: a command template run for one
// parallel layout (tp, pp, dp, micro-batch, global batch), its output read for
// the iteration time and the peak memory. What `trainplan llm profile` runs
// per row of its grid (docs/PROFILING.md, "Transformer layouts").
//
// The command's rank 0 (or the launcher) must print, on stdout, a JSON line
//   {"event":"iteration_timing","iteration_time_s":T,"peak_memory_bytes":M,...}
// as `trainplan-train --workload gpt --time-only` does; the last such line
// counts. iteration_time_s (the median) must be > 0; peak_memory_bytes and
// the per-group communication seconds (LayoutTiming) are
// optional (a user's Megatron wrapper may print the CUDA allocator's peak, or
// nothing). With the p10 statistic, iteration_time_p10_s is read instead: on
// a machine shared with other work, interference only adds time, so a low
// quantile of the iterations is closer to the configuration's own cost.
#pragma once
#include <atomic>
#include <optional>
#include <string>

#include "profile/command_template.h"
#include "profile/launcher.h"

namespace trainplan::profile {

struct LayoutTiming {
  double iteration_time_s = 0;
  std::optional<double> peak_memory_bytes;
  // Seconds per iteration spent in the tensor-, pipeline- and data-parallel
  // groups' calls, the mean over ranks of tp_comm_s_per_rank, pp_comm_s_per_rank
  // and dp_comm_s_per_rank (as trainplan-train reports them); empty when the
  // line has none.
  std::optional<double> tp_comm_s, pp_comm_s, dp_comm_s;
  // Why a peak_memory_bytes on the line was not taken (not a number, not > 0,
  // or past 1e15 bytes, which no GPU holds); empty when it was, or was absent.
  std::string memory_ignored;
};

// The last iteration_timing line of `stdout_text`; nullopt when there is none
// or its iteration_time_s is missing or not > 0. Other lines are ignored.
// `field` is the JSON field taken as the iteration time. `why` (may be null)
// receives, when nullopt is returned, what was wrong with the last line that
// meant to be one (not JSON: NaN is no JSON number; the field missing, not a
// number, or not > 0), and is left empty when no line meant to be one.
std::optional<LayoutTiming> parse_layout_timing(const std::string& stdout_text,
                                                const std::string& field = "iteration_time_s",
                                                std::string* why = nullptr);

struct LayoutTrialResult {
  std::optional<LayoutTiming> timing;  // empty on failure
  std::string error;                   // why, when empty: exit status, timeout, no timing line; stderr's tail
  std::string command;                 // rank 0's command line as run
  double wall_s = 0;
  // A local trial's ranks (one thread each assumed) outnumbered the CPUs
  // this process may use, so they shared CPUs (unpinned): the time measures
  // contention as much as the layout, which no GPU cluster runs this way.
  bool oversubscribed = false;
};

// Runs `tmpl` for `key` (a free loopback port for {master_port}) and waits
// at most timeout_s (0: no limit). The ranks are pinned to disjoint CPUs when
// they fit (process_group.h), as `trainplan profile` does; a pinned rank's
// communication helpers may still use the others (TRAINPLAN_HELPER_CPUS).
// `cancel` (may be null), once true, kills the trial's process group
// (error "cancelled").
LayoutTrialResult run_layout_trial(const CommandTemplate& tmpl, const LayoutKey& key, const LaunchSettings& s,
                                   double timeout_s, const std::string& field = "iteration_time_s",
                                   const std::atomic<bool>* cancel = nullptr);

}  // namespace trainplan::profile
