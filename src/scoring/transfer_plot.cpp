#include "scoring/transfer_plot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/even_subset.h"
#include "scoring/scatter_panel.h"

namespace trainplan::scoring {
namespace {

std::string gpu_name(const structure::HardwareProfile& hw) { return hw.name.empty() ? "?" : hw.name; }

}  // namespace

std::vector<io::PlotPanel> transfer_panels(const TransferReport& r) {
  const auto& o = r.options;
  const uint64_t seed = o.seeds.empty() ? 0 : o.seeds.front();
  std::vector<io::PlotPanel> out;
  for (const auto& n : r.networks) {
    struct Ranked {
      std::string method;
      double mre;
    };
    std::vector<Ranked> ranked;
    for (const auto& [method, points] : n.first_seed_points) {
      auto it = n.mre.find(method);
      if (it != n.mre.end() && !it->second.empty()) ranked.push_back({method, it->second.front()});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
      return a.mre != b.mre ? a.mre < b.mre : a.method < b.method;
    });
    std::vector<io::PlotSeries> series;
    const auto& palette = io::plot_palette();
    for (size_t k = ranked.size(); k-- > 0;) {
      // One colour and mark per method in every panel, by the report's order.
      const size_t m = static_cast<size_t>(
          std::find(r.methods.begin(), r.methods.end(), ranked[k].method) - r.methods.begin());
      series.push_back({fmt::format("{} (MRE {:.1f}%)", ranked[k].method, 100 * ranked[k].mre),
                        n.first_seed_points.at(ranked[k].method),
                        fmt::format("points pt {} ps 0.8", kScatterPointTypes[m % std::size(kScatterPointTypes)]),
                        palette[m % palette.size()]});
    }
    if (!n.first_seed_trials.empty())
      series.push_back({fmt::format("{} target trial{} ({})", n.first_seed_trials.size(),
                                    n.first_seed_trials.size() == 1 ? "" : "s", o.headline),
                        n.first_seed_trials, "points pt 6 ps 1.6 lw 1.5", "#000000"});
    auto scatter = measured_predicted_panel(std::move(series), true);
    if (!scatter) continue;
    io::PlotPanel p = std::move(scatter->panel);
    p.xlabel = fmt::format("measured seconds per step on {}", gpu_name(o.to_hw));
    p.ylabel = "predicted seconds per step";
    // Below the frame: the methods scatter on both sides of the diagonal, so no corner is free.
    p.key = "below invert";
    std::vector<std::string> also;
    also.push_back(fmt::format("{} rows predicted", n.predicted_rows));
    if (o.seeds.size() > 1) also.push_back(fmt::format("seed {}, the first of {}", seed, o.seeds.size()));
    if (scatter->off_frame) also.push_back(fmt::format("{} predictions off the frame", scatter->off_frame));
    p.title = fmt::format("{}: {} -> {}, {} target trial{}\n({})", n.network, gpu_name(o.from_hw), gpu_name(o.to_hw),
                          o.target_trials, o.target_trials == 1 ? "" : "s", fmt::join(also, "; "));
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// A log axis over `values` (positive), widened about a single value so that
// it spans a tick (gnuplot's own range about one point may hold none).
std::optional<std::pair<double, double>> log_range_about(const std::vector<double>& values) {
  double lo = INFINITY, hi = 0;
  for (double v : values)
    if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(hi > 0) || hi > lo * 1.5) return std::nullopt;
  return std::make_pair(lo / 2, hi * 2);
}

}  // namespace

