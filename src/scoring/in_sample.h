// In-sample MRE (equation 12) of a fitted model on the samples it was fitted
// on, scored the one way `fit`, `POST /fit` and the planning benchmark report
// it: the time part on one sample per distinct (batch, workers, nodes), since
// samples that differ only in epochs share an epoch time; the metric part on
// every sample that carries a metric.
#pragma once
#include <cstddef>

#include "core/sample.h"
#include "models/model.h"

namespace trainplan::scoring {

struct InSampleScore {
  double mre = 0;
  size_t n = 0;  // samples scored
};

// Throw std::invalid_argument as scoring::mre does (no sample to score, a
// non-finite prediction).
InSampleScore in_sample_time(const models::TimeModel& m, const SampleSet& samples);
InSampleScore in_sample_metric(const models::MetricModel& m, const SampleSet& samples);

}  // namespace trainplan::scoring
