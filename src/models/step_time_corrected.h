// allreduce-local: allreduce-physical times a smooth correction fitted to its
// log residuals e = log(observed / physical) over distinct (b, r, n):
//   t_epoch = physical(b, r, n) * exp(u(b) + z(n) + v(r, n) + w(b; r, n))
//  * u(b): the part shared by every worker count at a batch (the compute
//    time's measured deviation from alpha + beta b), piecewise linear in b
//    between measured batches, held at the end values outside them;
//  * z(n): for n > 1, the part shared by every placement on n nodes (the
//    inter-node cost's deviation at that node count, which the trace shows is
//    not monotone in n), linear in n between measured node counts, held at
//    the end values outside them; 0 on one node;
//  * v(r, n): the part shared by every batch of one placement, linear in r
//    between measured counts on the same number of nodes, 0 elsewhere; on a
//    node count with one measured worker count, not fitted (z takes it);
//  * w: what is left, per (r, n) series, piecewise linear in b, held outside.
// u, z and v are found by backfitting with shrinkage (each mean gets one pseudo
// observation at 0), so a level seen once moves half way. Outside the sampled
// region the correction fades to the physical model, which carries the shape.
#pragma once
#include <map>
#include <utility>
#include <vector>

#include "models/step_time_physical.h"

namespace trainplan::models {

struct AllreduceLocalParams {
  AllreducePhysicalParams physical;
  bool interaction = true;  // fit w (the per-series remainder) as well as u and v
  bool compute_correction = true;  // move one worker's per-batch deviation into the compute term
};

class AllreduceLocalModel : public TimeModel {
 public:
  explicit AllreduceLocalModel(AllreduceLocalParams p = {}) : p_(p), physical_(p.physical) {}
  std::string name() const override { return "allreduce-local"; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, int nodes) const override;
  std::string describe() const override;
  const AllreducePhysicalModel& physical() const { return physical_; }
  // The log correction applied at a configuration (0 where none is known).
  double correction(double batch, int workers, int nodes) const;

 private:
  using Series = std::vector<std::pair<double, double>>;  // (x, value), sorted by x
  using Key = std::pair<int, int>;                       // (nodes, workers)
  static double at(const Series& s, double x);
  double v_at(int nodes, int workers) const;
  int nodes_of(int workers, int nodes) const;

  AllreduceLocalParams p_;
  AllreducePhysicalModel physical_;
  Series u_;                     // batch -> u
  Series z_;                     // nodes (> 1) -> z
  std::map<Key, double> v_;      // (nodes, workers) -> v
  std::map<Key, Series> w_;      // (nodes, workers) -> batch -> w
};

}  // namespace trainplan::models
