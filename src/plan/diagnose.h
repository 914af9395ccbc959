// Why a planning problem has no solution: which constraint fails, the best
// metric reachable by the deadline and the shortest time that reaches the
// target (each with its configuration), so the user knows what to relax.
#pragma once
#include <string>

#include "models/performance_model.h"
#include "plan/problem.h"

namespace trainplan::plan {

// A multi-line explanation; the first line names the failing constraint
// ("deadline", "target" or "model"). Scans the whole space: call it only
// once a search has found nothing.
std::string infeasibility_report(const models::PerformanceModel& m, const PlanProblem& p);

// Throws InfeasibleError("<method>: " + infeasibility_report(m, p)).
[[noreturn]] void throw_infeasible(const models::PerformanceModel& m, const PlanProblem& p, const std::string& method);

}  // namespace trainplan::plan
