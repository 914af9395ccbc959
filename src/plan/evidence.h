// The profiled trials nearest a planned run: what the plan rests on. A choice
// far from every trial, or next to trials that missed the target, stands on
// the model's interpolation alone (the out-of-fold error is largest at the
// edges of the sampled region, docs/PLANNING.md), and a user can see it.
#pragma once
#include <optional>
#include <vector>

#include "core/sample.h"
#include "models/performance_model.h"

namespace trainplan::plan {

struct NearbyTrial {
  Sample sample;
  double batch_octaves = 0;  // log2(trial's global batch / the run's)
  double epoch_octaves = 0;  // log2(trial's epochs / the run's)
  double distance = 0;       // hypot of the two
  bool meets_target = false;
  // The point model's metric at the trial's (batch, workers, epochs), filled
  // by the caller (add_model_metric): a model that is more optimistic than a
  // trial beside the choice is likely as optimistic about the choice.
  std::optional<double> model_metric;
};

// The `k` samples with a metric nearest (global_batch, epochs) in octaves of
// global batch and of epochs, nearest first (ties: the order in `samples`).
// `meets_target` compares the sample's metric with `target` in the samples'
// direction. Empty when no sample carries a metric.
std::vector<NearbyTrial> nearest_trials(const SampleSet& samples, double global_batch, double epochs, double target,
                                        size_t k);

// Sets each trial's model_metric from `model` (nullopt where it has none).
void add_model_metric(std::vector<NearbyTrial>& trials, const models::PerformanceModel& model);

}  // namespace trainplan::plan
