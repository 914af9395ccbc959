// The discrete-event cluster simulator. Events: arrivals, epoch boundaries
// (where a trace job's statistical efficiency changes), completions, and
// scheduling points. With interval > 0 the policy runs every `interval`
// seconds only (as Pollux's simulator, which rounds to 60 s); with
// interval = 0 it runs at every arrival, completion and policy wake-up.
// Any change of a job's GPUs, placement or batch (including the first
// start and a resume after preemption) costs `restart_delay` seconds during
// which the job holds its GPUs but makes no progress.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster.h"
#include "sim/estimator.h"
#include "sim/job.h"
#include "sim/policy.h"

namespace trainplan::sim {

// The longest restart delay and scheduling interval, in seconds (115 days).
inline constexpr double kLongestSeconds = 1e7;
// The most GPUs a simulated cluster holds (nodes x GPUs per node).
inline constexpr int64_t kMaxClusterGpus = int64_t(1) << 24;

// Throws InputError naming --nodes or --gpus-per-node unless the cluster has
// at least one node and GPU and at most kMaxClusterGpus GPUs (the product in
// 64 bits: two ints' product overflows). The server calls it before taking a slot.
void check_cluster(int nodes, int gpus_per_node);

// One kind of node in a cluster that mixes GPU types.
struct NodeGroup {
  std::string gpu;  // the GPU's name, for reports
  int nodes = 0;
  int gpus_per_node = 0;
};

// Throws InputError naming --cluster unless there are 1 to kMostNodeGroups
// groups, each has at least one node of at least one GPU, and together they
// hold at most kMaxClusterGpus GPUs.
void check_groups(const std::vector<NodeGroup>& groups);

struct SimOptions {
  // Nodes of the cluster, when `groups` is empty. REQUIRES: >= 1, and nodes x gpus_per_node at most
  // kMaxClusterGpus. Default: 16.
  int nodes = 16;
  // GPUs of each node, when `groups` is empty. REQUIRES: >= 1. Default: 4.
  int gpus_per_node = 4;
  // A cluster of several GPU types: these node groups, in the order a blind
  // policy's jobs try them (Decision::group), and nodes and gpus_per_node
  // are ignored. A job runs within one group at a time, at its application's
  // speed there (JobSpec::app_on). Default: empty, one group of nodes x
  // gpus_per_node.
  std::vector<NodeGroup> groups;
  // Seconds. REQUIRES: 0 to kLongestSeconds. Default: 30.
  double restart_delay = 30;
  // Seconds between scheduling rounds; 0: at every event. REQUIRES: 0 or 1
  // to kLongestSeconds. Default: 60.
  double interval = 60;
  // How a job's GPUs are laid on its group's nodes (Cluster::place): pack puts a job that fits on one node on
  // the node with the fewest free GPUs that holds it (best fit); otherwise, and always with spread, its GPUs
  // are taken from the emptiest node first. Default: pack.
  PlacementMode placement = PlacementMode::kPack;
  // Called as each job finishes with (finished jobs, all jobs), for progress
  // output; the caller decides how often to say anything.
  std::function<void(size_t, size_t)> on_progress;
  // Record SimResult::gpus_in_use (off: the benchmarks need none of it).
  bool record_use = false;
};

struct JobResult {
  std::string name;
  std::string app;  // "" for rigid jobs
  double arrival = 0, start = 0, finish = 0;
  double jct = 0;
  double gpu_seconds = 0;
  int restarts = 0;
  int gpus = 0;   // GPUs it finished on
  int group = 0;  // the node group it finished on
  int batch = 0;  // global batch at the end
  std::optional<bool> met_deadline;
};

struct SimResult {
  std::string policy;
  std::vector<JobResult> jobs;  // in submission order
  long events = 0;              // simulator events processed
  long schedules = 0;           // policy invocations
  int total_gpus = 0;
  std::vector<NodeGroup> groups;             // the cluster's node groups (one without SimOptions::groups)
  std::vector<double> gpu_seconds_by_group;  // GPU-seconds the jobs held on each group
  // With SimOptions::record_use: (time, GPUs allocated from then on), one
  // entry per change, in time order.
  std::vector<std::pair<double, int>> gpus_in_use;
};

// Throws InputError (options --restart-delay, --interval) unless both are
// within SimOptions' bounds; simulate() checks them, and the server before
// it takes a slot.
void check_schedule_times(double restart_delay, double interval);

// Runs `jobs` (any order) to completion. Abandoned (core/cancel.h) when the
// caller's scope ends. Throws InputError if a job can never
// run (more GPUs than the cluster's largest node group) and std::logic_error
// if the policy over-allocates, or places a job nowhere with every GPU free.
SimResult simulate(const std::vector<JobSpec>& jobs, Policy& policy, const Estimator& est, const Estimator& truth,
                   const SimOptions& opts);

}  // namespace trainplan::sim
