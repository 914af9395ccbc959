// One profiling trial: run a training program at (batch, workers, epochs)
// and read what its rank 0 printed. The output protocol (docs/PROFILING.md)
// is one JSON object per line on stdout:
//   {"event":"epoch","epoch":k,"epoch_time_s":t,"metric":m,"metric_name":"accuracy"}
//   {"event":"done", ...}
// Other lines are ignored, so programs may log freely.
#pragma once
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

enum class TrialStatus { kOk, kFailed, kTimeout, kBadOutput };
const char* to_string(TrialStatus s);  // "ok", "failed", "timeout", "bad-output"
// Parses the names above; nullopt for anything else.
std::optional<TrialStatus> parse_status(const std::string& s);

// What a trial measured and how it ended; one row of the sample store.
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
  std::string problem;  // why the output is unusable; empty when usable
};

// Reads the JSON lines in `stdout_text`. The output is usable when at least
// one epoch line with a finite positive epoch_time_s was seen; otherwise
// `problem` says what was missing.
TrialOutput parse_trial_output(const std::string& stdout_text);

// Current UTC time as "2026-11-22T02:30:00Z".
std::string utc_now();

}  // namespace trainplan::profile
