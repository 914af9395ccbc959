// Summary statistics of measured step times, as a benchmark harness reports
// them: the median with a distribution-free 95% interval, the spread, and the
// steps that stand far from the rest (a sign of interference). Free of torch.
#pragma once
#include <cstdint>
#include <vector>

namespace trainplan::train {

struct StepTimeSummary {
  int64_t n = 0;              // timed steps
  double median_s = 0;
  double ci95_low_s = 0;      // order statistics bracketing the median with
  double ci95_high_s = 0;     //   about 95% confidence (binomial, normal approx.)
  double p10_s = 0, p90_s = 0;
  double mean_s = 0;
  int64_t outliers = 0;       // steps > median + 5 robust SDs and > 1.2 x median
  // Half the interval's width over the median: the relative precision.
  double ci95_relative_half_width() const { return median_s > 0 ? (ci95_high_s - ci95_low_s) / 2 / median_s : 0; }
};

// Summarises `seconds` (any order; empty gives n = 0 and zeros).
// The interval is [x_(l), x_(u)] with l = floor(n/2 - 0.98 sqrt(n)) and
// u = ceil(1 + n/2 + 0.98 sqrt(n)) (1-based, clamped to 1..n): for n >= 10
// it covers the true median with probability about 95% or more, whatever the
// distribution. A robust SD is 1.4826 x the median absolute deviation.
StepTimeSummary summarise_step_times(std::vector<double> seconds);

}  // namespace trainplan::train
