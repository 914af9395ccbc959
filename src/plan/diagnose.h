// Why a planning problem has no solution: which constraint fails, the best
// metric reachable by the deadline and the shortest time that reaches the
// target (each with its configuration), so the user knows what to relax.
#pragma once
#include <optional>
#include <string>

#include "core/error.h"

#include "models/performance_model.h"
#include "plan/problem.h"

namespace trainplan::plan {

// What diagnose_infeasibility found: the explanation for people and, where
// a deadline or a target fails, the same in figures.
struct Infeasibility {
  std::string report;
  // "deadline": limit the deadline, closest the shortest time that reaches
  // the target (unit "s"), configuration that run. "target": limit the
  // target, closest the best metric predicted within the epoch limit (unit
  // "metric"), configuration its cell at the fewest epochs whose metric is
  // within 0.01% of it. Unset where the model gives no time or no metric,
  // training diverged everywhere, or a configuration meets both and the
  // method missed it ("search").
  std::optional<InfeasibleError::Shortfall> shortfall;
};

// A multi-line report whose first line names the failing constraint
// ("deadline", "target", "model" or "diverged"), or "search" where a
// configuration meets both and a method that is not exhaustive missed it. Scans the whole space: call
// it only once a search has found nothing.
Infeasibility diagnose_infeasibility(const models::PerformanceModel& m, const PlanProblem& p);

// diagnose_infeasibility(m, p).report.
std::string infeasibility_report(const models::PerformanceModel& m, const PlanProblem& p);

// Throws InfeasibleError("<method>: " + the report, with its shortfall).
[[noreturn]] void throw_infeasible(const models::PerformanceModel& m, const PlanProblem& p, const std::string& method);

}  // namespace trainplan::plan
