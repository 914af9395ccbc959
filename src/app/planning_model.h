// The model a plan is made on, built the same way by `plan`, `POST /plan` and
// the planning benchmark: the fitted point model, optionally wrapped in
// conformal intervals, and the side it is read on at a confidence.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/sample.h"
#include "models/performance_model.h"
#include "uncertainty/pessimistic_model.h"

namespace trainplan::app {

// The model the methods plan on. `fitted` holds the point predictions (fitted
// on all samples); with `conformal` both parts are wrapped in K-fold conformal
// intervals (uncertainty/conformal.h; point predictions unchanged), and with
// confidence in (0, 1) `planned` reads them on their pessimistic side
// (PessimisticModel: upper epoch time, widened by the samples'
// times_predicted_log_sd when their times were predicted on another GPU;
// metric bound on the wrong side of the target); otherwise `planned` is
// `fitted`. confidence > 0 needs intervals:
// without `conformal` the parts must give their own, else InputError.
struct PlanningModel {
  std::shared_ptr<const models::FittedPerformanceModel> fitted;
  std::shared_ptr<const models::PerformanceModel> planned;
};
struct PlanningModelOptions {
  bool conformal = false;  // wrap both parts in K-fold conformal intervals
  double confidence = 0;   // in (0, 1): plan on the pessimistic side at this coverage; 0: on the point
  int probe_batch = 0;     // the batch PessimisticModel probes the metric's direction at
  uint64_t seed = 1;       // deals the conformal folds
  uncertainty::ConfidenceBounds bounds = uncertainty::ConfidenceBounds::kTwoSided;
  // Hold the planned side (the pessimistic one with a confidence, else the
  // point model) to the samples' own trials (MeasuredBoundsModel,
  // uncertainty/measured_bounds.h): a measured run that missed the target
  // rules its configuration out at as many epochs or fewer.
  bool measured_bounds = true;
  // With `measured_bounds`: also shift the pessimistic side at a measured
  // configuration by the point model's optimistic misfit at its later trials
  // (MeasuredBoundsModel's `point`).
  bool misfit_shift = true;
  // With `conformal`: pin the metric model to each measured run's samples
  // inside the intervals (ConformalParams::pin_runs).
  bool pin_runs = false;
  // What every model is made with (the cluster's communication profile).
  models::ModelParams model_params;
};
PlanningModel fit_planning_model(const std::string& time_model, const std::string& metric_model,
                                 const SampleSet& samples, const PlanningModelOptions& o);
// The side a plan is made on (as fit_planning_model's `planned`): `fitted`
// itself without o.confidence, else its pessimistic side at o.confidence
// (o.probe_batch, o.bounds); either held to the trials in `samples` as
// o.measured_bounds (and, with a confidence, o.misfit_shift) say. The fitting options (conformal,
// seed, pin_runs) are not read: `fitted` is already fitted.
std::shared_ptr<const models::PerformanceModel> planned_side(
    std::shared_ptr<const models::FittedPerformanceModel> fitted, const SampleSet& samples,
    const PlanningModelOptions& o);

}  // namespace trainplan::app
