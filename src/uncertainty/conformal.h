// Prediction intervals and one-sided bounds for any model, by K-fold
// (cross-validated) conformal prediction on relative residuals.
//
// fit(): the wrapped model is fitted once on all samples (the point
// prediction); then K fresh copies are fitted, each leaving one fold of
// configurations (batch, workers, nodes) out, and every held-out sample gives
// a residual (uncertainty/residuals.h). An interval at coverage c is
// f(x) (1 -/+ q), q the conformal rank of the residuals at c; a one-sided
// bound uses the same rank of one side's signed residuals, so it holds with
// probability >= c on its own side. Folds hold configurations out whole
// because the planner asks about configurations it has not measured. The
// point prediction is the wrapped model's, unchanged.
//
// Time models: each held-out configuration counts once, at its
// epochs-weighted mean epoch time (the point time models are fitted on:
// models/pooled_samples.h). At a configuration
// the samples measured, the in-sample residuals are used instead: the
// prediction is anchored by the measurement there, and the out-of-fold error
// would overstate it (this carries no finite-sample guarantee). There the
// interval is also never narrower than the measurement's own uncertainty:
// a sample's time_spread (a 95% half-width, relative) is rescaled to the
// coverage asked for as a normal half-width would be, and the largest such
// figure at the configuration is the least q used. The lower end is never
// below 0.
//
// Metric models: the calibrators of uncertainty/metric_calibrators.h, composed
// (the configuration rule in Mondrian bins, the run-gap, between and beyond
// rules); the pessimistic end (the lower for a metric to maximise, the upper
// for one to minimise) is held to the best metric measured, so no confidence
// is claimed for a metric no run has reached. Both ends, and every bound, are
// clipped to the metric's range (SampleSet::metric_range(): [0, 1] for an
// accuracy), so no interval promises a value the metric cannot take.
//
// Where (n+1) c > n the largest residual is used, and describe() says the
// interval is too short to guarantee c. Why these rules, and what each
// measured on the Pollux traces: docs/lab/MODELS-METRIC.md.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "models/model.h"
#include "models/registry.h"
#include "uncertainty/conformal_params.h"
#include "uncertainty/metric_calibrators.h"
#include "uncertainty/residuals.h"

namespace trainplan::uncertainty {

class ConformalTimeModel : public models::TimeModel {
 public:
  ConformalTimeModel(TimeFactory make, ConformalParams p = {});
  std::string name() const override { return name_; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, int nodes) const override;
  std::optional<models::Interval> predict_interval(double batch, int workers, int nodes, double coverage) const override;
  std::optional<double> predict_bound(double batch, int workers, int nodes, double coverage,
                                      models::BoundSide side) const override;
  std::string describe() const override;
  const ConformalResiduals& residuals() const { return res_; }
  // In-sample relative residuals, used at measured configurations.
  const ConformalResiduals& in_sample_residuals() const { return res_in_; }
  bool measured(double batch, int workers, int nodes) const;
  // What predict_interval and predict_bound at this point rest on.
  IntervalBasis interval_basis(double batch, int workers, int nodes, double coverage) const;

