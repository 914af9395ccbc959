// The goodput-optimal global batch of a job on g GPUs: the batch, among
// log-spaced candidates over the range its application allows, with the
// highest estimated progress per second (throughput x statistical
// efficiency). Shared by the policies that choose batches (coconfig, pollux).
#pragma once
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/policy.h"
#include "sim/rate_table.h"

namespace trainplan::sim {

struct GoodputBatch {
  double rate = 0;  // progress per second; 0 where no batch runs on g GPUs
  int batch = 0;    // global batch; 0 for rigid jobs
};

// The most GPUs a policy gives `j` on a cluster of `total_gpus`: a rigid job's
// own count; a trace job's largest batch at the least local batch per GPU, its
// application as timed on its own group (JobState::group).
int most_gpus(const JobState& j, int total_gpus);
// The same on node group `group` of `group_gpus` GPUs, the job's application as timed there.
int most_gpus_on(const JobState& j, int group, int group_gpus);

// Each job's goodput-optimal batch by GPU count, kept while the job's epoch
// (and so its statistical efficiency) stays the same, as RateTable keeps its
// rates: a policy asks for the same counts at every scheduling point. One
// table serves one estimator (a policy's SchedInput::est).
class GoodputTable {
 public:
  // `j`'s goodput-optimal batch and its rate on g >= 1 GPUs. Rigid jobs: their
  // own rate at their own GPU count, 0 at any other.
  // On the job's own node group (JobState::group).
  GoodputBatch at(const SchedInput& in, const JobState& j, int g) { return at_on(in, j, j.group, g); }
  GoodputBatch at_on(const SchedInput& in, const JobState& j, int group, int g);
  // The batch to run on g GPUs of `group`: at_on()'s, except that a job
  // already running on g GPUs of that group keeps its batch unless the change
  // saves more time than the restart it costs (the simulator restarts a job
  // whose batch changes).
  int batch_to_run(const SchedInput& in, const JobState& j, int g) { return batch_to_run_on(in, j, j.group, g); }
  int batch_to_run_on(const SchedInput& in, const JobState& j, int group, int g);
  // Forgets the jobs no longer in `live` (finished), as RateTable::forget_all_but.
  void forget_all_but(const std::vector<JobState*>& live) {
    rates_.forget_all_but(live);
    forget_jobs_all_but(entries_, live);
  }

 private:
  struct Entry {
    int epoch = -1;
    std::vector<std::vector<std::optional<GoodputBatch>>> by_group;  // [group][gpus]
  };
  RateTable rates_;
  std::unordered_map<int, Entry> entries_;  // by job id
};

}  // namespace trainplan::sim
