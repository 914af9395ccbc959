#include "scoring/evaluate_plot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "scoring/scatter_panel.h"

namespace trainplan::scoring {
namespace {

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

  // Drawn worst first so that the best model's points lie on top.
  std::vector<io::PlotSeries> series;
  const auto& palette = io::plot_palette();
  for (size_t k = shown; k-- > 0;) {
    const auto& [model, part] = scored[k];
    series.push_back({fmt::format("{} (MRE {:.1f}%)", model->model, 100 * *part->cv_mre), part->cv_points,
                      fmt::format("points pt {} ps 0.8", kScatterPointTypes[k % std::size(kScatterPointTypes)]),
                      palette[k % palette.size()]});
  }
  auto scatter = measured_predicted_panel(std::move(series), time);  // epoch time on log-log axes
  if (!scatter) return std::nullopt;                                 // nothing drawable
  io::PlotPanel panel = std::move(scatter->panel);
  const size_t off_frame = scatter->off_frame;
  panel.xlabel = time ? "measured seconds per epoch" : "measured metric";
  panel.ylabel = time ? "predicted seconds per epoch" : "predicted metric";
  // `invert` lists the best first in the key all the same.
  panel.key = "top left opaque invert";
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
  std::vector<std::optional<io::PlotPanel>> parts;
  bool any_time = false, any_metric = false;
  for (const auto& ds : sets)
    for (bool time : {true, false}) {
      parts.push_back(part_panel(ds, time, o));
      (time ? any_time : any_metric) = (time ? any_time : any_metric) || parts.back().has_value();
    }
  // With both parts drawn somewhere, a data set keeps its row: a part it lacks is an empty place.
  const bool rows = any_time && any_metric;
  std::vector<io::PlotPanel> out;
  for (auto& p : parts)
    if (p) out.push_back(std::move(*p));
    else if (rows) {
      io::PlotPanel empty;
      empty.blank = true;
      out.push_back(std::move(empty));
    }
  // Blank places after the last drawn panel would only pad the picture.
  while (!out.empty() && out.back().blank) out.pop_back();
  return out;
}

}  // namespace trainplan::scoring
