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

// The panels for the watch's latest forecast; empty before its first (no
// epoch with a metric yet), when there is nothing to draw. A forecast far
// beyond the epochs run (more than ten times as many) is named in the title
// and left off the axis, which would otherwise squeeze the run into its left
// edge.
std::vector<io::PlotPanel> watch_chart(const LiveWatch& watch);

}  // namespace trainplan::app
