#include "app/gpu_frontier_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace trainplan::app {

io::PlotPanel gpu_frontier_panel(const GpuComparison& c, double deadline_s) {
  const bool priced = std::all_of(c.plans.begin(), c.plans.end(), [](const GpuPlan& g) { return g.price_per_gpu_hour > 0; });
  auto cost_of = [&](const GpuPlan& g, const plan::Candidate& run) {
    return run.cost / 3600.0 * (priced ? g.price_per_gpu_hour : 1.0);
  };
  double first = INFINITY, last = 0, top = 0;
  for (const auto& g : c.plans)
    for (const auto& run : g.frontier) {
      first = std::min(first, run.total_time_s), last = std::max(last, run.total_time_s);
      top = std::max(top, cost_of(g, run));
    }
  if (!(last > 0))
    throw InputError("", 0, "--plot", "no GPU has a run that reaches the target within the epochs: nothing to draw");
  // Log axis: the steps extend a quarter decade past the last point, and the
  // deadline is drawn when it falls within that span.
  const double left = first / std::pow(10.0, 0.1), right = last * std::pow(10.0, 0.25);
  const bool deadline_shown = deadline_s >= left && deadline_s <= right;

  io::PlotPanel panel;
  panel.title = priced ? "the cheapest run that meets the target, by deadline, on each GPU (the lowest step is the GPU to rent)"
                       : "the cheapest run that meets the target, by deadline, on each GPU";
  panel.xlabel = "deadline (s)";
  panel.ylabel = priced ? "cost (price x GPU-hours)" : "GPU-hours";
  panel.logx = true;
  panel.key = "below";  // inside, it would hide some GPU's steps
  panel.xrange = {{left, right}};
  panel.yrange = {{0, top * 1.15}};
  const auto& palette = io::plot_palette();
  for (size_t i = 0; i < c.plans.size(); ++i) {
    const auto& g = c.plans[i];
    if (g.frontier.empty()) continue;
    const std::string colour = palette[i % palette.size()];
    io::PlotSeries step{g.gpu + (g.measured ? " (measured)" : " (moved)"), {}, "steps lw 2", colour};
    for (const auto& run : g.frontier) step.points.push_back({run.total_time_s, cost_of(g, run)});
    step.points.push_back({right, cost_of(g, g.frontier.back())});
    panel.series.push_back(std::move(step));
    if (g.outcome) {
      const auto& b = g.outcome->result.best;
      panel.series.push_back({"", {{b.total_time_s, cost_of(g, b)}}, "points pt 7 ps 1.5", colour});
    }
  }
  if (deadline_shown)
    panel.series.push_back({fmt::format("your deadline {:.4g} s (dots: each GPU's plan)", deadline_s),
                            {{deadline_s, 0}, {deadline_s, top * 1.15}},
                            "lines lw 1 dt 3",
                            "#d62728"});
  else
    panel.title += fmt::format("\n(your deadline, {:.4g} s, is off the chart; dots: each GPU's plan)", deadline_s);
  return panel;
}

}  // namespace trainplan::app
