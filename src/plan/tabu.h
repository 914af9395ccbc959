// Tabu search over (batch, workers), Algorithm 2 of the co-configuration
// paper (Liang et al. 2022; docs/PLANNING.md):
//  1. start from a random feasible (b, r);
//  2. at each of NG steps evaluate the neighbours of the current cell, each
//     with its smallest feasible e (reward = 1 / (r * t_epoch * e), 0 when
//     infeasible), and move to the best neighbour not on the tabu list, even
//     when it is worse than the current cell (that is what lets tabu search
//     leave local optima);
//  3. the tabu list is a FIFO of the last `tenure` visited cells;
//  4. the best reward seen is kept, ties broken by the better metric.
// Neighbours: b moves to the adjacent index in the sorted candidate list and r
// by one worker; both may move at once (the 8 cells around the current one).
// When every neighbour is tabu the search restarts from a random feasible cell.
#pragma once
#include <cstdint>

#include "models/performance_model.h"
#include "plan/objective.h"
#include "plan/problem.h"

namespace trainplan::plan {

struct TabuParams {
  int iterations = 50;    // NG: moves made
  int tenure = 10;        // length of the tabu list
  int start_tries = 200;  // random draws for a feasible start before scanning in random order
  int alternatives = 5;
  uint64_t seed = 1;
  EpochSearch epochs = EpochSearch::kBinary;
};

// Throws InfeasibleError (with diagnostics) when no feasible cell exists.
PlanResult tabu_search(const models::PerformanceModel& m, const PlanProblem& p, const TabuParams& params = {});

}  // namespace trainplan::plan
