// Ground truth built from a public trace (Pollux format): the epoch time and
// the validation metric a real run would have had at a configuration.
// Interpolation rules (also in docs/FORMATS.md):
//  * step time: for the placement that spreads `workers` GPUs as evenly as
//    possible over `nodes` nodes (digits sorted), piecewise-linear in the
//    per-GPU batch between measured batches. Placements beyond placements.csv
//    (more than 4 nodes or 4 GPUs a node) use scalability.csv: the smallest
//    measured node count >= nodes, linear in replicas between measured counts.
//    Outside the measured batch range of that placement: not feasible.
//  * epoch time = (dataset_size / (batch * workers)) * step time.
//  * metric at (global batch B, data epochs e): each validation curve becomes
//    points (iteration * B / N, best metric so far); the best-so-far makes it
//    monotone in e, as a run that keeps its best checkpoint. Before the first
//    evaluation the metric rises linearly from the worst value in the trace
//    at e = 0; after the last it stays at its last value. Between measured
//    global batches, linear in log2(B), by default at equal data epochs.
//    Outside [min B, max B]: not feasible.
//    With MetricAlignment::kProgress the two curves are blended row by row
//    instead: the trace's rows are equal statistical progress at every batch
//    (AdaScale), so row k of both is the same point of the learning-rate
//    schedule. Both the metric and the iterations of row k are blended (the
//    data epochs of row k at B are the blended iterations x B / N), as
//    Pollux's simulator reads its traces (there linear in B, here in log2 B).
//    A learning-rate drop then appears once between two measured batches,
//    where at equal data epochs it appears as two half-steps.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/sample.h"
#include "io/pollux_trace.h"

namespace trainplan::replay {

// How the metric is interpolated between two measured global batches.
enum class MetricAlignment {
  kDataEpochs,  // at equal data epochs (default)
  kProgress,    // row by row: at equal statistical progress
};

struct OracleOptions {
  MetricAlignment metric_alignment = MetricAlignment::kDataEpochs;
  std::optional<long> dataset_size;           // overrides the size derived from the trace (or the published one)
  std::optional<MetricDirection> direction;   // overrides the known direction
  int gpus_per_node = 4;                      // node size for the default placement
};

class ReplayOracle {
 public:
  ReplayOracle(io::PolluxTrace trace, OracleOptions opts = {});
  static ReplayOracle from_dir(const std::string& dir, OracleOptions opts = {});

  const std::string& name() const { return trace_.name; }
  const io::PolluxTrace& trace() const { return trace_; }
  bool time_only() const { return trace_.time_only(); }
  MetricDirection direction() const { return direction_; }
  long dataset_size() const { return dataset_size_; }
  int epoch_limit() const { return epoch_limit_; }  // 0 if unknown
  // The epoch limit, or `fallback` when unknown.
  int epoch_limit_or(int fallback) const { return epoch_limit_ > 0 ? epoch_limit_ : fallback; }
  int gpus_per_node() const { return gpus_per_node_; }

  // Nodes a job of `workers` GPUs spans when packed: ceil(workers / gpus_per_node).
  int default_nodes(int workers) const;
  // Placement string for `workers` GPUs over `nodes` nodes, as evenly as possible.
  static std::string placement_for(int workers, int nodes);

  // Seconds per step, or nullopt outside the measured region. nodes = 0: packed.
  std::optional<double> step_time(double local_bsz, int workers, int nodes = 0) const;
  // Seconds per step where the trace measured exactly `workers` GPUs on
  // exactly `nodes` nodes (a placement, else a scalability series),
  // interpolated in the batch only; nullopt elsewhere. step_time answers an
  // unmeasured node count from the next larger one, which a measurement of
  // how the sync grows with nodes must not take as this count's.
  std::optional<double> measured_step_time(double local_bsz, int workers, int nodes) const;
  // Seconds per data epoch, or nullopt outside the measured region.
  std::optional<double> epoch_time(double local_bsz, int workers, int nodes = 0) const;
  // The per-GPU batch range measured for one GPU (the trace's batch range).
  std::pair<double, double> local_batch_range() const;

  // Metric at global batch and data epochs, or nullopt (time-only trace, or B
  // outside the measured global batches).
  std::optional<double> metric(double global_batch, double data_epochs) const;
  // Gradient statistics (grad_sqr, grad_var) interpolated like the metric.
  std::optional<std::pair<double, double>> gradient_stats(double global_batch, double data_epochs) const;
  std::pair<double, double> global_batch_range() const;  // {0,0} if time-only

 private:
  struct CurvePoint {
    double epochs, best, grad_sqr, grad_var;
    bool has_grad;
  };
  struct Curve {
    double global_batch;
    std::vector<CurvePoint> points;
  };
  // Batch -> step time rows for one key, sorted by batch.
  using BatchSeries = std::vector<std::pair<double, double>>;

  static std::optional<double> interp_batch(const BatchSeries& s, double b);
  double curve_value(const std::vector<CurvePoint>& p, double e) const;
  std::optional<std::pair<double, double>> curve_grad(const Curve& c, double e) const;
  std::optional<double> scalability_step(double b, int workers, int nodes) const;

  io::PolluxTrace trace_;
  MetricDirection direction_ = MetricDirection::kMax;
  long dataset_size_ = 0;
  int epoch_limit_ = 0;
  int gpus_per_node_ = 4;
  MetricAlignment alignment_ = MetricAlignment::kDataEpochs;
  double worst_metric_ = 0;
  std::map<std::string, BatchSeries> by_placement_;
  std::map<std::pair<int, int>, BatchSeries> by_scale_;  // (nodes, replicas)
  std::vector<Curve> curves_;
};

}  // namespace trainplan::replay
