// How often held-out truths fall inside a model's conformal intervals and on
// the right side of its one-sided bounds (models/conformal.h): the check that
// an interval at coverage c covers about c of new points.
#pragma once
#include <cstddef>

#include "core/sample.h"
#include "models/model.h"

namespace trainplan::eval {

// Counts of held-out points: all of them, and those each check held for.
// Counts, not fractions, so that coverages of several data sets add up.
struct Coverage {
  size_t n = 0;
  size_t two_sided = 0;    // lo <= y <= hi
  size_t above_lower = 0;  // y >= the lower one-sided bound
  size_t below_upper = 0;  // y <= the upper one-sided bound
  // hits / n (0 when there were no points).
  double rate(size_t hits) const { return n ? double(hits) / double(n) : 0.0; }
  Coverage& operator+=(const Coverage& o);
};

// Epoch time: one point per distinct (batch, workers, nodes) of `heldout`.
// Points where the model gives no interval or bound count as misses.
Coverage time_coverage(const models::TimeModel& m, const SampleSet& heldout, double coverage);
// Metric: every held-out sample that carries a metric.
Coverage metric_coverage(const models::MetricModel& m, const SampleSet& heldout, double coverage);

}  // namespace trainplan::eval
