// Reader for the Pollux artifact's trace format (one directory per model):
//   placements.csv      placement,local_bsz,step_time,sync_time
//   scalability.csv     num_nodes,num_replicas,local_bsz,step_time,sync_time
//   validation-<B>.csv  progress,iteration,metric,grad_sqr,grad_var   (optional)
// A directory without validation files is a time-only workload.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace trainplan::io {

struct PlacementRow {
  std::string placement;  // one digit per node: GPUs used on that node, e.g. "24"
  int gpus = 0;           // sum of the digits
  int nodes = 0;          // number of digits
  double local_bsz = 0;   // per-GPU batch
  double step_time = 0;   // seconds per iteration
  double sync_time = 0;   // part of step_time spent synchronising gradients
  bool sync_known = true;  // false: not measured (PolluxTraceOptions::sync_optional), sync_time 0
};

struct ScalabilityRow {
  int num_nodes = 0;
  int num_replicas = 0;
  double local_bsz = 0;
  double step_time = 0;
  double sync_time = 0;
  bool sync_known = true;  // as PlacementRow's
};

// The most work a validation row may say was done (`progress`, steps of the
// first batch; the shipped traces reach 6e5): the simulator runs each job to
// its last row's, and one past a billion steps would not end.
inline constexpr double kMostValidationProgress = 1e9;

struct ValidationRow {
  double progress = 0;  // > 0, increasing from row to row, at most kMostValidationProgress
  double iteration = 0;
  double metric = 0;
  std::optional<double> grad_sqr;
  std::optional<double> grad_var;
};

// One training run at a fixed global batch.
struct ValidationCurve {
  long global_batch = 0;
  std::string path;
  std::vector<ValidationRow> rows;  // in file order (increasing iteration)
};

struct PolluxTrace {
  std::string name;  // directory base name, e.g. "cifar10"
  std::string dir;
  std::vector<PlacementRow> placements;
  std::vector<ScalabilityRow> scalability;  // may be empty
  std::vector<ValidationCurve> curves;      // sorted by global batch; empty if time-only

  bool time_only() const { return curves.empty(); }
};

struct PolluxTraceOptions {
  // Read the validation-<B>.csv learning curves (false: not even opened, for
  // step times alone). Default: true.
  bool curves = true;
  // Accept placements.csv and scalability.csv without sync_time, or with cells
  // in it that say a value is missing (empty, NA, NaN, -: io::says_missing):
  // the row's sync_known is then false. Default: false (required).
  bool sync_optional = false;
};

// A trace's name: its directory's last component, with or without a trailing
// slash or dots inside ("tr/cifar10", "tr/cifar10/", "tr/./cifar10/."):
// "cifar10". A path that is only "." or ".." is not resolved to a name.
std::string pollux_trace_name(const std::string& dir);

// Whether a file of this name in a trace directory is one read_pollux_trace
// reads: placements.csv, scalability.csv, validation-<B>.csv.
bool is_pollux_trace_file_name(const std::string& name);

// Reads a trace directory. Throws InputError (file, line, column) on bad input:
// a missing placements.csv, missing columns, non-numbers, NaN/Inf, step times
// or batches <= 0, a placement that is not a string of digits 1-9.
PolluxTrace read_pollux_trace(const std::string& dir, const PolluxTraceOptions& options = {});

// Directories under `root` that look like traces (contain placements.csv), sorted.
std::vector<std::string> list_pollux_traces(const std::string& root);

// The traces of a --data argument: `data`/pollux-t4 when that exists (the
// shared data root), else `data` itself, listed by list_pollux_traces.
std::vector<std::string> find_pollux_traces(const std::string& data);

}  // namespace trainplan::io
