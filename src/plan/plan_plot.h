// The picture of a plan: why the chosen configuration is the cheapest one
// that meets the target within the deadline, under the model planned on.
#pragma once
#include <optional>
#include <string>
#include <utility>
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

// Several options' cost-time frontiers in one panel ("which GPU"): each a
// step in its own colour, run on to one right edge, its chosen point as a dot,
// and the deadline where it falls within the time axis (else said in the
// title). Times on a log axis (options a few times apart share it); costs on a
// log axis when `log_cost`, else from 0. Throws InputError (field "--plot")
// when no option has a point.
struct FrontierLine {
  std::string name;
  std::vector<std::pair<double, double>> points;     // (time, cost), fastest first
  std::optional<std::pair<double, double>> chosen;  // the option's plan
};
// `time_unit` ("s", "h") follows the deadline where the panel names it.
io::PlotPanel frontier_lines_panel(const std::vector<FrontierLine>& lines, double deadline, const std::string& title,
                                   const std::string& time_label, const std::string& time_unit,
                                   const std::string& cost_label, bool log_cost);

}  // namespace trainplan::plan
