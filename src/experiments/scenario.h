// The pieces of the co-configuration experiment (`trainplan bench coconfig`,
// docs/PLANNING.md): scenarios derived from a ground-truth model, a fitted
// model restricted to the region the truth can judge, and judging a plan.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/performance_model.h"
#include "plan/problem.h"

namespace trainplan::experiments {

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
  plan::Candidate fastest;         // the fastest true way to the target
  plan::Candidate optimum;         // the true optimum of equation 11 (exhaustive, linear epoch scan)
};

// Throws InfeasibleError if the truth defines no metric over the space.
std::vector<Scenario> derive_scenarios(const models::PerformanceModel& truth, const plan::PlanProblem& space, int n);

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
Judgement judge(const models::PerformanceModel& truth, const plan::PlanProblem& p, const plan::PlanResult& plan,
                double optimal_cost);
// Judges `budget` (its epochs the budget) run until the true metric meets the
// target (stopped_epochs): cost and time are those of the epochs it ran. The
// true optimum is the same as for fixed epochs (the cheapest run that meets
// the target stops there), so regrets compare.
Judgement judge_early_stop(const models::PerformanceModel& truth, const plan::PlanProblem& p, const Config& budget,
                           double predicted_cost, double optimal_cost);

}  // namespace trainplan::experiments
