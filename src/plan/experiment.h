// The pieces of the co-configuration experiment (`trainplan bench coconfig`,
// docs/PLANNING.md): scenarios derived from a ground-truth model, a fitted
// model restricted to the region the truth can judge, and judging a plan.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/performance_model.h"
#include "plan/pessimistic_model.h"
#include "plan/problem.h"

namespace trainplan::plan {

// One (target, deadline) pair. Rule (fixed, never tuned to results), for
// scenario i of n with f = i / (n - 1) (f = 1 when n = 1):
//   lo = worst true metric over the space at 1 epoch, hi = best true metric
//   over the space at the epoch cap; target = lo + q (hi - lo) with
//   q = 0.80 + 0.18 f; fastest = the shortest true time that reaches the
//   target (any cell); deadline = m * fastest with m = 4^(1-f) * 1.25^f.
// So scenario 0 is easy (80% of the way to the best metric, 4x the fastest
// time) and the last is tight (98%, 1.25x).
struct Scenario {
  int index = 0;
  double quantile = 0;       // q
  double deadline_mult = 0;  // m
  double target = 0;
  double deadline_s = 0;
  Candidate fastest;         // the fastest true way to the target
  Candidate optimum;         // the true optimum of equation 11 (exhaustive, linear epoch scan)
};

// Throws InfeasibleError if the truth defines no metric over the space.
std::vector<Scenario> derive_scenarios(const models::PerformanceModel& truth, const PlanProblem& space, int n);

// A fitted model seen only where the truth can judge a configuration (the truth
// has an epoch time and a metric there): nullopt elsewhere. This tells the
// planner which configurations can run, never how they perform.
class DomainMaskedModel : public models::PerformanceModel {
 public:
  DomainMaskedModel(std::shared_ptr<const models::PerformanceModel> fitted,
                    std::shared_ptr<const models::PerformanceModel> truth)
      : fitted_(std::move(fitted)), truth_(std::move(truth)) {}
  std::optional<double> epoch_time(int batch, int workers, int nodes) const override;
  std::optional<double> metric(int batch, int workers, double epochs) const override;
  MetricDirection direction() const override { return fitted_->direction(); }
  std::string name() const override { return fitted_->name(); }

 private:
  std::shared_ptr<const models::PerformanceModel> fitted_, truth_;
};

// The model the methods plan on. `fitted` holds the point predictions (fitted
// on all samples); with `conformal` both parts are wrapped in K-fold conformal
// intervals (models/conformal.h; point predictions unchanged), and with
// confidence in (0, 1) `planned` reads them on their pessimistic side
// (PessimisticModel: upper epoch time, metric bound on the wrong side of the
// target); otherwise `planned` is `fitted`. confidence > 0 needs intervals:
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
  ConfidenceBounds bounds = ConfidenceBounds::kTwoSided;
  // With a confidence: hold the pessimistic side to the samples' own trials
  // (MeasuredBoundsModel, plan/measured_bounds.h).
  bool measured_bounds = true;
  // With `measured_bounds`: also shift the pessimistic side at a measured
  // configuration by the point model's optimistic misfit at its later trials
  // (MeasuredBoundsModel's `point`).
  bool misfit_shift = true;
  // With `conformal`: pin the metric model to each measured run's samples
  // inside the intervals (ConformalParams::pin_runs).
  bool pin_runs = false;
};
PlanningModel fit_planning_model(const std::string& time_model, const std::string& metric_model,
                                 const SampleSet& samples, const PlanningModelOptions& o);
// The side a plan is made on (as fit_planning_model's `planned`): `fitted`
// itself without o.confidence; else its pessimistic side at o.confidence
// (o.probe_batch, o.bounds), held to the trials in `samples` as
// o.measured_bounds and o.misfit_shift say. The fitting options (conformal,
// seed, pin_runs) are not read: `fitted` is already fitted.
std::shared_ptr<const models::PerformanceModel> planned_side(
    std::shared_ptr<const models::FittedPerformanceModel> fitted, const SampleSet& samples,
    const PlanningModelOptions& o);

// A plan's configuration judged by the truth.
struct Judgement {
  bool planned = false;     // the method returned a plan (else `error` says why)
  std::string error;
  Config config;
  bool runnable = false;    // the truth has an epoch time and metric there
  double true_epoch_time_s = 0, true_total_time_s = 0, true_metric = 0, true_cost = 0;
  double predicted_cost = 0;
  bool target_ok = false, deadline_ok = false;
  double regret = 0;        // true_cost / optimal cost - 1
  int true_epochs = 0;      // epochs run: config.epochs, or fewer when the run stops at the target
};

// Judges the plan's best configuration run for exactly its epochs.
Judgement judge(const models::PerformanceModel& truth, const PlanProblem& p, const PlanResult& plan,
                double optimal_cost);
// Judges `budget` (its epochs the budget) run until the true metric meets the
// target (stopped_epochs): cost and time are those of the epochs it ran. The
// true optimum is the same as for fixed epochs (the cheapest run that meets
// the target stops there), so regrets compare.
Judgement judge_early_stop(const models::PerformanceModel& truth, const PlanProblem& p, const Config& budget,
                           double predicted_cost, double optimal_cost);

}  // namespace trainplan::plan
