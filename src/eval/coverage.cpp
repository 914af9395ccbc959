#include "eval/coverage.h"

#include "eval/evaluate.h"

namespace trainplan::eval {
namespace {

// Adds one point; `iv`, `lo`, `hi` may be missing (a miss on that count).
void add(Coverage& c, double y, const std::optional<models::Interval>& iv, std::optional<double> lo,
         std::optional<double> hi) {
  ++c.n;
  c.two_sided += iv && y >= iv->lo && y <= iv->hi;
  c.above_lower += lo && y >= *lo;
  c.below_upper += hi && y <= *hi;
}

Coverage finish(Coverage c) {
  if (c.n > 0) c.two_sided /= double(c.n), c.above_lower /= double(c.n), c.below_upper /= double(c.n);
  return c;
}

}  // namespace

Coverage time_coverage(const models::TimeModel& m, const SampleSet& heldout, double coverage) {
  Coverage c;
  for (const auto& s : distinct_time_configs(heldout).samples)
    add(c, s.epoch_time_s, m.predict_interval(s.batch, s.workers, s.nodes, coverage),
        m.predict_bound(s.batch, s.workers, s.nodes, coverage, models::BoundSide::kLower),
        m.predict_bound(s.batch, s.workers, s.nodes, coverage, models::BoundSide::kUpper));
  return finish(c);
}

Coverage metric_coverage(const models::MetricModel& m, const SampleSet& heldout, double coverage) {
  Coverage c;
  for (const auto& s : heldout.with_metric())
    add(c, *s.metric, m.predict_interval(s.batch, s.workers, s.epochs, coverage),
        m.predict_bound(s.batch, s.workers, s.epochs, coverage, models::BoundSide::kLower),
        m.predict_bound(s.batch, s.workers, s.epochs, coverage, models::BoundSide::kUpper));
  return finish(c);
}

}  // namespace trainplan::eval
