// allreduce-physical: epoch time of synchronous data-parallel training as
//   t_epoch = N / (b r) * t_step(b, r, n)
//   t_step  = (c^g + s^g)^(1/g)            compute and sync, partly overlapped
//   c       = alpha + beta * b             per-worker compute (forward + backward)
//   s       = 0                                          if r = 1
//           = a_intra + k_intra * 2(r-1)/r               if all r workers share one node
//           = a_inter + k_inter * 2(r-1)/r               if they span n > 1 nodes
//             (with a communication profile: a_inter + k_inter * rho(r, n),
//             the cluster's measured shape, structure/comm_profile.h)
// with every parameter >= 0 and g in [1, gamma_max]. 2(r-1)/r is the ring
// all-reduce volume factor (k = model bytes / link bandwidth); g = 1 is no
// overlap (c + s), g -> inf is full overlap (max(c, s)); the form is Pollux's.
// N is the dataset size when known; otherwise it is absorbed into the
// parameters (the fit is then of t_epoch * b * r). Terms that the samples
// cannot identify come from a HardwareSpec prior, and describe() says so.
// The overlap g has a prior at 1 (no overlap), as Pollux's own fit has: on a
// handful of configurations, g and the sync term trade off so freely that
// times moving in their tenth digit had moved held-out predictions by 30%.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "structure/comm_profile.h"
#include "models/model.h"
#include "structure/hardware.h"

namespace trainplan::models {

struct AllreducePhysicalParams {
  structure::HardwareSpec hardware;
  int gpus_per_node = 4;              // packs workers into nodes when a sample's nodes is 0
  std::optional<double> model_bytes;  // gradient bytes all-reduced per step, for priors
  std::optional<long> dataset_size;   // overrides the samples' dataset size
  double gamma_max = 10;
  // The prior on g: the fit adds the residual noise * (g - 1) / gamma_prior_sd
  // to the configurations' relative residuals, as if g - 1 were known to
  // gamma_prior_sd and each configuration's time to `noise`: the samples'
  // median time_spread (at least 1%) where they carry one; else the misfit
  // the fit without the prior leaves (root of its sum of squares over the
  // degrees of freedom; at least 0.1%, so that exact data keep their g);
  // else, with as many parameters as configurations, gamma_prior_noise.
  // Defaults 2 and 0.05 (the demo's trial-to-trial spread on a 2-core host):
  // g = 3 then costs as much as one configuration missed by 5%. Exact data
  // with no degree of freedom to spare take the prior's g, as noisy ones
  // must. sd <= 0: no prior.
  double gamma_prior_sd = 2;
  double gamma_prior_noise = 0.05;
  // The cluster's inter-node cost shape; null: the ring factor 2(r-1)/r.
  std::shared_ptr<const structure::CommProfile> comm_profile;
};

// The fitted step-time parameters, seconds (k_* per unit ring factor).
struct StepTimeTerms {
  double alpha = 0, beta = 0;
  double a_intra = 0, k_intra = 0;
  double a_inter = 0, k_inter = 0;
  double gamma = 1;
};

class AllreducePhysicalModel : public TimeModel {
 public:
  explicit AllreducePhysicalModel(AllreducePhysicalParams p = {}) : p_(std::move(p)) {}
  std::string name() const override { return "allreduce-physical"; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, int nodes) const override;
  std::optional<Interval> predict_interval(double batch, int workers, int nodes, double coverage) const override;
  std::string describe() const override;
  // After fit(): multiplies the compute term at batch b by exp(f(b)), f
  // piecewise linear through (batch, log factor) points sorted by batch and
  // held at the end values outside (empty: no change). For measured
  // per-batch compute anomalies, which sync then partly hides.
  void set_compute_log_correction(std::vector<std::pair<double, double>> points) { compute_corr_ = std::move(points); }

  // Seconds per step (not per epoch), with N absorbed when unknown.
  double step_time(double batch, int workers, int nodes) const;
  const StepTimeTerms& terms() const { return t_; }
  // Notes on terms taken from priors rather than the samples.
  const std::vector<std::string>& notes() const { return notes_; }
  double dataset_size() const { return n_; }

 private:
  AllreducePhysicalParams p_;
  StepTimeTerms t_;
  double n_ = 1;  // dataset size, or 1 when it is absorbed
  bool n_known_ = false;
  std::vector<std::string> notes_;
  std::vector<double> rel_residuals_;  // in-sample (pred - y) / y, sorted
  std::vector<std::pair<double, double>> compute_corr_;
  bool fitted_ = false;
  bool gamma_prior_used_ = false;
};

// Step time under `terms` for `workers` over `nodes` (nodes >= 1); the
// inter-node volume factor is profile->at(workers, nodes) when a profile is given.
// compute_scale multiplies the compute term alpha + beta b.
double step_time_of(const StepTimeTerms& terms, double batch, int workers, int nodes,
                    const structure::CommProfile* profile = nullptr, double compute_scale = 1);

}  // namespace trainplan::models
