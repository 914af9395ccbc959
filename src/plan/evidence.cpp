#include "plan/evidence.h"

#include <algorithm>
#include <cmath>

namespace trainplan::plan {

std::vector<NearbyTrial> nearest_trials(const SampleSet& samples, double global_batch, double epochs, double target,
                                        size_t k) {
  std::vector<NearbyTrial> all;
  for (const auto& s : samples.samples) {
    if (!s.metric || s.global_batch() <= 0 || s.epochs <= 0) continue;
    NearbyTrial t;
    t.sample = s;
    t.batch_octaves = std::log2(s.global_batch() / global_batch);
    t.epoch_octaves = std::log2(s.epochs / epochs);
    t.distance = std::hypot(t.batch_octaves, t.epoch_octaves);
    t.meets_target = samples.meets(*s.metric, target);
    all.push_back(std::move(t));
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.distance < b.distance; });
  if (all.size() > k) all.resize(k);
  return all;
}

void add_model_metric(std::vector<NearbyTrial>& trials, const models::PerformanceModel& model) {
  for (auto& t : trials)
    t.model_metric = model.metric(static_cast<int>(std::lround(t.sample.batch)), t.sample.workers, t.sample.epochs);
}

}  // namespace trainplan::plan
