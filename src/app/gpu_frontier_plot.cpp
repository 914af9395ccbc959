#include "app/gpu_frontier_plot.h"

#include <algorithm>

#include "plan/plan_plot.h"

namespace trainplan::app {

io::PlotPanel gpu_frontier_panel(const GpuComparison& c, double deadline_s) {
  const bool priced = std::all_of(c.plans.begin(), c.plans.end(), [](const GpuPlan& g) { return g.price_per_gpu_hour > 0; });
  auto cost_of = [&](const GpuPlan& g, const plan::Candidate& run) {
    return run.cost / 3600.0 * (priced ? g.price_per_gpu_hour : 1.0);
  };
  std::vector<plan::FrontierLine> lines;
  for (const auto& g : c.plans) {
    plan::FrontierLine l{g.gpu + (g.measured ? " (measured)" : " (moved)"), {}, std::nullopt};
    for (const auto& run : g.frontier) l.points.push_back({run.total_time_s, cost_of(g, run)});
    if (g.outcome) l.chosen = {{g.outcome->result.best.total_time_s, cost_of(g, g.outcome->result.best)}};
    lines.push_back(std::move(l));
  }
  return plan::frontier_lines_panel(
      lines, deadline_s,
      priced ? "the cheapest run that meets the target, by deadline, on each GPU (the lowest step is the GPU to rent)"
             : "the cheapest run that meets the target, by deadline, on each GPU",
      "deadline (s)", "s", priced ? "cost (price x GPU-hours)" : "GPU-hours", false);
}

}  // namespace trainplan::app
