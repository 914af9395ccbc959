// The goodput-optimal global batch of a job on g GPUs: the batch, among
// log-spaced candidates over the range its application allows, with the
// highest estimated progress per second (throughput x statistical
// efficiency). Shared by the policies that choose batches (coconfig, pollux).
#pragma once
#include <vector>

#include "sim/policy.h"
#include "sim/rate_table.h"

namespace trainplan::sim {

struct GoodputBatch {
  double rate = 0;  // progress per second; 0 where no batch runs on g GPUs
  int batch = 0;    // global batch; 0 for rigid jobs
};

// Candidate global batches for g GPUs: from the larger of the initial batch
// and g x the least local batch, by factors of sqrt(2), to the largest batch.
std::vector<int> candidate_batches(const AppModel& app, int g);

// Rigid jobs: their own rate at their own GPU count, 0 at any other.
GoodputBatch goodput_batch(const SchedInput& in, const JobState& j, int g, RateTable& table);

// The batch to run on g GPUs: `best`'s, except that a job already running on g
// GPUs keeps its batch unless the change saves more time than the restart it
// costs (the simulator restarts a job whose batch changes).
int batch_to_run(const SchedInput& in, const JobState& j, int g, const GoodputBatch& best, RateTable& table);

}  // namespace trainplan::sim
