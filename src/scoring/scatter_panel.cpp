#include "scoring/scatter_panel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace trainplan::scoring {

std::optional<ScatterPanel> measured_predicted_panel(std::vector<io::PlotSeries> series, bool log) {
  auto drawable = [log](const std::pair<double, double>& p) {
    if (!std::isfinite(p.first) || !std::isfinite(p.second)) return false;
    return !log || (p.first > 0 && p.second > 0);
  };
  auto to_axis = [log](double v) { return log ? std::log(v) : v; };
  auto from_axis = [log](double v) { return log ? std::exp(v) : v; };
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, plo = lo, phi = -lo;
  for (auto& s : series) {
    std::erase_if(s.points, [&](const auto& p) { return !drawable(p); });
    for (const auto& [measured, predicted] : s.points) {
      lo = std::min(lo, to_axis(measured)), hi = std::max(hi, to_axis(measured));
      plo = std::min(plo, to_axis(predicted)), phi = std::max(phi, to_axis(predicted));
    }
  }
  if (!(lo <= hi)) return std::nullopt;
  const double span = hi > lo ? hi - lo : std::max(1e-9, std::abs(hi) * 0.1 + (log ? 0.1 : 0));
  const double flo = std::max(plo, lo - 0.5 * span), fhi = std::min(phi, hi + 0.5 * span);
  const double margin = 0.03 * (std::max(fhi, hi) - std::min(flo, lo));
  const double a = from_axis(std::min(flo, lo) - margin), b = from_axis(std::max(fhi, hi) + margin);

  ScatterPanel out;
  for (const auto& s : series)
    for (const auto& p : s.points) out.off_frame += p.second < a || p.second > b;
  out.panel.logx = out.panel.logy = log;
  out.panel.xrange = out.panel.yrange = std::make_pair(a, b);
  out.panel.series = std::move(series);
  out.panel.series.push_back({"predicted = measured", {{a, a}, {b, b}}, "lines dt 2 lw 1.5", "#000000"});
  return out;
}

}  // namespace trainplan::scoring