 private:
  TimeFactory make_;
  ConformalParams p_;
  std::unique_ptr<models::TimeModel> model_;
  std::string name_;
  ConformalResiduals res_, res_in_;
  std::set<std::tuple<double, int, int>> measured_;  // (batch, workers, nodes) of the samples
  // The largest measured time_spread at each measured configuration that has one.
  std::map<std::tuple<double, int, int>, double> spread_;
  // The least relative half-width at a measured configuration: its spread
  // rescaled from 95% two-sided to `coverage` on `sides` sides; 0 without one.
  double measured_floor(double batch, int workers, int nodes, double coverage, int sides) const;
  std::vector<std::string> notes_;
  int folds_used_ = 0;  // min(folds asked for, configurations)
};

class ConformalMetricModel : public models::MetricModel {
 public:
  ConformalMetricModel(MetricFactory make, ConformalParams p = {});
  std::string name() const override { return name_; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, double epochs) const override;
  std::optional<models::Interval> predict_interval(double batch, int workers, double epochs, double coverage) const override;
  std::optional<double> predict_bound(double batch, int workers, double epochs, double coverage,
                                      models::BoundSide side) const override;
  std::string describe() const override;
  // The configuration rule's out-of-fold residuals, pooled.
  const ConformalResiduals& residuals() const { return config_.pooled(); }
  // Its Mondrian bins: upper edges of the bin key (bins - 1 of them) and residuals per bin.
  const std::vector<double>& bin_edges() const { return config_.bins().edges(); }
  const std::vector<ConformalResiduals>& bin_residuals() const { return config_.bins().bins(); }
  // The bin key of a query under the full fit: its slope or its prediction.
  double bin_key(double batch, int workers, double epochs) const;
  static constexpr double kSlopeStep = uncertainty::kSlopeStep;
  // The fitted rules, and why any of them is off (one line each).
  const RunGapRule& run_gap_rule() const { return run_gap_; }
  const BetweenSamplesRule& between_rule() const { return between_; }
  const BeyondRule& beyond_rule() const { return beyond_; }
  const std::vector<std::string>& notes() const { return notes_; }
  // The range the intervals and bounds are clipped to (after fit()).
  const MetricRange& metric_range() const { return range_; }
  // What predict_interval at this point rests on: the residuals of the rule
  // that sets its width (the between-samples rule where it applies, else the
  // configuration rule's bin); the run-gap and beyond rules only widen it.
  IntervalBasis interval_basis(double batch, int workers, double epochs, double coverage) const;

 private:
  // The side of an interval or bound that plans read: lower for a metric to maximise.
  models::BoundSide worse_side() const {
    return direction_ == MetricDirection::kMax ? models::BoundSide::kLower : models::BoundSide::kUpper;
  }
  // `v`, an end on the worse side, held to the best metric measured.
  double held(double v) const;
  std::string hold_text() const;
  std::string range_text() const;
  // The residuals that set the width at a query: the between-samples rule's
  // (its scale in *between_scale) where it applies, else the configuration
  // rule's bin (*between_scale nullopt); the other rules only widen it.
  const ConformalResiduals& width_residuals(double y, double batch, int workers, double epochs,
                                            std::optional<double>* between_scale) const;
  // The relative half-width at a query under `rank`, composed from the rules.
  std::optional<double> rank_at(double y, double batch, int workers, double epochs, const ResidualRank& rank) const;

  MetricFactory make_;
  ConformalParams p_;
  std::unique_ptr<models::MetricModel> model_;
  std::string name_;
  MetricDirection direction_ = MetricDirection::kMax;
  std::optional<double> best_measured_;  // the best metric among the fitted samples
  MetricRange range_;                    // the fitted samples' metric_range()
  ConfigurationRule config_;
  MeasuredRuns runs_;
  RunGapRule run_gap_;
  BetweenSamplesRule between_;
  BeyondRule beyond_;
  std::vector<std::string> notes_;
  int folds_used_ = 0;  // min(folds asked for, configurations with a metric)
};

// Wrap a model given by its factory (called K+1 times per fit, and more for
// the metric rules).
std::unique_ptr<models::TimeModel> with_conformal(TimeFactory make, ConformalParams p = {});
std::unique_ptr<models::MetricModel> with_conformal_metric(MetricFactory make, ConformalParams p = {});
// Wrap a registered model by name, made with `mp`; throws InputError if it lacks that part.
std::unique_ptr<models::TimeModel> conformal_time_model(const std::string& name, ConformalParams p = {},
                                                        const models::ModelParams& mp = {});
std::unique_ptr<models::MetricModel> conformal_metric_model(const std::string& name, ConformalParams p = {},
                                                            const models::ModelParams& mp = {});

}  // namespace trainplan::uncertainty
