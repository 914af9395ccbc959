// The cost-time trade-off of one target: for every deadline, the cheapest run
// that meets the target by then.
//
// Within one (batch, workers) cell the smallest epoch count that meets the
// target is both the fastest and the cheapest run of the cell, so the
// cheapest run for a deadline D is the cheapest of those cell minima that
// finish by D. The frontier lists the cell minima where that answer changes:
// sorted by time, each strictly cheaper than every faster one.
#pragma once
#include <string>
#include <vector>

#include "models/performance_model.h"
#include "plan/objective.h"
#include "plan/problem.h"

namespace trainplan::plan {

// The Pareto frontier of (total time, cost) over every cell of `p.space`, with
// `p.deadline_s` ignored: fastest first, each point strictly cheaper than the
// one before. Empty when no cell reaches the target within max_epochs.
// The cheapest run for a deadline D costs as much as the last point with
// total_time_s <= D (cost ties may resolve to another cell of the same cost).
std::vector<Candidate> cost_time_frontier(const models::PerformanceModel& m, const PlanProblem& p,
                                          EpochSearch search = EpochSearch::kBinary);

// `seconds` rounded up to `digits` significant digits: a deadline printed so,
// and given back, still admits the run it was printed for (343.202 s is 343.3).
double ceil_significant(double seconds, int digits = 4);

// The frontier as a text table, one row per point: the deadline from which it
// is the cheapest run, its configuration, metric and cost, and its cost
// against the point in effect at `deadline_s` (marked "<- deadline").
std::string frontier_table(const std::vector<Candidate>& front, double deadline_s);

}  // namespace trainplan::plan
