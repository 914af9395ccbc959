#include "scoring/fit_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "core/even_subset.h"

namespace trainplan::scoring {
namespace {

const char* kGrey = "#b0b0b0";

io::PlotPanel metric_panel(const SampleSet& s, const models::MetricModel& m, const FitPlotOptions& o) {
  io::PlotPanel p;
  p.title = fmt::format("metric: {} ({} sample{})", m.name(), s.with_metric().size(), s.with_metric().size() == 1 ? "" : "s");
  p.xlabel = "data epochs";
  p.ylabel = "validation metric";
  p.key = s.direction == MetricDirection::kMax ? "bottom right opaque" : "top right opaque";
  // Configurations ordered by global batch.
  std::set<std::pair<double, std::pair<double, int>>> configs;
  for (const auto& x : s.with_metric()) configs.insert({x.global_batch(), {x.batch, x.workers}});
  const std::vector<double> epochs = metric_curve_epochs(s, o.steps);
  std::vector<std::pair<double, int>> ordered;
  for (const auto& c : configs) ordered.push_back(c.second);
  auto chosen = even_subset(ordered, std::max(1, o.curves));
  io::PlotSeries others{"other samples", {}, "points pt 7 ps 0.6", kGrey};
  std::vector<io::PlotSeries> own(chosen.size());
  for (const auto& x : s.with_metric()) {
    auto it = std::find(chosen.begin(), chosen.end(), std::make_pair(x.batch, x.workers));
    if (it == chosen.end()) others.points.push_back({x.epochs, *x.metric});
    else own[static_cast<size_t>(it - chosen.begin())].points.push_back({x.epochs, *x.metric});
  }
  p.series.push_back(std::move(others));
  const auto& palette = io::plot_palette();
  for (size_t k = 0; k < chosen.size(); ++k) {
    const auto [b, r] = chosen[k];
    const std::string colour = palette[k % palette.size()];
    io::PlotSeries curve{fmt::format("b={:g} x r={} (B={:g})", b, r, b * r), {}, "lines lw 2", colour};
    for (double e : epochs) curve.points.push_back({e, m.predict(b, r, e)});
    p.series.push_back(std::move(curve));
    std::sort(own[k].points.begin(), own[k].points.end());
    own[k].style = "points pt 7 ps 1.2";
    own[k].color = colour;
    p.series.push_back(std::move(own[k]));
  }
  return p;
}

io::PlotPanel time_panel(const SampleSet& s, const models::TimeModel& m, const FitPlotOptions& o) {
  io::PlotPanel p;
  p.title = fmt::format("epoch time: {} ({} sample{})", m.name(), s.size(), s.size() == 1 ? "" : "s");
  p.xlabel = "workers";
  p.ylabel = "seconds per epoch";
  p.logy = true;
  p.key = "outside right top";  // inside, it would hide the curves it names
  std::set<double> batches;
  int rmax = 1;
  for (const auto& x : s.samples) batches.insert(x.batch), rmax = std::max(rmax, x.workers);
  p.xtics = std::max(1, rmax / 16);
  auto chosen = even_subset(std::vector<double>(batches.begin(), batches.end()), std::max(1, o.curves));
  io::PlotSeries others{"other samples", {}, "points pt 7 ps 0.6", kGrey};
  std::vector<io::PlotSeries> own(chosen.size());
  for (const auto& x : s.samples) {
    auto it = std::find(chosen.begin(), chosen.end(), x.batch);
    if (it == chosen.end()) others.points.push_back({double(x.workers), x.epoch_time_s});
    else own[static_cast<size_t>(it - chosen.begin())].points.push_back({double(x.workers), x.epoch_time_s});
  }
  p.series.push_back(std::move(others));
  const auto& palette = io::plot_palette();
  for (size_t k = 0; k < chosen.size(); ++k) {
    const std::string colour = palette[k % palette.size()];
    io::PlotSeries curve{fmt::format("b={:g} per worker", chosen[k]), {}, "linespoints lw 2 pt 6", colour};
    for (int r = 1; r <= rmax; ++r) curve.points.push_back({double(r), m.predict(chosen[k], r, s.packed_nodes(r))});
    p.series.push_back(std::move(curve));
    std::sort(own[k].points.begin(), own[k].points.end());
    own[k].style = "points pt 7 ps 1.2";
    own[k].color = colour;
    p.series.push_back(std::move(own[k]));
  }
  return p;
}

}  // namespace

std::vector<double> metric_curve_epochs(const SampleSet& s, int steps) {
  double emax = 0, emin = std::numeric_limits<double>::infinity();
  for (const auto& x : s.with_metric()) emax = std::max(emax, x.epochs), emin = std::min(emin, x.epochs);
  for (const auto& x : s.curve)
    if (x.metric) emin = std::min(emin, x.epochs);
  const double top = std::max(1.0, 1.1 * emax);
  const double bottom = std::isfinite(emin) && emin > 0 && emin < top ? emin : 0;
  std::vector<double> e;
  for (int i = 1; i <= steps; ++i)
    e.push_back(bottom > 0 && steps > 1 ? bottom + (top - bottom) * (i - 1) / (steps - 1) : top * i / steps);
  return e;
}

std::vector<io::PlotPanel> fit_panels(const SampleSet& s, const models::TimeModel* time,
                                      const models::MetricModel* metric, const FitPlotOptions& o) {
  std::vector<io::PlotPanel> out;
  if (time && !s.empty()) out.push_back(time_panel(s, *time, o));
  if (metric && s.has_metric()) out.push_back(metric_panel(s, *metric, o));
  return out;
}

}  // namespace trainplan::scoring
