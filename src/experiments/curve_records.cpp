#include "experiments/curve_records.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "plan/problem.h"

namespace trainplan::experiments {

CurveRecords curve_records(const io::ValidationCurve& curve, long dataset_size, MetricDirection direction,
                           const RecordsParams& params) {
  if (dataset_size <= 0) throw InputError(curve.path, 0, "dataset_size", "must be > 0 to convert iterations to epochs");
  if (curve.rows.size() < kMinRecordsEvaluations)
    throw InputError(curve.path, 0, "metric",
                     fmt::format("needs at least {} evaluations to tell records from noise", kMinRecordsEvaluations));
  if (!(params.from >= 0 && params.from < params.to && params.to <= 1))
    throw InputError(curve.path, 0, "window", "needs 0 <= from < to <= 1");
  auto better = [direction](double a, double b) { return metric_better(a, b, direction); };
  const double per_iteration = static_cast<double>(curve.global_batch) / static_cast<double>(dataset_size);
  const size_t n = curve.rows.size();

  // The running best, and how far along its own range it is at each evaluation.
  std::vector<double> best(n);
  best[0] = curve.rows[0].metric;
  for (size_t k = 1; k < n; ++k) best[k] = better(curve.rows[k].metric, best[k - 1]) ? curve.rows[k].metric : best[k - 1];
  const double range = best[n - 1] - best[0];
  auto share = [&](size_t k) { return range == 0 ? 1.0 : (best[k] - best[0]) / range; };
  size_t k_from = 0, k_to = n - 1;
  while (k_from < n - 1 && share(k_from) < params.from) ++k_from;
  while (k_to > 0 && share(k_to - 1) >= params.to) --k_to;
  k_to = std::max(k_to, k_from);

  CurveRecords out;
  out.global_batch = curve.global_batch;
  auto epoch = [&](size_t k) { return curve.rows[k].iteration * per_iteration; };
  out.last_epoch = epoch(n - 1);
  out.window_from = epoch(k_from);
  out.window_to = epoch(k_to);
  std::vector<double> record_epochs = {out.window_from};  // the window opens on a record (or the first evaluation)
  int worse = 0;
  for (size_t k = k_from + 1; k <= k_to; ++k) {
    ++out.window_steps;
    worse += better(curve.rows[k - 1].metric, curve.rows[k].metric);
    if (best[k] != best[k - 1]) {
      ++out.window_records;
      record_epochs.push_back(epoch(k));
    }
  }
  out.worse_steps = out.window_steps ? static_cast<double>(worse) / out.window_steps : 0.0;
  for (size_t i = 1; i < record_epochs.size(); ++i) {
    const double flat = record_epochs[i] - record_epochs[i - 1];
    out.mean_flat_epochs += flat;
    out.longest_flat_epochs = std::max(out.longest_flat_epochs, flat);
  }
  if (out.window_records > 0) out.mean_flat_epochs /= out.window_records;
  return out;
}

}  // namespace trainplan::experiments
