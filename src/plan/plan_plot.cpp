#include "plan/plan_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "plan/objective.h"

namespace trainplan::plan {

std::vector<io::PlotPanel> plan_panels(const models::PerformanceModel& planned, const models::PerformanceModel& point,
                                       const PlanProblem& p, const Candidate& chosen, int curves) {
  const auto& palette = io::plot_palette();
  io::PlotPanel cost;
  cost.title = "cost of the cheapest feasible epochs per (batch, workers)";
  cost.xlabel = "workers";
  cost.ylabel = "cost (worker-seconds)";
  cost.logy = true;
  cost.key = "outside right top";  // inside, it would hide the curves of the small batches
  cost.xrange = {{0.5, p.space.max_workers + 0.5}};
  cost.xtics = std::max(1, p.space.max_workers / 16);
  // Batches drawn: spread over the candidates, and the chosen one.
  const auto& all = p.space.batches;
  std::vector<int> drawn;
  const int k = std::max(2, curves);
  if (static_cast<int>(all.size()) <= k) {
    drawn = all;
  } else {
    for (int i = 0; i < k; ++i)
      drawn.push_back(all[static_cast<size_t>(std::lround(double(i) * double(all.size() - 1) / double(k - 1)))]);
  }
  if (std::find(drawn.begin(), drawn.end(), chosen.config.batch) == drawn.end()) drawn.push_back(chosen.config.batch);
  std::sort(drawn.begin(), drawn.end());
  drawn.erase(std::unique(drawn.begin(), drawn.end()), drawn.end());
  for (size_t i = 0; i < drawn.size(); ++i) {
    io::PlotSeries s{fmt::format("b={}", drawn[i]), {}, "linespoints lw 2 pt 7 ps 0.7", palette[i % palette.size()]};
    bool feasible = false;
    for (int r = 1; r <= p.space.max_workers; ++r)
      if (auto c = evaluate_cell(planned, p, drawn[i], r)) s.points.push_back({double(r), c->cost}), feasible = true;
      else s.points.push_back({double(r), NAN});  // a gap: infeasible cell
    if (!feasible) s.title += ": no feasible cell";
    cost.series.push_back(std::move(s));
  }
  auto epochs = [](int e) { return fmt::format("{} epoch{}", e, e == 1 ? "" : "s"); };
  cost.series.push_back({fmt::format("choice: b={} x r={}, {}", chosen.config.batch, chosen.config.workers,
                                     epochs(chosen.config.epochs)),
                         {{double(chosen.config.workers), chosen.cost}},
                         "points pt 3 ps 3 lw 2",
                         "#000000"});

  io::PlotPanel metric;
  metric.title = fmt::format("metric at b={} x r={}", chosen.config.batch, chosen.config.workers);
  metric.xlabel = "epochs";
  metric.ylabel = "predicted metric";
  metric.key = "top right opaque spacing 1.4";
  const int limit = max_epochs_within(p, chosen.epoch_time_s);
  // Up to the deadline's limit, but no further than 4x the chosen epochs: the
  // curve near the choice is what matters.
  const int reach = std::max(chosen.config.epochs * 4, chosen.config.epochs + 5);
  const int last = std::max({std::min(limit, reach), chosen.config.epochs, 1});
  const int top = last + std::max(1, last / 10);
  metric.xrange = {{0.0, double(top)}};
  // A long model name ("..., held to the measured trials ...") would make the key wider than the chart.
  std::string planned_title = "planned on: " + planned.name();
  if (const auto comma = planned_title.find(", "); planned_title.size() > 50 && comma != std::string::npos)
    planned_title.replace(comma, 2, ",\n");
  io::PlotSeries plan_curve{planned_title, {}, "lines lw 2", palette[0]};
  io::PlotSeries point_curve{"point prediction", {}, "lines lw 1 dt 2", palette[1]};
  bool differs = false;
  for (int e = 1; e <= top; ++e) {
    auto a = planned.metric(chosen.config.batch, chosen.config.workers, e);
    auto b = point.metric(chosen.config.batch, chosen.config.workers, e);
    if (a) plan_curve.points.push_back({double(e), *a});
    if (b) point_curve.points.push_back({double(e), *b});
    differs = differs || (a && b && std::abs(*a - *b) > 1e-12 * std::max(1.0, std::abs(*b)));
  }
  metric.series.push_back(std::move(plan_curve));
  if (differs) metric.series.push_back(std::move(point_curve));
  metric.series.push_back({fmt::format("target {:g}", p.target), {{0.5, p.target}, {double(top), p.target}}, "lines lw 1",
                           "#000000"});
  if (limit > 0) {
    double lo = p.target, hi = p.target;
    for (const auto& s : metric.series)
      for (const auto& [x, y] : s.points) lo = std::min(lo, y), hi = std::max(hi, y);
    // Drawn where it falls on the chart; otherwise named in the title, so
    // that the key never lists a line the chart does not draw.
    if (limit <= top)
      metric.series.push_back({"deadline: " + epochs(limit), {{double(limit), lo}, {double(limit), hi}},
                               "lines lw 1 dt 3", "#d62728"});
    else
      metric.title += fmt::format("\n(the deadline allows {}, right of the chart)", epochs(limit));
  }
  metric.series.push_back({"choice: " + epochs(chosen.config.epochs),
                           {{double(chosen.config.epochs), chosen.metric}},
                           "points pt 3 ps 3 lw 2",
                           "#000000"});
  // The key gets a band of its own above the data: the target line runs the chart's whole width,
  // so any corner inside the data's range can be where it falls.
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : metric.series)
    for (const auto& [x, y] : s.points)
      if (std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
  if (lo <= hi) {
    const double span = hi > lo ? hi - lo : std::max(std::abs(hi), 1.0) * 0.1;
    metric.yrange = {{lo - 0.05 * span, hi + 0.6 * span}};
  }
  return {cost, metric};
}

io::PlotPanel frontier_panel(const std::vector<Candidate>& front, double deadline_s) {
  io::PlotPanel panel;
  panel.title = "the cheapest run that meets the target, by deadline";
  panel.xlabel = "deadline (s)";
  panel.ylabel = "cost (worker-seconds)";
  panel.key = "top right opaque";
  // The axis spans the frontier, not the deadline: a deadline far right of
  // the last point would squash every step into the left edge. The deadline
  // is drawn when it falls within the frontier's span, and named in the key
  // as right of the chart otherwise (every point then meets it).
  double first = deadline_s, last = deadline_s;
  if (!front.empty()) first = front.front().total_time_s, last = front.back().total_time_s;
  const double span = std::max(last - first, 0.1 * last);
  const bool deadline_shown = !front.empty() && deadline_s <= last + 0.5 * span;
  const double left = std::max(0.0, first - 0.1 * span);
  const double right = (deadline_shown ? std::max(last, deadline_s) : last) + 0.25 * span;
  io::PlotSeries step{"cheapest run", {}, "steps lw 2", io::plot_palette()[0]};
  for (const auto& c : front) step.points.push_back({c.total_time_s, c.cost});
  if (!front.empty()) step.points.push_back({right, front.back().cost});
  io::PlotSeries points{"", {}, "points pt 7 ps 1", io::plot_palette()[0]};
  for (const auto& c : front) points.points.push_back({c.total_time_s, c.cost});
  double lo = 0, hi = 0;
  for (const auto& c : front) hi = std::max(hi, c.cost);
  panel.xrange = {{left, right}};
  panel.yrange = {{lo, hi * 1.1}};
  panel.series.push_back(std::move(step));
  panel.series.push_back(std::move(points));
  if (deadline_shown)
    panel.series.push_back({fmt::format("your deadline {:.4g} s", deadline_s),
                            {{deadline_s, lo}, {deadline_s, hi * 1.1}},
                            "lines lw 1 dt 3",
                            "#d62728"});
  else if (!front.empty())
    panel.title += fmt::format("\n(your deadline, {:.4g} s, is right of the chart: every run shown meets it)", deadline_s);
  return panel;
}

io::PlotPanel frontier_lines_panel(const std::vector<FrontierLine>& lines, double deadline, const std::string& title,
                                   const std::string& time_label, const std::string& time_unit,
                                   const std::string& cost_label, bool log_cost) {
  double first = INFINITY, last = 0, lo = INFINITY, hi = 0;
  for (const auto& l : lines)
    for (const auto& [t, c] : l.points) first = std::min(first, t), last = std::max(last, t), lo = std::min(lo, c), hi = std::max(hi, c);
  if (!(last > 0)) throw InputError("", 0, "--plot", "no option has a run that meets the target: nothing to draw");
  // The steps run a quarter decade past the slowest point.
  const double left = first / std::pow(10.0, 0.1), right = last * std::pow(10.0, 0.25);
  const double bottom = log_cost ? lo / 1.15 : 0, top = hi * 1.15;
  io::PlotPanel panel;
  panel.title = title;
  panel.xlabel = time_label;
  panel.ylabel = cost_label;
  panel.logx = true;
  panel.logy = log_cost;
  panel.key = "below";  // inside, it would hide some option's steps
  panel.xrange = {{left, right}};
  panel.yrange = {{bottom, top}};
  const auto& palette = io::plot_palette();
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    if (l.points.empty()) continue;
    const std::string colour = palette[i % palette.size()];
    io::PlotSeries step{l.name, l.points, "steps lw 2", colour};
    step.points.push_back({right, l.points.back().second});
    panel.series.push_back(std::move(step));
    if (l.chosen) panel.series.push_back({"", {*l.chosen}, "points pt 7 ps 1.5", colour});
  }
  if (deadline >= left && deadline <= right)
    panel.series.push_back({fmt::format("deadline {:.4g} {} (dots: each plan)", deadline, time_unit), {{deadline, bottom}, {deadline, top}},
                            "lines lw 1 dt 3", "#d62728"});
  else if (deadline > 0)
    panel.title += fmt::format("\n(the deadline, {:.4g} {}, is off the chart; dots: each plan)", deadline, time_unit);
  return panel;
}

}  // namespace trainplan::plan
