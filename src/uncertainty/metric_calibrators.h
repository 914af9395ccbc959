// The rules that calibrate a metric model's conformal intervals. Each is fitted
// on residuals of its own held-out samples and says, at a query, how wide the
// relative half-width must be; ConformalMetricModel (conformal.h) composes
// them: between two sampled epochs of a measured run the between rule alone,
// elsewhere the configuration rule widened by the run-gap rule on a measured
// run and by the beyond rule past every sampled epoch. Why each rule exists,
// and what each measured, is in docs/lab/MODELS-METRIC.md.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/sample.h"
#include "models/model.h"
#include "uncertainty/conformal_params.h"
#include "uncertainty/residuals.h"

namespace trainplan::uncertainty {

// Epochs x and / this step for the slope key.
inline constexpr double kSlopeStep = 1.15;

// The Mondrian bin key of a query under model m, whose prediction there is y:
// the relative slope in epochs |m(1.15 e) - m(e / 1.15)| / |y| (kSlope) or y
// itself (kPredicted).
double metric_bin_key(const models::MetricModel& m, double y, double batch, int workers, double epochs,
                      ConformalParams::Taxonomy taxonomy);

// Configuration rule: whole configurations held out in K folds; the
// out-of-fold residuals, pooled and in Mondrian bins by the bin key under the
// fold's model. A metric's error is not proportional to its size: it is large
// where the curve is steep and small near the plateau, where targets lie.
class ConfigurationRule {
 public:
  void fit(const MetricFactory& make, const SampleSet& with, const ConformalParams& p,
           std::vector<std::string>& notes);
  // The bin of `key`; the pooled residuals when there are no bins.
  const ConformalResiduals& at(double key) const { return bins_.empty() ? pooled_ : bins_.at(key); }
  const ConformalResiduals& pooled() const { return pooled_; }
  const BinnedResiduals& bins() const { return bins_; }
  std::string describe() const;

 private:
  ConformalParams p_;
  ConformalResiduals pooled_;
  BinnedResiduals bins_;
};

// The sorted sampled epochs of each (batch, workers) run.
class MeasuredRuns {
 public:
  void clear() { epochs_.clear(); }
  std::vector<double>& of(double batch, int workers) { return epochs_[{batch, workers}]; }
  // The sampled epochs of a run with >= 2 samples; nullptr elsewhere.
  const std::vector<double>* measured(double batch, int workers) const;
  size_t size() const { return epochs_.size(); }
  // |ln(epochs / e)| to the nearest e of `sampled`.
  static double nearest_gap(const std::vector<double>& sampled, double epochs);

 private:
  std::map<std::pair<double, int>, std::vector<double>> epochs_;
};

// A held-out sample of a measured run, predicted by a model that kept the
// rest of its run: its residual, the epoch gap to the nearest kept sample,
// and, when kept samples lay on both sides (an interpolation), the bin key.
struct WithinRunResidual {
  double gap = 0, residual = 0;
  std::optional<double> slope;
};

// Deals each run's samples into p.run_folds folds (shuffled with p.seed; a
// run with one sample stays in every training set) and predicts each fold
// from the rest. Fills `runs`. Nothing when p.run_folds < 2.
std::vector<WithinRunResidual> within_run_residuals(const MetricFactory& make, const SampleSet& with,
                                                    const ConformalParams& p, MeasuredRuns& runs,
                                                    std::vector<std::string>& notes);

// Run-gap rule: at a measured run, a query is an epoch of that run that was
// not sampled, an error the configuration folds never see; the within-run
// residuals in equal-count bins by gap. Needs p.min_per_bin residuals.
class RunGapRule {
 public:
  void fit(const std::vector<WithinRunResidual>& r, const ConformalParams& p, size_t runs,
           std::vector<std::string>& notes);
  // The gap bin of a query on a measured run; nullptr elsewhere.
  const ConformalResiduals* at(const MeasuredRuns& runs, double batch, int workers, double epochs) const;
  bool active() const { return !bins_.empty(); }
  const BinnedResiduals& bins() const { return bins_; }
  std::string describe() const;

 private:
  ConformalParams p_;
  size_t runs_ = 0;
  BinnedResiduals bins_;
};

// Between rule: strictly between the first and last sampled epochs of a
// measured run, the interpolating residuals, each divided by its scale
// (gap + between_gap_floor) * (slope + s0), s0 their median slope; a query's
// half-width is their rank times its own scale (normalised conformal
// prediction). Needs p.between_rule, p.min_per_bin residuals and s0 > 0.
class BetweenSamplesRule {
 public:
  void fit(const std::vector<WithinRunResidual>& r, const ConformalParams& p, std::vector<std::string>& notes);
  // The scale of a query strictly inside a measured run under model m (its
  // prediction y); nullopt elsewhere or without the rule.
  std::optional<double> scale(const MeasuredRuns& runs, const models::MetricModel& m, double y, double batch,
                              int workers, double epochs) const;
  const ConformalResiduals& scaled() const { return scaled_; }
  bool active() const { return scaled_.size() > 0; }
  double slope_floor() const { return slope_floor_; }  // s0
  std::string describe() const;

 private:
  ConformalParams p_;
  ConformalResiduals scaled_;
  double slope_floor_ = 0;
};

// Beyond rule: past the last epoch sampled on any run the model only
// extrapolates. The model is fitted on the samples up to the epoch count below
// which 1 - beyond_holdout of them lie and predicts the rest; each forward
// residual is divided by ln(e / cut) + beyond_gap_floor, and a query's
// half-width is their rank times its own ln(e / last sampled) + floor.
class BeyondRule {
 public:
  void fit(const MetricFactory& make, const SampleSet& with, const ConformalParams& p,
           std::vector<std::string>& notes);
  // The half-width at `epochs` past the last sampled epoch; nullopt elsewhere.
  std::optional<double> rank(double epochs, const ResidualRank& rank) const;
  bool active() const { return scaled_.size() > 0; }
  const ConformalResiduals& scaled() const { return scaled_; }
  double last_sampled_epoch() const { return last_sampled_epoch_; }
  std::string describe() const;

  // The forward check behind the rule, made whenever some samples lie past
  // the cut (even too few for the rule): the model fitted on the samples up
  // to `cut` epochs, scored on the `samples` past it, up to `last` epochs.
  // It checked extrapolation by a factor last / cut; how far past the last
  // sampled epoch a prediction is backed by a check is that factor again
  // (trusted_through()).
  struct ForwardCheck {
    double cut = 0, last = 0;
    int samples = 0;
    double max_abs_residual = 0;     // relative, |y - f| / |f|
    double median_abs_residual = 0;  // relative
  };
  const std::optional<ForwardCheck>& forward_check() const { return check_; }
  // The epochs up to which predictions are backed by a check: the last
  // sampled epoch times the factor the forward check covered; the last
  // sampled epoch itself without a check.
  double trusted_through() const;

 private:
  ConformalParams p_;
  ConformalResiduals scaled_;
  double last_sampled_epoch_ = 0;
  std::optional<ForwardCheck> check_;
};

}  // namespace trainplan::uncertainty
