#include "app/watch_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace trainplan::app {
namespace {

using nlohmann::json;

std::optional<double> number(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// The interval's ends; an upper end of null is "never" (+infinity).
struct Interval {
  double lo = 0, hi = 0;
  bool open = false;  // no upper end
};

std::optional<Interval> interval_of(const json& u, const char* key) {
  const auto it = u.find(key);
  if (it == u.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number()) return std::nullopt;
  Interval r;
  r.lo = (*it)[0].get<double>();
  r.open = !(*it)[1].is_number();
  r.hi = r.open ? r.lo : (*it)[1].get<double>();
  return r;
}

// Seconds shown in the unit that keeps the numbers readable.
struct TimeUnit {
  double seconds;
  const char* name;
};
TimeUnit unit_for(double most_s) {
  if (most_s >= 2 * 86400) return {86400, "days"};
  if (most_s >= 2 * 3600) return {3600, "hours"};
  if (most_s >= 120) return {60, "minutes"};
  return {1, "seconds"};
}

std::string epoch_text(double e) { return fmt::format("{:.4g}", e); }

}  // namespace

std::vector<io::PlotPanel> watch_chart(const LiveWatch& watch) {
  const models::EpochForecaster* fc = watch.forecaster();
  if (!fc || !watch.last() || fc->epochs().empty()) return {};
  const json& u = *watch.last();
  const auto& epochs = fc->epochs();
  const auto& metrics = fc->metrics();
  const double target = number(u, "target").value_or(0);
  const double last_epoch = epochs.back();
  const auto predicted = number(u, "predicted_epoch");
  const auto reached = number(u, "reached_at");
  const auto band = interval_of(u, "interval");
  const double coverage = number(u, "coverage").value_or(0.8);
  const auto& colour = io::plot_palette();

  // The axis reaches the forecast and its interval, unless they lie far
  // beyond what has run.
  const double most_x = std::max(10 * last_epoch, last_epoch + 10);
  double x_end = last_epoch * 1.1;
  if (predicted) x_end = std::max(x_end, *predicted * 1.05);
  if (band && !band->open) x_end = std::max(x_end, band->hi * 1.05);
  x_end = std::min(x_end, most_x);
  const double x_start = 0;  // epochs are counted from 0, the run's start
  const bool off_axis = predicted && *predicted > x_end;

  io::PlotPanel m;
  const std::string name = watch.metric_name().empty() ? "metric" : watch.metric_name();
  m.title = fmt::format("{} by epoch, after {} epochs\n", name, fc->epochs_seen());
  if (reached) {
    m.title += fmt::format("target {:g} met at epoch {}", target, epoch_text(*reached));
  } else if (predicted) {
    m.title += fmt::format("target {:g} forecast at epoch {}{}", target, epoch_text(*predicted),
                           off_axis ? " (beyond the axis)" : "");
    if (band)
      m.title += fmt::format(", {:.0f}% interval {} to {}", 100 * coverage, epoch_text(band->lo),
                             band->open ? "never" : epoch_text(band->hi));
  } else if (u.value("never", false)) {
    m.title += fmt::format("the fit never reaches the target {:g}", target);
  } else {
    m.title += fmt::format("target {:g}: too few epochs to forecast", target);
  }
  m.xlabel = "epoch";
  m.ylabel = name;
  m.key = u.value("direction", "max") == "max" ? "bottom right" : "top right";
  m.xrange = std::make_pair(x_start, x_end);
  // The measurements and the target set the vertical extent: a fitted curve
  // carried far out may run off it.
  double y_lo = target, y_hi = target;
  for (double v : metrics) y_lo = std::min(y_lo, v), y_hi = std::max(y_hi, v);
  const double pad = y_hi > y_lo ? 0.08 * (y_hi - y_lo) : std::max(std::abs(y_hi) * 0.1, 1e-3);
  m.yrange = std::make_pair(y_lo - pad, y_hi + pad);

  io::PlotSeries measured{"measured", {}, "points pt 7 ps 0.8", colour[0]};
  for (size_t i = 0; i < epochs.size(); ++i) measured.points.push_back({epochs[i], metrics[i]});
  io::PlotSeries fitted{"fit (median of the curves)", {}, "lines lw 2", colour[1]};
  const int steps = 200;
  const double from = std::max(epochs.front(), 1e-9);
  for (int i = 0; i <= steps; ++i) {
    const double e = from + (x_end - from) * i / steps;
    const auto v = fc->fitted_metric(e, target);
    fitted.points.push_back({e, v ? *v : NAN});
  }
  io::PlotSeries goal{"target", {{x_start, target}, {x_end, target}}, "lines dt 2", "#808080"};
  m.series = {goal, measured};
  if (std::any_of(fitted.points.begin(), fitted.points.end(), [](const auto& p) { return std::isfinite(p.second); }))
    m.series.push_back(fitted);
  if (band && !reached) {
    const double hi = band->open ? x_end : std::min(band->hi, x_end);
    m.series.push_back({fmt::format("{:.0f}% interval", 100 * coverage),
                        {{std::min(band->lo, x_end), target}, {hi, target}}, "lines lw 6", colour[3]});
  }
  if (predicted && !reached && !off_axis)
    m.series.push_back({"forecast", {{*predicted, target}}, "points pt 9 ps 2", colour[2]});

  std::vector<io::PlotPanel> panels{m};

  // Time, when every epoch came with its time (the forecaster keeps them then).
  const auto& times = fc->epoch_times();
  if (times.size() != epochs.size()) return panels;
  std::vector<std::pair<double, double>> elapsed;
  double t = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    t += times[i] * (epochs[i] - (i ? epochs[i - 1] : 0));
    elapsed.push_back({epochs[i], t});
  }
  const auto finish = number(u, "finish_s");
  const auto finish_band = interval_of(u, "finish_interval_s");
  const auto deadline = number(u, "deadline_s");
  double most_s = t;
  if (finish && !off_axis) most_s = std::max(most_s, *finish);
  if (finish_band && !finish_band->open && band && !band->open && band->hi <= x_end)
    most_s = std::max(most_s, finish_band->hi);
  if (deadline) most_s = std::max(most_s, *deadline);
  const TimeUnit unit = unit_for(most_s);
  auto in_unit = [&](double s) { return s / unit.seconds; };

