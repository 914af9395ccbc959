// What `trainplan simulate --json` prints and `POST /simulate` answers, from
// one set of functions, so that both give the same JSON: the settings, the
// jobs of a Pollux-format workload (applications replayed from a data
// directory) or of the Philly trace, and the runs' summary per policy.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "sim/app_model.h"
#include "sim/experiment.h"
#include "sim/job.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace trainplan::app {

struct SimulateQuery {
  std::string workload;  // a Pollux-format workload CSV, or
  std::string philly;    // the Philly trace CSV (exactly one of the two)
  // With philly: only the first N jobs by arrival; 0: all. Default: 0 (all).
  long philly_limit = 0;
  // The scheduling policies to simulate and compare on the same jobs, by registered name
  // (sim::PolicyRegistry). Default: {"tiresias"}.
  std::vector<std::string> policies = {"tiresias"};
  // With workload: the folder of the applications' traces (pollux-t4 format). Default:
  // "../shared/data/pollux-t4".
  std::string data = "../shared/data/pollux-t4";
  // Where their step times come from instead (sim/step_time_source.h), at
  // most one: a folder of the same applications' traces measured on other
  // GPUs, or a GPU to move them to (a catalog name or a hardware file) from
  // `from_gpu`, the GPU the traces were measured on.
  std::string step_times;
  // With workload: the GPU to move the traces' step times to by split-transfer; empty: none. REQUIRES:
  // step_times empty and no groups.
  std::string gpu;
  // The GPU the traces of `data` were measured on; with groups, its group runs on their own steps.
  // Default: "t4".
  std::string from_gpu = "t4";
  // With gpu: a folder of the applications' steps measured on it, which
  // correct the move (all their rows, or target_trials of each drawn by seed).
  std::string trials;
  // With trials (or group_trials): how many of each application's measured steps to use, drawn by seed;
  // -1: all. Default: -1 (all).
  int target_trials = -1;
  // With target_trials: which measured steps are drawn. Default: 1.
  uint64_t seed = 1;
  // A workload job whose requested configuration the step times cannot run
  // is left out (and counted) instead of refused: other GPUs' traces time
  // other placements and batches.
  bool skip_unrunnable = false;
  int nodes = 16, gpus_per_node = 4;
  // A cluster of several GPU types (sim::SimOptions::groups): each group's
  // GPU (a catalog name or a hardware file), nodes and GPUs per node; nodes
  // and gpus_per_node are then unused, and gpu, step_times and trials must
  // be empty. A group of
  // from_gpu runs on the traces' own steps, one named in group_step_times on
  // that folder's measured traces, any other on steps moved by split-transfer.
  std::vector<sim::NodeGroup> groups;
  std::vector<std::pair<std::string, std::string>> group_step_times;  // (GPU, folder)
  // (GPU, folder): steps measured on a moved group's GPU that correct its
  // move, all their rows or target_trials of each application drawn by seed.
  std::vector<std::pair<std::string, std::string>> group_trials;
  bool pollux_types = true;  // pollux chooses each job's group (false: blind to GPU types)
  double load_scale = 1.0, restart_delay = 30, interval = 60;
  std::string placement = "pack";  // or spread
  std::vector<double> thresholds = {3250, 7200};
  bool gittins = false, oracle = false;
  std::string time_model;
  double min_gain = 0.5;
  double pollux_p = -1;  // the pollux policy's power-mean exponent, at most 1
  // Each job's result and the GPUs in use over time, per policy, in the JSON
  // (the page's charts); the CLI prints the summary only.
  bool detail = false;
};

// The node groups of `text`, GPU=NODESxGPUS[,...] (e.g. t4=4x4,a100-40gb=2x8:
// 4 nodes of 4 T4s and 2 of 8 A100s), in order. Throws InputError naming
// --cluster for any other form; the GPUs are resolved, and the sizes checked,
// where the jobs are loaded.
std::vector<sim::NodeGroup> parse_cluster(const std::string& text);

// The simulation's settings. Throws InputError (naming the CLI's option)
// for a bad placement or cluster size.
sim::ExperimentOptions experiment_options(const SimulateQuery& q);

// The jobs to simulate and where they come from.
struct JobSource {
  std::unique_ptr<sim::AppSet> apps;  // null for the Philly trace; the first node group's
  std::vector<std::unique_ptr<sim::AppSet>> other_groups_apps;  // the other groups' (SimulateQuery::groups)
  std::vector<sim::JobSpec> jobs;
  std::string source;
  std::string step_times;  // where the step times came from, when not the traces' own
  std::vector<InputError> left_out;  // with skip_unrunnable: the jobs left out, and why
  std::vector<std::string> unmeasured;  // GPUs whose steps were moved with no step measured on them
  // Every application model, on every group: what a fitted estimator fits.
  std::vector<const sim::AppModel*> all_apps() const;
};
// Where the applications' step times come from. Throws InputError (naming
// the option) for both step_times and gpu, an unknown GPU, or a node the
// transfer's table cannot hold.
sim::StepTimeSource step_time_source(const SimulateQuery& q);

// Throws InputError unless exactly one of workload and philly is given, and
// as the readers do.
JobSource load_jobs(const SimulateQuery& q);

struct SimulateOutcome {
  SimulateQuery query;
  std::string source;
  std::string step_times;  // where the step times came from; empty: the traces' own
  size_t jobs_left_out = 0;  // with skip_unrunnable
  std::string note;
  std::vector<sim::SimResult> runs;
};

// Loads the jobs and runs every policy on them in turn (what POST /simulate
// does; the CLI runs them itself to time each on stderr). Throws InputError
// for an unknown policy before any run.
SimulateOutcome simulate(const SimulateQuery& q);

// {"source", "cluster", "load_scale", "restart_delay_s", "interval_s",
//  "placement", "step_times"?, "note"?, "policies": [summary per policy]}; with
// query.detail each policy also has "job_results" and "gpus_in_use".
nlohmann::json to_json(const SimulateOutcome& o);

}  // namespace trainplan::app
