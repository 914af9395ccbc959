// Pictures of a fit: the model's curves drawn over the samples it was fitted
// on, so that a user sees where it follows the data and where it guesses.
#pragma once
#include <vector>

#include "core/sample.h"
#include "io/gnuplot.h"
#include "models/model.h"

namespace trainplan::scoring {

struct FitPlotOptions {
  int curves = 4;    // configurations (metric) or batches (time) drawn as curves
  int steps = 120;   // points per metric curve
};

// The epochs a metric curve is drawn at: `steps` points from the fewest epochs
// a metric was measured at (a trial's or a curve row's) to 1.1 x the most a
// trial ran (at least 1). Before the first measurement a fitted curve is
// extrapolation the samples say nothing of (an accuracy curve through epochs
// 1 and 5 can fall far below 0 at 0.1). Without a measured metric, (0, 1].
std::vector<double> metric_curve_epochs(const SampleSet& s, int steps);

// Panels for the parts given (either may be null):
//  * metric: for up to `curves` configurations (b, r) spread evenly over the
//    sampled global batches, the model's metric at metric_curve_epochs with
//    that configuration's samples in the same colour;
//    every other sample in grey;
//  * time: for up to `curves` per-worker batches spread evenly over the sampled
//    ones, the model's epoch time on 1 .. the most sampled workers (nodes
//    packed as the samples were), with the samples at that batch; log scale.
std::vector<io::PlotPanel> fit_panels(const SampleSet& s, const models::TimeModel* time,
                                      const models::MetricModel* metric, const FitPlotOptions& o = {});

}  // namespace trainplan::scoring
