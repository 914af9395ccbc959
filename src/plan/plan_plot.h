// The picture of a plan: why the chosen configuration is the cheapest one
// that meets the target within the deadline, under the model planned on.
#pragma once
#include <vector>

#include "io/gnuplot.h"
#include "models/performance_model.h"
#include "plan/problem.h"

namespace trainplan::plan {

// Two panels:
//  * cost against workers, one line per batch (up to `curves` batches spread
//    over the candidates, plus the chosen one): each point is the cheapest
//    feasible epoch count of that (batch, workers) cell under `planned`; a gap
//    is a cell where no epoch count meets the target within the deadline; the
//    choice is a star;
//  * the metric against epochs at the chosen (batch, workers): `planned`, and
//    `point` where it differs (the point predictions behind a confidence), with
//    the target, the deadline's epoch limit and the chosen epochs.
std::vector<io::PlotPanel> plan_panels(const models::PerformanceModel& planned, const models::PerformanceModel& point,
                                       const PlanProblem& p, const Candidate& chosen, int curves = 6);

// The cost-time frontier (plan/frontier.h) as a step: the cheapest run's cost
// against the deadline, its points labelled "b x r, e", and the deadline given.
io::PlotPanel frontier_panel(const std::vector<Candidate>& front, double deadline_s);

}  // namespace trainplan::plan
