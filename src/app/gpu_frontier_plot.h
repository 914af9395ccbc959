// The picture of "which GPU" against the deadline: on each GPU the cheapest
// run that meets the target by each deadline (its cost-time frontier, a
// step), the run chosen there for the deadline asked, and that deadline. With
// a price on every GPU the cost is money, so the lowest step at a deadline is
// the GPU to rent for it; without, GPU-hours (comparable within a GPU only).
#pragma once
#include "app/plan_on_gpus.h"
#include "io/gnuplot.h"

namespace trainplan::app {

// One panel; the time axis is logarithmic (GPUs a few times apart share it).
// Throws InputError (field "--plot") when no GPU has a frontier point.
io::PlotPanel gpu_frontier_panel(const GpuComparison& c, double deadline_s);

}  // namespace trainplan::app
