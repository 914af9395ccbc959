// How often held-out truths fall inside a model's conformal intervals and on
// the right side of its one-sided bounds (uncertainty/conformal.h): the check that
// an interval at coverage c covers about c of new points.
#pragma once
#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "core/sample.h"
#include "models/model.h"

namespace trainplan::experiments {

// Counts of held-out points: all of them, and those each check held for.
// Counts, not fractions, so that coverages of several data sets add up.
struct Coverage {
  size_t n = 0;
  size_t two_sided = 0;    // lo <= y <= hi
  size_t above_lower = 0;  // y >= the lower one-sided bound
  size_t below_upper = 0;  // y <= the upper one-sided bound
  size_t interval_lo = 0;  // y >= the interval's lower end
  size_t interval_hi = 0;  // y <= the interval's upper end
  // hits / n (0 when there were no points).
  double rate(size_t hits) const { return n ? double(hits) / double(n) : 0.0; }
  Coverage& operator+=(const Coverage& o);
};

// Epoch time: one point per distinct (batch, workers, nodes) of `heldout`.
// Points where the model gives no interval or bound count as misses.
Coverage time_coverage(const models::TimeModel& m, const SampleSet& heldout, double coverage);
// Metric: every held-out sample that carries a metric.
Coverage metric_coverage(const models::MetricModel& m, const SampleSet& heldout, double coverage);

// Where a metric query at (batch, workers, epochs) lies relative to the
// epochs that `train` sampled: the conformal rules differ by region
// (uncertainty/conformal.h), and so does how well the model knows the curve.
enum class EpochRegion {
  kUnsampledRun,  // no sample of this (batch, workers)
  kBefore,        // before the run's first sampled epoch
  kAt,            // at a sampled epoch of the run
  kBetween,       // strictly between two sampled epochs of the run
  kAfterRun,      // past the run's last sampled epoch, not past every run's
  kBeyondAll,     // past the last epoch sampled on any configuration
};
const char* to_string(EpochRegion r);
class EpochRegions {
 public:
  explicit EpochRegions(const SampleSet& train);
  EpochRegion of(double batch, int workers, double epochs) const;

 private:
  std::map<std::pair<double, int>, std::vector<double>> runs_;  // sorted sampled epochs of each run
  double last_any_ = 0;
};
// metric_coverage split by region (only regions with points appear).
std::map<EpochRegion, Coverage> metric_coverage_by_region(const models::MetricModel& m, const EpochRegions& regions,
                                                          const SampleSet& heldout, double coverage);

}  // namespace trainplan::experiments
