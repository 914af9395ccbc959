// One panel of predictions against measurements: the series given, the line
// predicted = measured, and one frame for both axes that a wild prediction
// cannot squash (the measured range, widened to take in the predictions by
// at most half that range on each side; on log axes, a factor). Shared by the
// pictures of `evaluate` and `evaluate --transfer`.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "io/gnuplot.h"

namespace trainplan::scoring {

// gnuplot point types that stay distinguishable in one panel, for the
// series of such a panel.
inline constexpr int kScatterPointTypes[] = {7, 5, 9, 11, 13, 15, 2, 3};

struct ScatterPanel {
  io::PlotPanel panel;   // series in the order given, then predicted = measured
  size_t off_frame = 0;  // predictions drawn outside the frame
};

// Each series' points are (measured, predicted). On log axes a point with a
// value <= 0 is left out (it has no place), and so is any non-finite point.
// Labels, title and key are the caller's. nullopt when no point is left.
std::optional<ScatterPanel> measured_predicted_panel(std::vector<io::PlotSeries> series, bool log);

}  // namespace trainplan::scoring
