#include "scoring/evaluate_plot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace trainplan::scoring {
namespace {

// gnuplot point types that stay distinguishable in one panel.
constexpr int kPointTypes[] = {7, 5, 9, 11, 13, 15, 2, 3};

struct Ranked {
  const ModelScore* model;
  const PartScore* part;
};

std::optional<io::PlotPanel> part_panel(const DatasetScores& ds, bool time, const EvaluatePlotOptions& o) {
  std::vector<Ranked> scored;
  for (const auto& m : ds.models) {
    const PartScore& p = time ? m.time : m.metric;
    if (p.cv_mre && !p.cv_points.empty()) scored.push_back({&m, &p});
  }
  if (scored.empty()) return std::nullopt;
  std::stable_sort(scored.begin(), scored.end(), [](const Ranked& a, const Ranked& b) {
    if (*a.part->cv_mre != *b.part->cv_mre) return *a.part->cv_mre < *b.part->cv_mre;
    return a.model->model < b.model->model;
  });
  const size_t shown = std::min(scored.size(), static_cast<size_t>(std::max(1, o.max_models)));

  io::PlotPanel panel;
  panel.xlabel = time ? "measured seconds per epoch" : "measured metric";
  panel.ylabel = time ? "predicted seconds per epoch" : "predicted metric";
  panel.logx = panel.logy = time;
  // Drawn worst first so that the best model's points lie on top; `invert`
  // lists the best first in the key all the same.
  panel.key = "top left opaque invert";
  // The frame: the measured range, widened to take in the predictions but by
  // at most half that range on each side (a factor on log axes), so that one
  // wild prediction cannot squash the rest; the same on both axes.
  auto to_axis = [time](double v) { return time ? std::log(v) : v; };
  auto from_axis = [time](double v) { return time ? std::exp(v) : v; };
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, plo = lo, phi = -lo;
  for (size_t k = 0; k < shown; ++k)
    for (const auto& [measured, predicted] : scored[k].part->cv_points) {
      if (time && (measured <= 0 || predicted <= 0)) continue;
      if (!std::isfinite(measured) || !std::isfinite(predicted)) continue;
      lo = std::min(lo, to_axis(measured)), hi = std::max(hi, to_axis(measured));
      plo = std::min(plo, to_axis(predicted)), phi = std::max(phi, to_axis(predicted));
    }
  if (!(lo <= hi)) return std::nullopt;  // nothing drawable
  const double span = hi > lo ? hi - lo : std::max(1e-9, std::abs(hi) * 0.1 + (time ? 0.1 : 0));
  const double flo = std::max(plo, lo - 0.5 * span), fhi = std::min(phi, hi + 0.5 * span);
  const double margin = 0.03 * (std::max(fhi, hi) - std::min(flo, lo));
  const double a = from_axis(std::min(flo, lo) - margin), b = from_axis(std::max(fhi, hi) + margin);
  panel.xrange = panel.yrange = std::make_pair(a, b);

  size_t off_frame = 0;
  const auto& palette = io::plot_palette();
  for (size_t k = shown; k-- > 0;) {
    const auto& [model, part] = scored[k];
    io::PlotSeries s;
    s.title = fmt::format("{} (MRE {:.1f}%)", model->model, 100 * *part->cv_mre);
    s.style = fmt::format("points pt {} ps 0.8", kPointTypes[k % std::size(kPointTypes)]);
    s.color = palette[k % palette.size()];
    for (const auto& [measured, predicted] : part->cv_points) {
      if (time && (measured <= 0 || predicted <= 0)) continue;  // no place on log axes
      s.points.push_back({measured, predicted});
      off_frame += predicted < a || predicted > b;
    }
    panel.series.push_back(std::move(s));
  }
  panel.series.push_back({"predicted = measured", {{a, a}, {b, b}}, "lines dt 2 lw 1.5", "#000000"});
  // The qualifiers go on a second line: on one they run past a panel's width.
  std::vector<std::string> also;
  if (shown < scored.size()) also.push_back(fmt::format("best {} of {} models", shown, scored.size()));
  if (off_frame) also.push_back(fmt::format("{} predictions off the frame", off_frame));
  panel.title = fmt::format("{}: {}, cross-validated{}", ds.name, time ? "epoch time" : "metric",
                            also.empty() ? "" : fmt::format("\n({})", fmt::join(also, "; ")));
  return panel;
}

}  // namespace

std::vector<io::PlotPanel> evaluate_panels(const std::vector<DatasetScores>& sets, const EvaluatePlotOptions& o) {
  std::vector<io::PlotPanel> out;
  for (const auto& ds : sets)
    for (bool time : {true, false})
      if (auto p = part_panel(ds, time, o)) out.push_back(std::move(*p));
  return out;
}

}  // namespace trainplan::scoring
