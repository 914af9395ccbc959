// per-batch-extrapolation: the "simple extrapolation" of seed 001
// (docs/MODELS.md): epoch time = (dataset / global batch) x measured time
// per batch.
// The time per batch (step time, t_epoch * b * r / N) is read off the samples:
//  * at a measured (workers, nodes): piecewise linear in the per-worker batch
//    between measured batches, continued along the end segments outside them;
//  * at other worker counts: linear in workers between the two nearest
//    measured counts, and the nearest count's step time beyond them (perfect
//    scaling, as the seed method assumes).
// Nothing is fitted; N is absorbed when the dataset size is unknown.
#pragma once
#include <map>
#include <utility>
#include <vector>

#include "models/model.h"

namespace trainplan::models {

struct PerBatchParams {
  int gpus_per_node = 4;  // nodes for samples (and queries) with nodes = 0
};

class PerBatchExtrapolationModel : public TimeModel {
 public:
  explicit PerBatchExtrapolationModel(PerBatchParams p = {}) : p_(p) {}
  std::string name() const override { return "per-batch-extrapolation"; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, int nodes) const override;
  std::string describe() const override;

  // The fitted state. (per-worker batch, seconds per step), sorted, distinct batches.
  using Series = std::vector<std::pair<double, double>>;
  // The steps read off the samples, per measured (workers, nodes).
  const std::map<std::pair<int, int>, Series>& steps_by_workers_nodes() const { return by_workers_nodes_; }
  // The training-set size N the samples give (1 when they give none: then N
  // is absorbed into the step times).
  double dataset_size() const { return n_; }
  bool dataset_size_known() const { return n_known_; }

 private:
  double step_at(const Series& s, double batch) const;
  double step_for_workers(int workers, double batch) const;

  PerBatchParams p_;
  double n_ = 1;
  bool n_known_ = false;
  std::map<std::pair<int, int>, Series> by_workers_nodes_;  // (workers, nodes)
  std::map<int, Series> by_workers_;                        // all nodes pooled, for other node counts
};

}  // namespace trainplan::models
