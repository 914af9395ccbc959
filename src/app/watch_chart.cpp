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

// Seconds shown in the unit that keeps the numbers readable: its name on the
// axis, and its symbol in titles (no plural to get wrong).
struct TimeUnit {
  double seconds;
  const char* name;
  const char* symbol;
};
TimeUnit unit_for(double most_s) {
  if (most_s >= 2 * 86400) return {86400, "days", "d"};
  if (most_s >= 2 * 3600) return {3600, "hours", "h"};
  if (most_s >= 120) return {60, "minutes", "min"};
  return {1, "seconds", "s"};
}

std::string epoch_text(double e) { return fmt::format("{:.4g}", e); }

}  // namespace

std::vector<io::PlotPanel> watch_chart(const LiveWatch& watch, const nlohmann::json* final) {
  const models::EpochForecaster* fc = watch.forecaster();
  if (!fc || !watch.last() || fc->epochs().empty()) return {};
  const json& u = final ? *final : *watch.last();
  const auto& epochs = fc->epochs();
  const auto& metrics = fc->metrics();
  const double target = number(u, "target").value_or(0);
  const double last_epoch = epochs.back();
  // A run that ended short of its target has no forecast left.
  const bool ended_short = u.value("reached", true) == false;
  std::optional<double> predicted;
  std::optional<Interval> band;
  if (!ended_short) predicted = number(u, "predicted_epoch"), band = interval_of(u, "interval");
  const auto reached = number(u, "reached_at");
  // With --samples, the forecast from earlier trials of the workload beside the run's own.
  std::optional<double> from_trials, from_trials_finish;
  std::string trials_model;
  if (const auto it = u.find("samples"); !ended_short && it != u.end() && it->is_object()) {
    from_trials = number(*it, "predicted_epoch"), from_trials_finish = number(*it, "finish_s");
    trials_model = it->value("metric_model", "");
  }
  const double coverage = number(u, "coverage").value_or(0.8);
  const auto& colour = io::plot_palette();

  // The axis reaches the forecast and its interval, unless they lie far
  // beyond what has run.
  const double most_x = std::max(10 * last_epoch, last_epoch + 10);
  double x_end = last_epoch * 1.1;
  if (predicted) x_end = std::max(x_end, *predicted * 1.05);
  if (band && !band->open) x_end = std::max(x_end, band->hi * 1.05);
  if (from_trials && !reached) x_end = std::max(x_end, *from_trials * 1.05);
  x_end = std::min(x_end, most_x);
  const double x_start = 0;  // epochs are counted from 0, the run's start
  const bool off_axis = predicted && *predicted > x_end;

  io::PlotPanel m;
  const std::string name = watch.metric_name().empty() ? "metric" : watch.metric_name();
  m.title = fmt::format("{} by epoch, up to epoch {}{}\n", name, epoch_text(last_epoch),
                        watch.trial().empty() ? "" : " (trial: " + watch.trial() + ")");
  if (reached) {
    m.title += fmt::format("target {:g} met at epoch {}", target, epoch_text(*reached));
  } else if (ended_short) {
    m.title += fmt::format("the run ended without reaching the target {:g}", target);
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
  // The fit: the median of all the curves. Where some of them level off
  // short of the target, the median of those that reach it (whose epochs the
  // forecast is the median of) is drawn beside it, dashed.
  const int steps = 200;
  const double from = std::max(epochs.front(), 1e-9);
  auto curve = [&](const std::string& title, const std::string& style, const std::string& c,
                   std::optional<double> reaching) {
    io::PlotSeries s{title, {}, style, c};
    for (int i = 0; i <= steps; ++i) {
      const double e = from + (x_end - from) * i / steps;
      const auto v = fc->fitted_metric(e, reaching);
      s.points.push_back({e, v ? *v : NAN});
    }
    return s;
  };
  const auto drawable = [](const io::PlotSeries& s) {
    return std::any_of(s.points.begin(), s.points.end(), [](const auto& p) { return std::isfinite(p.second); });
  };
  io::PlotSeries goal{"target", {{x_start, target}, {x_end, target}}, "lines dt 2", "#808080"};
  m.series = {goal, measured};
  const io::PlotSeries fitted = curve("fit (median of the curves)", "lines lw 2", colour[1], std::nullopt);
  if (drawable(fitted)) m.series.push_back(fitted);
  if (predicted && !reached) {
    io::PlotSeries toward = curve("the curves that reach the target", "lines dt 3 lw 2", colour[1], target);
    bool differs = false;
    for (size_t i = 0; i < toward.points.size() && !differs; ++i) {
      const double a = toward.points[i].second, b = fitted.points[i].second;
      differs = std::isfinite(a) && !(std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(a)));
    }
    if (differs) m.series.push_back(std::move(toward));
  }
  if (band && !reached && band->lo < x_end) {
    const double hi = band->open ? x_end : std::min(band->hi, x_end);
    if (hi > band->lo)
      m.series.push_back({fmt::format("{:.0f}% interval", 100 * coverage), {{band->lo, target}, {hi, target}},
                          "lines lw 6", colour[3]});
  }
  if (predicted && !reached && !off_axis)
    m.series.push_back({"forecast", {{*predicted, target}}, "points pt 9 ps 2", colour[2]});
  if (from_trials && !reached && *from_trials <= x_end)
    m.series.push_back({fmt::format("forecast from earlier trials ({})", trials_model), {{*from_trials, target}},
                        "points pt 13 ps 2", colour[4]});
  if (reached)
    for (size_t i = 0; i < epochs.size(); ++i)
      if (epochs[i] == *reached) m.series.push_back({"target met", {{epochs[i], metrics[i]}}, "points pt 9 ps 2", colour[2]});

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
  std::optional<double> finish;
  std::optional<Interval> finish_band;
  if (!ended_short) finish = number(u, "finish_s"), finish_band = interval_of(u, "finish_interval_s");
  const auto deadline = number(u, "deadline_s");
  double most_s = t;
  if (finish && !off_axis) most_s = std::max(most_s, *finish);
  if (finish_band && !finish_band->open && band && !band->open && band->hi <= x_end)
    most_s = std::max(most_s, finish_band->hi);
  if (deadline) most_s = std::max(most_s, *deadline);
  if (from_trials && from_trials_finish && !reached && *from_trials <= x_end) most_s = std::max(most_s, *from_trials_finish);
  const TimeUnit unit = unit_for(most_s);
  auto in_unit = [&](double s) { return s / unit.seconds; };

  io::PlotPanel tp;
  tp.title = fmt::format("time by epoch, {:.3g} {} so far\n", in_unit(t), unit.symbol);
  if (reached && finish)
    tp.title += fmt::format("the target met at {:.3g} {}", in_unit(*finish), unit.symbol);
  else if (finish && !off_axis)
    tp.title += fmt::format("the target forecast at {:.3g} {}", in_unit(*finish), unit.symbol);
  else if (finish)
    tp.title += "the target forecast beyond the axis";
  if (deadline)
    tp.title += fmt::format("{}deadline {:.3g} {}: {}", finish ? "; " : "", in_unit(*deadline), unit.symbol,
                            u.value("deadline", std::string("unknown")));
  tp.xlabel = "epoch";
  tp.ylabel = fmt::format("{} since the first epoch began", unit.name);
  tp.key = "top left";
  tp.xrange = std::make_pair(x_start, x_end);
  tp.yrange = std::make_pair(0.0, in_unit(most_s) * 1.08);
  io::PlotSeries run{"elapsed", {}, "linespoints pt 7 ps 0.8", colour[0]};
  for (const auto& [e, s] : elapsed) run.points.push_back({e, in_unit(s)});
  tp.series.push_back(run);
  if (finish && predicted && !reached && !off_axis)
    tp.series.push_back({"projected at the recent epochs' pace",
                         {{last_epoch, in_unit(t)}, {*predicted, in_unit(*finish)}}, "lines dt 3 lw 2", colour[1]});
  if (finish_band && band && !reached && band->lo < x_end) {
    // The finish interval lies on the projection, at the epoch interval's
    // ends; an open one runs to the axis's end at the projection's pace.
    const double hi_e = band->open ? x_end : std::min(band->hi, x_end);
    const double pace = finish && predicted && *predicted > last_epoch ? (*finish - t) / (*predicted - last_epoch) : 0;
    const double hi_s = finish_band->lo + pace * (hi_e - band->lo);
    if (hi_e > band->lo && std::isfinite(hi_s))
      tp.series.push_back({fmt::format("{:.0f}% interval", 100 * coverage),
                           {{band->lo, in_unit(finish_band->lo)}, {hi_e, in_unit(hi_s)}}, "lines lw 6", colour[3]});
  }
  if (from_trials && from_trials_finish && !reached && *from_trials <= x_end)
    tp.series.push_back({"forecast from earlier trials", {{*from_trials, in_unit(*from_trials_finish)}},
                         "points pt 13 ps 2", colour[4]});
  if (deadline)
    tp.series.push_back({"deadline", {{x_start, in_unit(*deadline)}, {x_end, in_unit(*deadline)}}, "lines dt 2",
                         "#c00000"});
  panels.push_back(tp);
  return panels;
}

}  // namespace trainplan::app
