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

}  // namespace

Coverage& Coverage::operator+=(const Coverage& o) {
  n += o.n, two_sided += o.two_sided, above_lower += o.above_lower, below_upper += o.below_upper;
  return *this;
}

Coverage time_coverage(const models::TimeModel& m, const SampleSet& heldout, double coverage) {
  Coverage c;
  for (const auto& s : distinct_time_configs(heldout).samples)
    add(c, s.epoch_time_s, m.predict_interval(s.batch, s.workers, s.nodes, coverage),
        m.predict_bound(s.batch, s.workers, s.nodes, coverage, models::BoundSide::kLower),
        m.predict_bound(s.batch, s.workers, s.nodes, coverage, models::BoundSide::kUpper));
  return c;
}

Coverage metric_coverage(const models::MetricModel& m, const SampleSet& heldout, double coverage) {
  Coverage c;
  for (const auto& s : heldout.with_metric())
    add(c, *s.metric, m.predict_interval(s.batch, s.workers, s.epochs, coverage),
        m.predict_bound(s.batch, s.workers, s.epochs, coverage, models::BoundSide::kLower),
        m.predict_bound(s.batch, s.workers, s.epochs, coverage, models::BoundSide::kUpper));
  return c;
}

}  // namespace trainplan::eval
