// The chart `trainplan watch --plot` redraws as a run goes on. Left: the
// run's metric by epoch, the fit carried forward to the forecast, the target,
// and the forecast epoch with its interval (or the epoch the target was met).
// Right, when every epoch came with its time: the elapsed time by epoch,
// carried to the predicted finish with its interval, and the deadline.
#pragma once
#include <vector>

#include "app/live_watch.h"
#include "io/gnuplot.h"

namespace trainplan::app {

// The panels for the watch's latest forecast, or for `final` when given (the
// update that ends the run: `done`, or `ended` for a job's output closed,
// whose `reached: false` says the target was not met and no forecast holds);
// empty before the first epoch with a metric, when there is nothing to draw.
// A forecast past the axis's end (ten times the last epoch, at least ten
// epochs past it) is named in the title and left off the axis, which would
// otherwise squeeze the run into its left edge.
std::vector<io::PlotPanel> watch_chart(const LiveWatch& watch, const nlohmann::json* final = nullptr);

}  // namespace trainplan::app
