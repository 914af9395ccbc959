#include "train/step_timing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trainplan::train {
namespace {

// The q-quantile of sorted values, linear between order statistics.
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(pos)), hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

StepTimeSummary summarise_step_times(std::vector<double> seconds) {
  StepTimeSummary s;
  s.n = int64_t(seconds.size());
  if (seconds.empty()) return s;
  std::sort(seconds.begin(), seconds.end());
  const double n = double(seconds.size());
  s.median_s = quantile(seconds, 0.5);
  s.p10_s = quantile(seconds, 0.1);
  s.p90_s = quantile(seconds, 0.9);
  s.mean_s = std::accumulate(seconds.begin(), seconds.end(), 0.0) / n;
  const double reach = 0.98 * std::sqrt(n);  // 1.96 sqrt(n) / 2
  const int64_t lo = std::clamp<int64_t>(int64_t(std::floor(n / 2 - reach)), 1, s.n);
  const int64_t hi = std::clamp<int64_t>(int64_t(std::ceil(1 + n / 2 + reach)), 1, s.n);
  s.ci95_low_s = seconds[size_t(lo - 1)];
  s.ci95_high_s = seconds[size_t(hi - 1)];

  std::vector<double> deviation(seconds.size());
  std::transform(seconds.begin(), seconds.end(), deviation.begin(),
                 [&](double t) { return std::abs(t - s.median_s); });
  std::sort(deviation.begin(), deviation.end());
  const double robust_sd = 1.4826 * quantile(deviation, 0.5);
  const double far = std::max(s.median_s + 5 * robust_sd, 1.2 * s.median_s);
  s.outliers = std::count_if(seconds.begin(), seconds.end(), [&](double t) { return t > far; });
  return s;
}

}  // namespace trainplan::train
