// Maps a validation metric to a positive loss that falls as training improves,
// and back, so that loss-curve models (Optimus) also serve accuracy-type metrics.
//  * min-direction metrics (WER, validation loss) are losses already: l = m
//    (shifted up when some value is <= 0, so that l > 0).
//  * max-direction metrics become a shortfall from a ceiling: l = c - m, with
//    c = 1 when every value lies in [0, 1] (accuracy, hit rate), c = 100 when
//    every value lies in [0, 100] (F1, accuracy in percent), and otherwise
//    c = max + (max - min), a ceiling the data does not reach.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/sample.h"

namespace trainplan::models {

struct MetricLoss {
  MetricDirection direction = MetricDirection::kMax;
  double offset = 0;  // max: the ceiling c; min: the shift subtracted from m

  // Chooses the transform for the observed `values` (non-empty, finite).
  static MetricLoss for_values(MetricDirection d, const std::vector<double>& values);
  double to_loss(double metric) const { return direction == MetricDirection::kMax ? offset - metric : metric - offset; }
  double to_metric(double loss) const { return direction == MetricDirection::kMax ? offset - loss : loss + offset; }
  // The least loss a curve is fitted to: a metric at or past its ceiling is
  // clipped just above 0. Above the rounding of offset - metric (about
  // 1e-16 |offset|), and far below the losses data far from 0 can show: a
  // floor in proportion to the offset (1e-9 |offset|) flattened every loss
  // of metrics near 1e9 to one value.
  double loss_floor() const { return std::max(1e-9, 1e-14 * std::abs(offset)); }
  std::string describe() const;
};

}  // namespace trainplan::models
