#include "experiments/scenario.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "plan/exhaustive.h"
#include "plan/objective.h"
#include "plan/early_stop.h"

namespace trainplan::experiments {

std::vector<Scenario> derive_scenarios(const models::PerformanceModel& truth, const plan::PlanProblem& space, int n) {
  const MetricDirection d = truth.direction();
  std::optional<double> lo, hi;
  for (int b : space.space.batches)
    for (int r = 1; r <= space.space.max_workers; ++r) {
      if (!truth.epoch_time(b, r, plan::nodes_for(r, space.space.workers_per_node))) continue;
      auto first = truth.metric(b, r, 1);
      auto last = truth.metric(b, r, space.space.max_epochs);
      if (first && (!lo || metric_better(*lo, *first, d))) lo = first;
      if (last && (!hi || metric_better(*last, *hi, d))) hi = last;
    }
  if (!lo || !hi) throw InfeasibleError("the ground truth defines no metric over the candidate space");
  std::vector<Scenario> out;
  for (int i = 0; i < n; ++i) {
    Scenario s;
    s.index = i;
    double f = n > 1 ? double(i) / (n - 1) : 1.0;
    s.quantile = 0.80 + 0.18 * f;
    s.deadline_mult = std::exp((1 - f) * std::log(4.0) + f * std::log(1.25));
    s.target = *lo + s.quantile * (*hi - *lo);
    plan::PlanProblem p = space;
    p.target = s.target;
    p.deadline_s = std::numeric_limits<double>::infinity();
    std::optional<plan::Candidate> fastest;
    for (int b : p.space.batches)
      for (int r = 1; r <= p.space.max_workers; ++r)
        if (auto c = plan::evaluate_cell(truth, p, b, r, plan::EpochSearch::kLinear))
          if (!fastest || c->total_time_s < fastest->total_time_s) fastest = c;
    if (!fastest) throw InfeasibleError("the ground truth cannot reach a derived target (non-monotone metric?)");
    s.fastest = *fastest;
    s.deadline_s = s.deadline_mult * fastest->total_time_s;
    p.deadline_s = s.deadline_s;
    plan::ExhaustiveParams ep;
    ep.alternatives = 0;
    ep.epochs = plan::EpochSearch::kLinear;
    s.optimum = plan::exhaustive_search(truth, p, ep).best;
    out.push_back(s);
  }
  return out;
}

std::optional<double> DomainMaskedModel::epoch_time(int batch, int workers, int nodes) const {
  if (!truth_->epoch_time(batch, workers, nodes) || !truth_->metric(batch, workers, 1)) return std::nullopt;
  return fitted_->epoch_time(batch, workers, nodes);
}

std::optional<double> DomainMaskedModel::metric(int batch, int workers, double epochs) const {
  if (!truth_->metric(batch, workers, epochs)) return std::nullopt;
  return fitted_->metric(batch, workers, epochs);
}

namespace {

// The run of `c` judged by the truth: for c.epochs epochs, or (stop_at_target)
// until the true metric first meets the target.
Judgement judge_run(const models::PerformanceModel& truth, const plan::PlanProblem& p, const Config& c,
                    double predicted_cost, double optimal_cost, bool stop_at_target) {
  Judgement j;
  j.planned = true;
  j.config = c;
  j.predicted_cost = predicted_cost;
  auto t = truth.epoch_time(c.batch, c.workers, plan::nodes_for(c.workers, p.space.workers_per_node));
  auto m = truth.metric(c.batch, c.workers, c.epochs);
  j.runnable = t && m;
  if (!j.runnable) return j;
  j.true_epochs = stop_at_target ? plan::stopped_epochs(truth, p, c) : c.epochs;
  j.true_epoch_time_s = *t;
  j.true_total_time_s = j.true_epochs * *t;
  j.true_metric = j.true_epochs == c.epochs ? *m : truth.metric(c.batch, c.workers, j.true_epochs).value_or(*m);
  j.true_cost = c.workers * j.true_total_time_s;
  j.target_ok = meets(j.true_metric, p.target, truth.direction());
  j.deadline_ok = j.true_total_time_s <= p.deadline_s * (1 + 1e-12);
  j.regret = j.true_cost / optimal_cost - 1.0;
  return j;
}

}  // namespace

Judgement judge(const models::PerformanceModel& truth, const plan::PlanProblem& p, const plan::PlanResult& plan,
                double optimal_cost) {
  return judge_run(truth, p, plan.best.config, plan.best.cost, optimal_cost, false);
}

Judgement judge_early_stop(const models::PerformanceModel& truth, const plan::PlanProblem& p, const Config& budget,
                           double predicted_cost, double optimal_cost) {
  return judge_run(truth, p, budget, predicted_cost, optimal_cost, true);
}

}  // namespace trainplan::experiments
