// Pictures of a leaderboard: each model's cross-validated predictions against
// the measurements, so that a user sees where a model errs (at which sizes, on
// which side), not only its MRE.
#pragma once
#include <vector>

#include "scoring/report.h"
#include "io/gnuplot.h"

namespace trainplan::scoring {

struct EvaluatePlotOptions {
  int max_models = 6;  // series per panel: the models with the lowest CV MRE for that part
};

// Two panels per data set, in data-set order: epoch time, then the metric.
// Each draws the measured value (x) against the out-of-fold prediction (y) of
// every sample the CV scored (PartScore::cv_points), one series per model, and
// the line y = x. Epoch time is on log-log axes. A part that no model scored
// by CV is an empty place (PlotPanel::blank) when another data set draws
// that part, so that with two columns each data set keeps its own row, and is
// left out otherwise. Series are ranked by CV MRE (ties by name) and capped at
// max_models; the panel's title says when some were left out.
std::vector<io::PlotPanel> evaluate_panels(const std::vector<DatasetScores>& sets, const EvaluatePlotOptions& o = {});

}  // namespace trainplan::scoring
