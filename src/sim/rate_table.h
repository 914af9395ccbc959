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
  // Progress per second of `j` at (gpus, batch) under `est`.
  double rate(const Estimator& est, const JobState& j, int gpus, int batch) {
    auto& e = entries_[j.id];
    if (e.epoch != j.epoch) {
      e.epoch = j.epoch;
      e.rates.clear();
    }
    long long key = (static_cast<long long>(gpus) << 32) | static_cast<unsigned>(batch);
    auto it = e.rates.find(key);
    if (it != e.rates.end()) return it->second;
    double r = est.rate(j, gpus, batch);
    e.rates.emplace(key, r);
    return r;
  }
  void forget(int id) { entries_.erase(id); }

 private:
  struct Entry {
    int epoch = -1;
    std::unordered_map<long long, double> rates;
  };
  std::unordered_map<int, Entry> entries_;
};

}  // namespace trainplan::sim
