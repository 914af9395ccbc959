// Scheduling policies: one interface, registered by name with a static
// PolicyRegistrar (a new policy is one file). At every scheduling point the
// simulator hands the policy the active jobs and asks for each job's GPU
// count and global batch; jobs left out wait (or are preempted).
#pragma once
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/estimator.h"
#include "sim/job.h"

namespace trainplan::sim {

struct Decision {
  int job = 0;    // JobState::id
  int gpus = 0;   // > 0
  int batch = 0;  // global batch (ignored for rigid jobs)
  // Node group (SchedInput::groups) the GPUs come from; -1: the simulator
  // chooses, as for a policy blind to GPU types: the job's own group if its
  // GPUs are free there, else the first group, in the cluster's order, with
  // room for them where the job runs at all. A job placed nowhere waits (an
  // error when every GPU is free). A policy names a group for every job or
  // for none.
  int group = -1;
};

// One node group of a cluster as a policy sees it.
struct GroupView {
  int total_gpus = 0;
  int gpus_per_node = 0;
};

struct SchedInput {
  double now = 0;
  int total_gpus = 0;     // over every node group
  int gpus_per_node = 0;  // the first group's
  int largest_group_gpus = 0;  // the most GPUs one job can hold: its group's
  std::span<const GroupView> groups;  // one per node group: one unless the cluster mixes GPU types
  double restart_delay = 0;
  const std::vector<JobState*>* jobs = nullptr;  // arrived and unfinished, by arrival
  const Estimator* est = nullptr;                // what the scheduler believes
  const Estimator* truth = nullptr;              // ground truth (srtf's oracle)
};

// The most GPUs one job can hold: its node group's (all of them unless the
// cluster mixes GPU types).
inline int most_gpus_per_job(const SchedInput& in) {
  return in.largest_group_gpus > 0 ? in.largest_group_gpus : in.total_gpus;
}

// Options every policy may read; each documents the ones it uses.
// Throws InputError (field "--pollux-p") unless -10 <= p <= 1: above 1 the mean
// would reward piling GPUs on the fastest-scaling job, and NaN decides nothing.
void check_pollux_p(double p);
// Throws InputError (field "--min-gain") unless 0 <= g <= 1: a share of the
// goodput per GPU (1: a further GPU must add as much as each gives now).
void check_coconfig_min_gain(double g);

struct PolicyOptions {
  std::vector<double> tiresias_thresholds{3250, 7200};  // attained GPU-seconds between queues
  std::vector<double> gittins_sizes;  // job sizes (GPU-s) of a known distribution: enables Gittins
  double coconfig_min_gain = 0.5;  // coconfig: least goodput a further GPU must add, as a share of the per-GPU goodput
  double pollux_p = -1;            // pollux: the power mean's exponent over the jobs' speedups (Pollux's fairness knob)
  double pollux_restart_penalty = 0.1;  // pollux: share of its speedup a job whose allocation changes gives up
  // pollux on several node groups: choose each job's group as well as its GPU
  // count (true, as Sia does), or decide GPU counts alone and leave the group
  // to the simulator (false, Pollux as published, blind to GPU types).
  bool pollux_types = true;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // Decisions in placement order (earlier ones are placed first).
  virtual std::vector<Decision> schedule(const SchedInput& in) = 0;
  // Event-driven mode: the next time the policy wants to run even if no job
  // arrives or ends (e.g. a queue demotion); +inf for none.
  virtual double next_wakeup(const SchedInput&) { return std::numeric_limits<double>::infinity(); }
  // Whether the policy decides with estimated speeds (SchedInput::est), which
  // a simulation may give as fitted models; the others see only the jobs' requests.
  virtual bool uses_estimates() const { return false; }
};

using PolicyFactory = std::function<std::unique_ptr<Policy>(const PolicyOptions&)>;

struct PolicyEntry {
  std::string name;
  std::string summary;
  PolicyFactory make;
};

class PolicyRegistry {
 public:
  static PolicyRegistry& instance();
  void add(PolicyEntry e);
  // Throws InputError naming the known policies.
  std::unique_ptr<Policy> make(const std::string& name, const PolicyOptions& opts) const;
  std::vector<const PolicyEntry*> all() const;  // sorted by name
  std::vector<std::string> names() const;

 private:
  std::vector<PolicyEntry> entries_;
};

struct PolicyRegistrar {
  PolicyRegistrar(const std::string& name, const std::string& summary, PolicyFactory make) {
    PolicyRegistry::instance().add({name, summary, std::move(make)});
  }
};

}  // namespace trainplan::sim
