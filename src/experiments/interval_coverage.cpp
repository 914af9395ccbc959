#include "experiments/interval_coverage.h"

#include <algorithm>

#include "scoring/evaluate.h"

namespace trainplan::experiments {
namespace {

// Adds one point; `iv`, `lo`, `hi` may be missing (a miss on that count).
void add(Coverage& c, double y, const std::optional<models::Interval>& iv, std::optional<double> lo,
         std::optional<double> hi) {
  ++c.n;
  c.two_sided += iv && y >= iv->lo && y <= iv->hi;
  c.above_lower += lo && y >= *lo;
  c.below_upper += hi && y <= *hi;
  c.interval_lo += iv && y >= iv->lo;
  c.interval_hi += iv && y <= iv->hi;
}

void add_metric(Coverage& c, const models::MetricModel& m, const Sample& s, double coverage) {
  add(c, *s.metric, m.predict_interval(s.batch, s.workers, s.epochs, coverage),
      m.predict_bound(s.batch, s.workers, s.epochs, coverage, models::BoundSide::kLower),
      m.predict_bound(s.batch, s.workers, s.epochs, coverage, models::BoundSide::kUpper));
}

}  // namespace

Coverage& Coverage::operator+=(const Coverage& o) {
  n += o.n, two_sided += o.two_sided, above_lower += o.above_lower, below_upper += o.below_upper;
  interval_lo += o.interval_lo, interval_hi += o.interval_hi;
  return *this;
}

Coverage time_coverage(const models::TimeModel& m, const SampleSet& heldout, double coverage) {
  Coverage c;
  for (const auto& s : scoring::distinct_time_configs(heldout).samples)
    add(c, s.epoch_time_s, m.predict_interval(s.batch, s.workers, s.nodes, coverage),
        m.predict_bound(s.batch, s.workers, s.nodes, coverage, models::BoundSide::kLower),
        m.predict_bound(s.batch, s.workers, s.nodes, coverage, models::BoundSide::kUpper));
  return c;
}

Coverage metric_coverage(const models::MetricModel& m, const SampleSet& heldout, double coverage) {
  Coverage c;
  for (const auto& s : heldout.with_metric()) add_metric(c, m, s, coverage);
  return c;
}

const char* to_string(EpochRegion r) {
  switch (r) {
    case EpochRegion::kUnsampledRun: return "unsampled configuration";
    case EpochRegion::kBefore: return "before the run's first sample";
    case EpochRegion::kAt: return "at a sampled epoch";
    case EpochRegion::kBetween: return "between two samples of the run";
    case EpochRegion::kAfterRun: return "past the run's last sample";
    case EpochRegion::kBeyondAll: return "past every sampled epoch";
  }
  return "?";
}

EpochRegions::EpochRegions(const SampleSet& train) : last_any_(train.last_metric_epoch().value_or(0)) {
  for (const auto& s : train.with_metric()) runs_[{s.batch, s.workers}].push_back(s.epochs);
  for (auto& [run, e] : runs_) std::sort(e.begin(), e.end());
}

EpochRegion EpochRegions::of(double batch, int workers, double epochs) const {
  if (epochs > last_any_) return EpochRegion::kBeyondAll;
  auto it = runs_.find({batch, workers});
  if (it == runs_.end()) return EpochRegion::kUnsampledRun;
  const auto& e = it->second;
  if (std::find(e.begin(), e.end(), epochs) != e.end()) return EpochRegion::kAt;
  if (epochs < e.front()) return EpochRegion::kBefore;
  if (epochs > e.back()) return EpochRegion::kAfterRun;
  return EpochRegion::kBetween;
}

std::map<EpochRegion, Coverage> metric_coverage_by_region(const models::MetricModel& m, const EpochRegions& regions,
                                                          const SampleSet& heldout, double coverage) {
  std::map<EpochRegion, Coverage> out;
  for (const auto& s : heldout.with_metric()) add_metric(out[regions.of(s.batch, s.workers, s.epochs)], m, s, coverage);
  return out;
}

}  // namespace trainplan::experiments
