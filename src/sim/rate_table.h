// Per-job speed estimates cached for one epoch of the job: a policy asks
// for the same (GPUs, batch) many times per decision, and the answer only
// changes when the job's epoch (its statistical efficiency) changes.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/estimator.h"

namespace trainplan::sim {

// Drops the entries of a cache by job id whose job is not in `live` (finished
// ones), once the cache holds more than twice as many jobs as run (amortised
// O(1) a job).
template <typename Entry>
void forget_jobs_all_but(std::unordered_map<int, Entry>& by_job, const std::vector<JobState*>& live) {
  if (by_job.size() <= 2 * live.size() + 64) return;
  std::unordered_set<int> ids;
  for (const JobState* j : live) ids.insert(j->id);
  std::erase_if(by_job, [&](const auto& e) { return !ids.count(e.first); });
}

class RateTable {
 public:
  // Progress per second of `j` at (gpus, batch) on its own group under `est`.
  double rate(const Estimator& est, const JobState& j, int gpus, int batch) {
    return rate_on(est, j, j.group, gpus, batch);
  }
  // The same on node group `group` (below kMostNodeGroups).
  double rate_on(const Estimator& est, const JobState& j, int group, int gpus, int batch) {
    auto& e = entries_[j.id];
    if (e.epoch != j.epoch) {
      e.epoch = j.epoch;
      e.rates.clear();
    }
    // One key: the group in the top 8 bits, GPUs (at most kMaxClusterGpus, 2^24) in the next 25,
    // the batch (a positive int) in the low 31.
    const uint64_t key = (uint64_t(unsigned(group)) << 56) | (uint64_t(unsigned(gpus)) << 31) | unsigned(batch);
    auto it = e.rates.find(key);
    if (it != e.rates.end()) return it->second;
    double r = est.rate_on(j, group, gpus, batch);
    e.rates.emplace(key, r);
    return r;
  }
  void forget(int id) { entries_.erase(id); }
  // Drops the entries of jobs not in `live` (finished ones) once the table
  // holds more than twice as many jobs as run: it then grows with the jobs a
  // decision sees, not with every job of the run (a trace of 100,000 jobs
  // kept them all). Amortised O(1) a job.
  void forget_all_but(const std::vector<JobState*>& live) { forget_jobs_all_but(entries_, live); }

 private:
  struct Entry {
    int epoch = -1;
    std::unordered_map<uint64_t, double> rates;
  };
  std::unordered_map<int, Entry> entries_;
};

}  // namespace trainplan::sim
