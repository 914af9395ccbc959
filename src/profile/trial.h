// One profiling trial: run a training program at (batch, workers, epochs)
// and read what its rank 0 printed. The output protocol (docs/PROFILING.md)
// is one JSON object per line on stdout:
//   {"event":"epoch","epoch":k,"epoch_time_s":t,"metric":m,"metric_name":"accuracy"}
//   {"event":"done", ...}
// Other lines are ignored, so programs may log freely.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainplan::profile {

// The plan key of a trial.
struct TrialKey {
  int batch = 0;    // per-worker batch
  int workers = 0;  // processes (data-parallel ranks)
  int epochs = 0;   // epochs to train
  bool operator==(const TrialKey&) const = default;
  auto operator<=>(const TrialKey&) const = default;
};

std::string to_string(const TrialKey& k);  // "b=32 r=2 e=1"

// A line of a program's output as a message quotes it: whole up to 80
// characters, else its first 77 and "...".
std::string clipped_line(const std::string& line);

enum class TrialStatus { kOk, kFailed, kTimeout, kBadOutput };
const char* to_string(TrialStatus s);  // "ok", "failed", "timeout", "bad-output"
// Parses the names above; nullopt for anything else.
std::optional<TrialStatus> parse_status(const std::string& s);

// Steady-state step times measured in a trial (docs/PROFILING.md, "Step
// timing"): from a time trial's step_timing events, or from the step fields
// of a training trial's epoch lines.
// Which clock a step is timed by. kWall: wall time. kCpu: the process's CPU
// time per step (step_cpu_median_s), which other processes competing for the
// cores barely change; it leaves out time spent waiting (for a peer, a GPU,
// I/O), so it stands for the wall time on an idle machine only for CPU
// training by one process with one thread. kAuto: kCpu exactly then (one
// worker, a line with device "cpu", threads 1 or absent, workers 1 or absent,
// and the CPU fields), else kWall.
enum class StepClock { kAuto, kWall, kCpu };
const char* to_string(StepClock c);  // "auto", "wall", "cpu"
// Parses the names above; nullopt for anything else.
std::optional<StepClock> parse_step_clock(const std::string& s);

struct StepTiming {
  double step_time_s = 0;                // median step time (a time trial: the lowest repeat's)
  double ci_low_s = 0, ci_high_s = 0;    // 95% interval of that median
  long steps_per_epoch = 0;
  double epoch_overhead_s = 0;           // per-epoch work outside the steps (shuffle, index copy)
  long steps_timed = 0;
  long outliers = 0;                     // steps far from the rest: interference inside the trial
  std::vector<double> repeats;           // a time trial's repeats' medians, in the order run
  // Relative uncertainty of epoch_time_s(): the larger of the interval's
  // half-width and half the spread between repeats, over the median.
  double spread = 0;
  std::string clock = "wall";            // the clock step_time_s was read from: "wall" or "cpu"
  double wall_step_time_s = 0;           // the wall-clock median beside it
  // The machine probe's CPU seconds (profile/machine_probe.h), the median over
  // the probes taken before the repeats: the machine's speed while it ran;
  // 0 when not probed. A witness only: step_time_s is never scaled by it.
  double probe_s = 0;
  // A time trial's line said it stopped (at its step cap or time limit)
  // before the median's interval reached its target (`"converged":false`),
  // whose half-width, relative, the line gives (0: not given).
  bool unconverged = false;
  double ci_target = 0;
  // The wall clock's 10th and 90th percentile step times, where the line
  // gives them (0: not given). Read for a note, not kept in the store.
  double p10_s = 0, p90_s = 0;
  double epoch_time_s() const { return double(steps_per_epoch) * step_time_s + epoch_overhead_s; }
};

// What a trial measured and how it ended; one row of the sample store.
// A trial of 0 epochs is a time trial: steps only, no metric.
struct TrialRecord {
  TrialKey key;
  TrialStatus status = TrialStatus::kOk;
  std::string reason;       // why it was not ok; empty when ok
  std::string stderr_tail;  // last ~2 KB of the processes' stderr
  std::optional<double> epoch_time_s;  // mean over the epochs reported
  std::optional<double> metric;        // after the last epoch reported
  std::vector<std::optional<double>> epoch_metrics;  // after each epoch reported, in order (the learning curve)
  std::string metric_name;             // e.g. "accuracy", "loss"
  int epochs_reported = 0;             // epoch lines seen
  std::optional<long> dataset_size;    // training examples per epoch, when reported
  double wall_s = 0;                   // the trial's wall time, launch to exit
  std::string started_at;              // ISO 8601 UTC
  std::string finished_at;
  std::string command;                 // the command line run (rank 0's, or the launcher's)
  std::optional<StepTiming> timing;    // step times, when the program reported them
  bool oversubscribed = false;         // workers x threads per worker exceeded the CPUs
  std::string note;                    // a warning on an ok trial (interference, oversubscription)
  bool metric_diverged = false;        // an epoch's metric was NaN or infinite: the run diverged
};

// The measurements read from rank 0's stdout.
struct TrialOutput {
  int epochs_reported = 0;
  std::optional<double> mean_epoch_time_s;
  std::optional<double> last_metric;
  std::vector<std::optional<double>> epoch_metrics;  // one per epoch counted, in order
  std::string metric_name;
  std::optional<long> dataset_size;
  bool saw_done = false;
  std::optional<StepTiming> step_timing;  // a {"event":"step_timing",...} line (time trials): the last usable
  // Every usable step_timing line that names its per-worker "batch", by that
  // batch (the last of each): a run that timed several batches ({batches}).
  std::map<long, StepTiming> step_timing_by_batch;
  std::optional<StepTiming> epoch_steps;  // the epoch lines' step fields, combined over epochs
  std::string problem;  // why the output is unusable; empty when usable
  std::string note;     // what was read otherwise than written (a NaN metric); empty when none
  bool metric_diverged = false;  // an epoch's metric was NaN or infinite
  int repeated_epochs = 0;       // epoch lines whose "epoch" number came before (several ranks printing)
};

// Reads the JSON lines in `stdout_text`. The output is usable when at least
// one epoch line with a finite positive epoch_time_s was seen, or (for a time
// trial, `time_trial`) a step_timing line with a finite positive median and
// steps_per_epoch; otherwise `problem` says what was missing.
// `clock` chooses which step fields give StepTiming::step_time_s; `workers`
// is the trial's (kAuto takes the CPU clock for one worker only).
TrialOutput parse_trial_output(const std::string& stdout_text, bool time_trial = false,
                               StepClock clock = StepClock::kWall, int workers = 1);

// Current UTC time as ISO 8601, "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now();

}  // namespace trainplan::profile
