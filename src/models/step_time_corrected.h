// allreduce-local: allreduce-physical times a local correction. The physical
// model carries the shape (and so extrapolates); the correction removes the
// measured, repeatable deviation of each (workers, nodes) series from it:
//   t_epoch = physical(b, r, n) * exp(d(b, r, n))
// where d is the mean log ratio observed / physical, piecewise linear in the
// batch between measured batches and held at the end values outside them;
// at an unmeasured worker count, linear in workers between the two nearest
// measured counts on the same number of nodes; elsewhere 0 (physical alone).
#pragma once
#include <map>
#include <utility>
#include <vector>

#include "models/step_time_physical.h"

namespace trainplan::models {

class AllreduceLocalModel : public TimeModel {
 public:
  explicit AllreduceLocalModel(AllreducePhysicalParams p = {}) : physical_(p), gpus_per_node_(p.gpus_per_node) {}
  std::string name() const override { return "allreduce-local"; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, int nodes) const override;
  std::string describe() const override;
  const AllreducePhysicalModel& physical() const { return physical_; }
  // The log correction applied at a configuration (0 where none is known).
  double correction(double batch, int workers, int nodes) const;

 private:
  using Series = std::vector<std::pair<double, double>>;  // (batch, log ratio), sorted
  static double at(const Series& s, double batch);
  AllreducePhysicalModel physical_;
  int gpus_per_node_;
  std::map<std::pair<int, int>, Series> corr_;  // (nodes, workers) -> series
};

}  // namespace trainplan::models
