#include "plan/early_stop.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/cancel.h"
#include "core/error.h"
#include "plan/diagnose.h"
#include "plan/objective.h"
#include "plan/planner.h"

namespace trainplan::plan {

EarlyStopPlan plan_early_stop(const models::PerformanceModel& point, const models::PerformanceModel& safe,
                              const PlanProblem& p, int alternatives, EarlyStopBudget rule) {
  validate(p);
  EarlyStopPlan out;
  std::vector<EarlyStopCandidate> cells;
  for (int b : p.space.batches)
    for (int r = 1; r <= p.space.max_workers; ++r) {
      ++out.evaluations;
      auto budget = evaluate_cell(safe, p, b, r);
      if (!budget) continue;
      if (rule == EarlyStopBudget::kDeadline) {
        Config longest = budget->config;
        longest.epochs = std::max(longest.epochs, max_epochs_within(p, budget->epoch_time_s));
        if (auto b2 = evaluate_config(safe, p, longest)) budget = b2;
      }
      // The point model's epochs to target, searched within the budget only:
      // the run stops at the budget whatever happens.
      PlanProblem within = p;
      within.space.max_epochs = budget->config.epochs;
      within.deadline_s = std::numeric_limits<double>::max();
      auto expected = evaluate_cell(point, within, b, r);
      if (!expected) {
        // The point model does not reach the target within the budget (a
        // one-sided bound can lie above the prediction): the run stops at the budget.
        expected = evaluate_config(point, p, budget->config);
        if (!expected) continue;
      }
      cells.push_back({*budget, *expected});
    }
  if (cells.empty()) throw_infeasible(safe, p, "coconfig-early-stop");
  const MetricDirection d = point.direction();
  size_t keep = std::min(cells.size(), static_cast<size_t>(std::max(0, alternatives)) + 1);
  std::partial_sort(cells.begin(), cells.begin() + keep, cells.end(),
                    [&](const EarlyStopCandidate& a, const EarlyStopCandidate& b) {
                      return preferred(a.expected, b.expected, d);
                    });
  out.best = cells.front();
  out.alternatives.assign(cells.begin() + 1, cells.begin() + keep);
  return out;
}

EarlyStopBudget parse_early_stop_budget(const std::string& s) {
  if (s == "target") return EarlyStopBudget::kTarget;
  if (s == "deadline") return EarlyStopBudget::kDeadline;
  throw InputError(fmt::format("unknown early-stop budget '{}': expected target or deadline", s));
}

const char* to_string(EarlyStopBudget b) { return b == EarlyStopBudget::kTarget ? "target" : "deadline"; }

int stopped_epochs(const models::PerformanceModel& m, const PlanProblem& p, const Config& c) {
  for (int e = 1; e <= c.epochs; ++e) {
    if (e % 1024 == 0) check_cancelled();
    if (auto v = m.metric(c.batch, c.workers, e); v && meets(*v, p.target, m.direction())) return e;
  }
  return c.epochs;
}

namespace {

// Stopping at the target as a Planner: feasibility and budgets on the model
// it is given (the planned side), expected cost on opts.point_model.
class EarlyStopPlanner : public Planner {
 public:
  explicit EarlyStopPlanner(const PlannerOptions& o) : o_(o) {
    if (!o_.point_model) throw InputError("coconfig-early-stop needs the point model (PlannerOptions::point_model)");
  }
  std::string name() const override { return "coconfig-early-stop"; }
  PlanResult plan(const models::PerformanceModel& safe, const PlanProblem& p) const override {
    const EarlyStopPlan es = plan_early_stop(*o_.point_model, safe, p, o_.alternatives, o_.early_stop_budget);
    PlanResult r;
    r.method = name();
    r.evaluations = es.evaluations;
    r.best = es.best.budget;
    r.expected.push_back(es.best.expected);
    for (const auto& c : es.alternatives) r.alternatives.push_back(c.budget), r.expected.push_back(c.expected);
    return r;
  }

 private:
  PlannerOptions o_;
};

PlannerRegistrar reg(60, "coconfig-early-stop", [](const PlannerOptions& o) { return std::make_unique<EarlyStopPlanner>(o); },
                     PlannerListing::kUnlisted);

}  // namespace

}  // namespace trainplan::plan
