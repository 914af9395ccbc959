// Planning for runs that stop as soon as the validation metric (evaluated every
// epoch) meets the target. The epoch count is then a budget, not a cost: a run
// pays for the epochs it needs, and the budget only has to be enough.
//
//   feasible cell (b, r): the `safe` model meets the target within the deadline
//                         (its smallest such epoch count: e_safe);
//   budget:               e_safe, or (default) as many epochs as the deadline
//                         allows at the safe model's epoch time (EarlyStopBudget);
//   cost of the cell:     the `point` model's expected cost r * t * e_point,
//                         e_point = min(the point model's epochs to target, budget).
//
// With `safe` the pessimistic side of prediction intervals (PessimisticModel),
// the margin that --confidence buys costs nothing when the run goes as the point
// model expects; it only narrows which cells are feasible. With safe == point
// and the target budget this is equation 11 again. docs/PLANNING.md, "Stopping at the target".
#pragma once
#include <string>
#include <vector>

#include "models/performance_model.h"
#include "plan/problem.h"

namespace trainplan::plan {

// How much budget a feasible cell gets.
//  kTarget:   e_safe, the safe model's epochs to the target.
//  kDeadline: the most epochs the deadline (under the safe model's epoch time)
//             and the epoch cap allow. A run that stops at the target pays only
//             for the epochs it needs, so a longer budget costs nothing when the
//             target comes as predicted, and rescues runs whose metric comes late.
enum class EarlyStopBudget { kTarget, kDeadline };

struct EarlyStopCandidate {
  Candidate budget;    // under `safe`: epochs = e_safe (the budget), its time and cost
  Candidate expected;  // under `point`: epochs = e_point, its time, metric and cost
};

struct EarlyStopPlan {
  EarlyStopCandidate best;
  std::vector<EarlyStopCandidate> alternatives;  // next cheapest (batch, workers) cells, by expected cost
  long evaluations = 0;                          // (batch, workers) cells evaluated
};

// Exhaustive over the cells. Throws InfeasibleError (diagnostics on `safe`)
// when no cell is feasible, InputError when the problem is malformed.
EarlyStopPlan plan_early_stop(const models::PerformanceModel& point, const models::PerformanceModel& safe,
                              const PlanProblem& p, int alternatives = 5,
                              EarlyStopBudget rule = EarlyStopBudget::kDeadline);

// "target" or "deadline"; InputError otherwise.
EarlyStopBudget parse_early_stop_budget(const std::string& s);
const char* to_string(EarlyStopBudget b);

// The epochs a run of `c` (c.epochs the budget) trains under `m` when it stops
// at the target: the first e <= c.epochs whose metric meets the target, or
// c.epochs when none does (or the model has no metric there).
int stopped_epochs(const models::PerformanceModel& m, const PlanProblem& p, const Config& c);

}  // namespace trainplan::plan
