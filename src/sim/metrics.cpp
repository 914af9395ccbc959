#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace trainplan::sim {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

Summary summarize(const SimResult& r) {
  Summary s;
  s.jobs = r.jobs.size();
  if (r.jobs.empty()) return s;
  std::vector<double> jct, gpu_seconds;
  double first = 1e300, last = -1e300, met = 0;
  for (const auto& j : r.jobs) {
    jct.push_back(j.jct);
    gpu_seconds.push_back(j.gpu_seconds);
    first = std::min(first, j.arrival);
    last = std::max(last, j.finish);
    s.restarts += j.restarts;
    if (j.met_deadline) {
      ++s.deadlines;
      met += *j.met_deadline ? 1 : 0;
    }
  }
  // Summed in sorted order: the same jobs in another order (a workload's rows
  // shuffled) give the same figures to the last digit.
  auto sorted_sum = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    return sum;
  };
  const double gpu_s = sorted_sum(gpu_seconds);
  s.avg_jct = sorted_sum(jct) / static_cast<double>(jct.size());
  s.median_jct = percentile(jct, 0.5);
  s.p99_jct = percentile(jct, 0.99);
  s.makespan = last - first;
  s.gpu_hours = gpu_s / 3600.0;
  s.utilisation = s.makespan > 0 && r.total_gpus > 0 ? gpu_s / (r.total_gpus * s.makespan) : 0;
  s.deadline_met = s.deadlines ? met / static_cast<double>(s.deadlines) : 0;
  return s;
}

}  // namespace trainplan::sim