  io::PlotPanel tp;
  tp.title = fmt::format("time by epoch, {:.3g} {} so far\n", in_unit(t), unit.name);
  if (finish && !reached) tp.title += fmt::format("the target forecast at {:.3g} {}", in_unit(*finish), unit.name);
  if (deadline)
    tp.title += fmt::format("{}deadline {:.3g} {}: {}", finish && !reached ? "; " : "", in_unit(*deadline), unit.name,
                            u.value("deadline", std::string("unknown")));
  tp.xlabel = "epoch";
  tp.ylabel = fmt::format("{} since the first epoch began", unit.name);
  tp.key = "bottom right";
  tp.xrange = std::make_pair(x_start, x_end);
  tp.yrange = std::make_pair(0.0, in_unit(most_s) * 1.08);
  io::PlotSeries run{"elapsed", {}, "linespoints pt 7 ps 0.8", colour[0]};
  for (const auto& [e, s] : elapsed) run.points.push_back({e, in_unit(s)});
  tp.series.push_back(run);
  if (finish && predicted && !reached && !off_axis)
    tp.series.push_back({"projected at the recent epochs' pace",
                         {{last_epoch, in_unit(t)}, {*predicted, in_unit(*finish)}}, "lines dt 3 lw 2", colour[1]});
  if (finish_band && band && !reached) {
    // The finish interval lies on the projection, at the epoch interval's ends.
    const double hi_e = band->open ? x_end : std::min(band->hi, x_end);
    const double rate = band->hi > band->lo && !finish_band->open ? (finish_band->hi - finish_band->lo) / (band->hi - band->lo)
                                                                    : 0;
    const double hi_s = finish_band->open ? NAN : finish_band->lo + rate * (hi_e - band->lo);
    if (std::isfinite(hi_s))
      tp.series.push_back({fmt::format("{:.0f}% interval", 100 * coverage),
                           {{std::min(band->lo, x_end), in_unit(finish_band->lo)}, {hi_e, in_unit(hi_s)}},
                           "lines lw 6", colour[3]});
  }
  if (deadline)
    tp.series.push_back({"deadline", {{x_start, in_unit(*deadline)}, {x_end, in_unit(*deadline)}}, "lines dt 2",
                         "#c00000"});
  panels.push_back(tp);
  return panels;
}

}  // namespace trainplan::app