std::vector<io::PlotPanel> transfer_prediction_panels(const std::vector<TransferPredictedTime>& predicted,
                                                      const std::vector<TransferMeasuredTime>& measured,
                                                      const TransferPlotLabels& labels,
                                                      const std::vector<TransferMeasuredTime>& target_measured) {
  // The groups in the order they first come.
  std::vector<std::string> groups;
  for (const auto& r : predicted)
    if (std::find(groups.begin(), groups.end(), r.group) == groups.end()) groups.push_back(r.group);
  const std::vector<std::string> drawn = even_subset(groups, 8);
  const auto& palette = io::plot_palette();
  io::PlotPanel p;
  p.logx = p.logy = true;
  p.xlabel = "batch per GPU";
  p.ylabel = labels.time;
  p.key = "below";
  bool any = false;
  std::vector<double> batches;
  for (size_t k = 0; k < drawn.size(); ++k) {
    const std::string& g = drawn[k];
    const std::string colour = palette[k % palette.size()];
    std::vector<TransferPredictedTime> rows;
    for (const auto& r : predicted)
      if (r.group == g && r.batch > 0 && r.time_s > 0 &&
          std::none_of(rows.begin(), rows.end(), [&](const auto& x) { return x.batch == r.batch; }))
        rows.push_back(r);
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.batch < b.batch; });
    // One legend entry a group: the title says what lines, dashes and marks are.
    io::PlotSeries line{g, {}, rows.size() > 1 ? "linespoints pt 7 ps 0.5" : "points pt 7", colour};
    io::PlotSeries lo{"", {}, "lines dt 2 lw 1", colour}, hi{"", {}, "lines dt 2 lw 1", colour};
    for (const auto& r : rows) {
      line.points.push_back({r.batch, r.time_s});
      batches.push_back(r.batch);
      if (r.high80_s > r.low80_s && r.low80_s > 0) {
        if (rows.size() > 1) {
          lo.points.push_back({r.batch, r.low80_s}), hi.points.push_back({r.batch, r.high80_s});
        } else {  // one batch: the interval as a dashed bar through its point
          lo.points = {{r.batch, r.low80_s}, {r.batch, r.high80_s}};
        }
      }
    }
    io::PlotSeries seen{"", {}, "points pt 6 ps 1", colour};
    for (const auto& m : measured)
      if (m.group == g && m.batch > 0 && m.time_s > 0) seen.points.push_back({m.batch, m.time_s});
    io::PlotSeries trials{"", {}, "points pt 5 ps 1", colour};
    for (const auto& m : target_measured)
      if (m.group == g && m.batch > 0 && m.time_s > 0) trials.points.push_back({m.batch, m.time_s});
    any = any || !line.points.empty();
    for (auto* s : {&line, &lo, &hi, &seen, &trials})
      if (!s->points.empty()) p.series.push_back(std::move(*s));
  }
  if (!any) return {};
  p.xrange = log_range_about(batches);
  p.title = labels.title;
  if (drawn.size() < groups.size())
    p.title += fmt::format("\n({} of {} groups drawn, spread over those asked)", drawn.size(), groups.size());
  p.title += "\nlines: predicted on " + labels.to + ", dashed: its 80% interval\ncircles: measured on " + labels.from;
  if (!target_measured.empty()) p.title += "; squares: measured on " + labels.to;
  std::vector<io::PlotPanel> out{p};

  // The parts of the drawn group on the most GPUs (of those, across the most nodes).
  const TransferPredictedTime* widest = nullptr;
  for (const auto& r : predicted)
    if (r.host_s >= 0 && r.gpu_s >= 0 && r.exposed_comm_s >= 0 &&
        std::find(drawn.begin(), drawn.end(), r.group) != drawn.end() &&
        (!widest || std::pair(r.gpus, r.nodes) > std::pair(widest->gpus, widest->nodes)))
      widest = &r;
  if (!widest) return out;
  std::vector<TransferPredictedTime> rows;
  for (const auto& r : predicted)
    if (r.group == widest->group && r.batch > 0 &&
        std::none_of(rows.begin(), rows.end(), [&](const auto& x) { return x.batch == r.batch; }))
      rows.push_back(r);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.batch < b.batch; });
  io::PlotPanel b;
  b.logx = b.logy = true;
  b.xlabel = "batch per GPU";
  b.ylabel = labels.time;
  b.key = "below";
  b.xrange = p.xrange;
  b.title = fmt::format("what a step of {} is made of on {}\n(host and GPU overlap as the fit says: the step is not "
                        "their sum)",
                        widest->group, labels.to);
  // A part under a thousandth of the step would stretch the log axis over
  // decades where nothing else lies: it is said, not drawn.
  double least_step = INFINITY;
  for (const auto& r : rows) least_step = std::min(least_step, r.time_s);
  const double floor = 1e-3 * least_step;
  const struct {
    const char* title;
    double TransferPredictedTime::*part;
    const char* style;
    const char* colour;
  } parts[] = {{"step", &TransferPredictedTime::time_s, "linespoints pt 7 ps 0.6 lw 2", "#000000"},
               {"host (the machine's: framework, input)", &TransferPredictedTime::host_s, "linespoints pt 4 ps 0.6",
                "#8c564b"},
               {"GPU (compute and memory)", &TransferPredictedTime::gpu_s, "linespoints pt 6 ps 0.6", "#17becf"},
               {"exposed communication", &TransferPredictedTime::exposed_comm_s, "linespoints pt 8 ps 0.6",
                "#e377c2"}};
  for (const auto& part : parts) {
    io::PlotSeries s{part.title, {}, part.style, part.colour};
    double most = 0;
    for (const auto& r : rows) {
      const double v = r.*(part.part);
      most = std::max(most, v);
      s.points.push_back({r.batch, v >= floor ? v : NAN});
    }
    if (most <= 0) s.title += ": none";
    else if (most < floor) s.title += ": under 0.1% of the step, not drawn";
    b.series.push_back(std::move(s));
  }
  out.push_back(std::move(b));
  return out;
}

}  // namespace trainplan::scoring
