// The Optimus loss curve as a metric model ("optimus-curve"). Optimus fits one
// curve per job, and a job has one global batch, so this model fits one
// OptimusCurve per group of nearby global batches B = b*r, in training steps
// k = e * N / B (N = dataset size; 1 when unknown, which only rescales k).
// Distinct global batches are pooled in increasing order until a group holds
// `min_points` samples at `min_distinct_k` distinct steps (a curve has three
// parameters). A prediction evaluates the two groups whose (geometric mean)
// batches bracket B and interpolates linearly in log B; outside, the nearest.
// Metrics are turned into losses by MetricLoss (max: ceiling - metric).
#pragma once
#include <string>
#include <vector>

#include "models/metric_loss.h"
#include "models/model.h"
#include "models/optimus_curve.h"

namespace trainplan::models {

struct OptimusMetricParams {
  // Samples a group of global batches must hold to carry its own curve (a configuration's pooled samples
  // count as many as they are); when all the samples together hold fewer, fit throws InputError. Default: 6.
  size_t min_points = 6;
  // Distinct training steps k among a group's samples, required as min_points is. Default: 3.
  size_t min_distinct_k = 3;
  // One curve per group of nearby global batches ("optimus-curve"); false: one shared curve over all
  // batches, in steps ("optimus-curve-shared"). Default: true.
  bool per_batch = true;
  // How each group's OptimusCurve is fitted.
  OptimusCurveParams curve;
};

class OptimusMetricModel : public MetricModel {
 public:
  explicit OptimusMetricModel(OptimusMetricParams p = {}) : p_(p) {}
  std::string name() const override { return p_.per_batch ? "optimus-curve" : "optimus-curve-shared"; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, double epochs) const override;
  std::string describe() const override;

  // The fitted state: one curve per group of nearby global batches (one
  // group for optimus-curve-shared), in order of global batch.
  struct Group {
    double log_batch = 0;  // mean log global batch of the group's samples
    double lo = 0, hi = 0; // global batch range
    OptimusCurve curve;
  };
  const std::vector<Group>& groups() const { return groups_; }

 private:
  double group_metric(const Group& g, double global_batch, double epochs) const;

  OptimusMetricParams p_;
  MetricLoss loss_;
  double n_ = 1;
  std::vector<Group> groups_;
};

}  // namespace trainplan::models
