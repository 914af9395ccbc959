// Per-job speed estimates cached for one epoch of the job: a policy asks
// for the same (GPUs, batch) many times per decision, and the answer only
// changes when the job's epoch (its statistical efficiency) changes.
#pragma once
#include <unordered_map>
#include <vector>

#include "sim/estimator.h"

namespace trainplan::sim {

class RateTable {
 public:
  // Progress per second of `j` at (gpus, batch) on its own group under `est`.
  double rate(const Estimator& est, const JobState& j, int gpus, int batch) {
    return rate_on(est, j, j.group, gpus, batch);
  }
  // The same on node group `group`.
  double rate_on(const Estimator& est, const JobState& j, int group, int gpus, int batch) {
    auto& e = entries_[j.id];
    if (e.epoch != j.epoch) {
      e.epoch = j.epoch;
      e.rates.clear();
    }
    if (size_t(group) >= e.rates.size()) e.rates.resize(size_t(group) + 1);
    auto& rates = e.rates[size_t(group)];
    long long key = (static_cast<long long>(gpus) << 32) | static_cast<unsigned>(batch);
    auto it = rates.find(key);
    if (it != rates.end()) return it->second;
    double r = est.rate_on(j, group, gpus, batch);
    rates.emplace(key, r);
    return r;
  }
  void forget(int id) { entries_.erase(id); }

 private:
  struct Entry {
    int epoch = -1;
    std::vector<std::unordered_map<long long, double>> rates;  // by node group
  };
  std::unordered_map<int, Entry> entries_;
};

}  // namespace trainplan::sim
