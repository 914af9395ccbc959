// The anchored-curve metric model ("global-batch-anchored"): global-batch's
// curve G(x(B, e)) with its broad smooth S (see metric_global_batch.h), plus a
// correction held on curves at anchor batches,
//   metric(B, e) = G(x(B, e)) + S(B, e) + sum_k w_k(log2 B) D_k(e),
// where the anchors sit every `step` octaves of the global batch B = b*r, w_k
// are hat weights (linear in log2 B between the two nearest anchors, the edge
// anchor's curve beyond them) and each D_k is piecewise linear in data
// epochs, with a knot at every sampled epoch count.
// Why: a run's deviation from one curve in effective epochs (a learning-rate
// drop at its own data epoch, a slow start) is a property of that run's
// batch. A kernel smooth blurs a drop across neighbouring batches and epochs;
// curves held at a few batches keep each drop sharp at its own epoch, and
// between two anchors the surface is their blend.
// The D_k are fitted jointly by penalised least squares on the base's residuals:
// a ridge pulls them to 0 where samples are sparse, and difference penalties
// smooth them along epochs and across anchors. The anchor spacing, the
// grid's offset and the three penalties are chosen together by exact
// leave-one-out (the hat matrix) on absolute error, the scale of MRE.
// The surface is tabulated at fit time (rows in log2 B, columns in ln e) and
// made monotone along each row, so every prediction is monotone in epochs.
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "models/metric_global_batch.h"
#include "models/model.h"
#include "models/tabulated_surface.h"

namespace trainplan::models {

struct AnchoredCurvesParams {
  // The base: G with global-batch's broad smooth only (a kernel-weighted mean
  // with broad bandwidths along epochs), which carries a run's offset from G
  // across epochs where it has no sample; the anchored curves replace the
  // narrow local smooth.
  // G is smoothed (sd 0.08 in ln x): the anchored curves carry each run's
  // sharp features, and a base without PAVA's stray steps leaves them less to
  // undo (5-fold CV, seeds 1-8, docs/lab/MODELS-METRIC.md "Smoothed G").
  GlobalBatchParams base = [] {
    GlobalBatchParams p;
    p.scales = GlobalBatchParams::Scales::kOne;
    p.local = GlobalBatchParams::Local::kMean;
    p.bandwidth_x = p.broad_bandwidth_x;
    p.link_smooth = 0.08;
    return p;
  }();
  std::vector<double> anchor_step = {0.5, 1, 2};  // octaves between anchors (leave-one-out picks one)
  int offsets = 8;  // offsets of the anchor grid tried, evenly spaced over one step
  std::vector<double> ridge = {1e-4, 1e-3, 1e-2, 0.1, 1, 10};  // pull of each D_k value to 0
  std::vector<double> smooth_e = {1e-4, 1e-3, 1e-2, 0.1, 1, 10};  // first differences along epochs
  std::vector<double> smooth_b = {0};  // first differences across anchors (never chosen above 0 on the Pollux traces)
  size_t max_knots = 64;   // epoch knots at most (quantiles of the sampled epochs beyond that)
  size_t min_samples = 8;  // fewer samples with a metric: no correction, G alone
  double grid_batch_step = 0.125;  // octaves between table rows (anchors fall on rows)
  double grid_e_step = 0.02;       // ln e between regular table columns (knots are added)
};

// The base's residuals at the pooled configurations a fit works on (metric_anchored.cpp).
struct AnchoredResiduals;

class AnchoredCurvesModel : public MetricModel {
 public:
  explicit AnchoredCurvesModel(AnchoredCurvesParams p = {}, std::string name = "global-batch-anchored");
  std::string name() const override { return name_; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, double epochs) const override;
  std::string describe() const override;

  // The fitted correction at global batch B after e data epochs (0 before fit
  // or without one); exposed for tests.
  double correction(double global_batch, double epochs) const;

  // The fitted anchors, read-only (for tests; describe() prints them):
  // whether a correction was fitted, and its anchor global batches in
  // increasing order (none without a correction).
  bool has_correction() const { return corrected_; }
  std::vector<double> anchor_batches() const {
    std::vector<double> b;
    if (corrected_)
      for (int k = 0; k < grid_.count; ++k) b.push_back(std::exp2(grid_.a0 + k * grid_.step));
    return b;
  }

 private:
  struct Grid {
    double step = 1, a0 = 0;  // anchors a0 + k*step in log2 B, k = 0..count-1
    int count = 1;
  };
  // Non-zero design entries (column j*count + k for knot j and anchor k, weight) of a point (log2 B, e).
  void design_row(const Grid& g, double lb, double e, std::vector<std::pair<int, double>>& row) const;
  // correction() with a caller's buffer for the design row.
  double correction(double global_batch, double epochs, std::vector<std::pair<int, double>>& drow) const;
  void tabulate(double lb_lo, double lb_hi);
  // Steps of fit(): the anchor grid of one step and offset, and the choice of
  // penalties on it (kept when it beats `best`).
  Grid anchor_grid(double step, int offset, double lb_lo, double lb_hi) const;
  void choose_penalties(const Grid& g, const std::vector<std::vector<std::pair<int, double>>>& design,
                        const AnchoredResiduals& r, double& best);

  AnchoredCurvesParams p_;
  std::string name_;
  GlobalBatchModel base_;
  MetricDirection dir_ = MetricDirection::kMax;
  std::vector<double> knots_;  // epoch knots, sorted
  std::vector<double> coef_;   // D_k at knot j: coef_[j*K + k], K = grid_.count (knot-major, for the band)
  Grid grid_;
  bool corrected_ = false;
  double ridge_ = 0, smooth_e_ = 0, smooth_b_ = 0, loo_mae_ = 0;
  size_t n_ = 0;
  TabulatedSurface surface_;  // rows in log2 B, columns in ln e, monotone along each row
};

}  // namespace trainplan::models
