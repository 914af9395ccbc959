// How often held-out truths fall inside a model's conformal intervals and on
// the right side of its one-sided bounds (models/conformal.h): the check that
// an interval at coverage c covers about c of new points.
#pragma once
#include <cstddef>

#include "core/sample.h"
#include "models/model.h"

namespace trainplan::eval {

// Fractions of held-out points; n = 0 when there were none (fractions 0).
struct Coverage {
  size_t n = 0;
  double two_sided = 0;  // lo <= y <= hi
  double above_lower = 0;  // y >= the lower one-sided bound
  double below_upper = 0;  // y <= the upper one-sided bound
};

// Epoch time: one point per distinct (batch, workers, nodes) of `heldout`.
// Points where the model gives no interval or bound count as misses.
Coverage time_coverage(const models::TimeModel& m, const SampleSet& heldout, double coverage);
// Metric: every held-out sample that carries a metric.
Coverage metric_coverage(const models::MetricModel& m, const SampleSet& heldout, double coverage);

}  // namespace trainplan::eval
