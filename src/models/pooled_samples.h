// Identical configurations pooled, so that a fit costs what the distinct
// configurations cost rather than what the rows cost. A store repeats
// configurations (reruns, seeds, every epoch of every trial read as a
// trial); least squares on w rows of one configuration is least squares on
// their mean with weight w, plus their spread about it, which no parameter
// changes. A pooled configuration keeps its members' values (sorted) for
// the statistics that are not least squares: absolute errors and medians.
//
// A configuration of one sample is that sample's value exactly (mean of one,
// weight 1, spread 0), so a fit on pooled points equals the fit on the raw
// samples wherever they have no duplicates.
#pragma once
#include <cstddef>
#include <vector>

#include "core/sample.h"

namespace trainplan::models {

// The samples with a metric, pooled by (batch, workers, epochs), in the order
// of each configuration's first sample.
class PooledMetricSamples {
 public:
  explicit PooledMetricSamples(const std::vector<Sample>& samples);

  struct Point {
    double batch = 0;
    int workers = 0;
    double epochs = 0;
    double y = 0;     // mean metric of the configuration's samples
    double w = 0;     // their count
    double ss = 0;    // their sum of squared deviations from y (0 for one sample)
    double m3 = 0, m4 = 0;  // sums of their deviations' cubes and fourth powers (0 for one sample)
    double lo = 0, hi = 0;  // their least and largest metric
    size_t first = 0; // index of the first of them in the input
    double global_batch() const { return batch * workers; }
  };
  const std::vector<Point>& points() const { return points_; }
  size_t size() const { return points_.size(); }
  // Samples pooled (the sum of the weights).
  size_t samples() const { return n_; }
  // Every pooled metric value, for statistics of the raw values (their range).
  const std::vector<double>& values() const { return all_; }
  // The sum over configuration i's samples of |metric - c|: exactly |y - c| for one sample.
  double abs_dev(size_t i, double c) const;

 private:
  std::vector<Point> points_;
  std::vector<double> all_;
  std::vector<size_t> start_;   // configuration i's sorted values: sorted_[start_[i], start_[i+1])
  std::vector<double> sorted_, cum_;  // cum_[k]: sum of sorted_[start_[i], k] within i's run
  size_t n_ = 0;
};

// One sample per distinct (batch, workers, nodes): what every time model is
// fitted on and scored on (models/config_pooled_time_model.h), since samples
// that differ only in epochs measure one epoch time, and a configuration timed
// by three trials is still one configuration. Each keeps its configuration's
// first sample's fields, with the epochs-weighted mean epoch time of all of
// them (a longer trial measures it better; a row of no epochs, a time trial,
// weighs as one; equal times stay bit-exact) and the largest time_spread any
// of them carries (how well the point is known, on the safe side), in the
// order of the configurations (batch, workers, nodes), so that a fit does not
// depend on the order the rows came in. One worker with its nodes unknown
// (0) is on one node.
SampleSet distinct_time_configs(const SampleSet& s);

// A deterministic, evenly spread choice of at most `m` of `n` items (all of
// them when n <= m): indices round(k (n - 1) / (m - 1)), k = 0..m-1, increasing.
std::vector<size_t> thin_indices(size_t n, size_t m);

}  // namespace trainplan::models
