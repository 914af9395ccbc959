// Exhaustive search: every (batch, workers) cell, each with its smallest
// feasible epoch count. Exact under the EpochSearch assumption it is given.
#pragma once
#include "models/performance_model.h"
#include "plan/objective.h"
#include "plan/problem.h"

namespace trainplan::plan {

struct ExhaustiveParams {
  int alternatives = 5;                       // next-best (batch, workers) cells to return
  EpochSearch epochs = EpochSearch::kBinary;  // kLinear for an assumption-free optimum
};

// The optimum and alternatives. Throws InfeasibleError (with diagnostics) when
// nothing is feasible, InputError when the problem is malformed.
PlanResult exhaustive_search(const models::PerformanceModel& m, const PlanProblem& p, const ExhaustiveParams& params = {});

}  // namespace trainplan::plan
