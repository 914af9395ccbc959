#include "uncertainty/metric_run_pinned.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "numerics/pava.h"

namespace trainplan::uncertainty {

RunPinnedMetricModel::RunPinnedMetricModel(std::unique_ptr<models::MetricModel> inner) : inner_(std::move(inner)) {
  if (!inner_) throw InputError("run pinning needs a metric model to wrap");
}

void RunPinnedMetricModel::fit(const SampleSet& samples) {
  inner_->fit(samples);
  runs_.clear();
  const bool increasing = samples.direction == MetricDirection::kMax;
  for (const auto& [key, trials] : samples.metric_runs()) {
    std::vector<double> e, y;
    for (const auto& [epochs, metric] : trials) e.push_back(epochs), y.push_back(metric);
    numerics::PooledPoints p = numerics::pool_points(e, y, {});
    Run run;
    run.epochs = p.x;
    run.measured = numerics::pava(p.y, p.w, increasing);
    for (double e : run.epochs) run.model.push_back(inner_->predict(key.first, key.second, e));
    runs_.emplace(key, std::move(run));
  }
}

double RunPinnedMetricModel::predict(double batch, int workers, double epochs) const {
  const double m = inner_->predict(batch, workers, epochs);
  auto it = runs_.find({batch, workers});
  if (it == runs_.end() || !std::isfinite(m)) return m;
  const Run& r = it->second;
  if (epochs <= r.epochs.front()) return m + (r.measured.front() - r.model.front());
  if (epochs >= r.epochs.back()) return m + (r.measured.back() - r.model.back());
  const size_t hi = static_cast<size_t>(std::upper_bound(r.epochs.begin(), r.epochs.end(), epochs) - r.epochs.begin());
  const size_t lo = hi - 1;  // r.epochs[lo] <= epochs < r.epochs[hi]
  const double dm = r.model[hi] - r.model[lo];
  const double dy = r.measured[hi] - r.measured[lo];
  // The model's shape between the two samples, rescaled through them. Needs
  // the model to move between them, and in the samples' direction (a model
  // monotone in epochs always does when the samples differ).
  const double tol = 1e-12 * std::max({1.0, std::abs(r.model[lo]), std::abs(r.model[hi])});
  if (std::abs(dm) > tol && dm * dy >= 0) {
    const double t = std::clamp((m - r.model[lo]) / dm, 0.0, 1.0);
    return r.measured[lo] + t * dy;
  }
  // Flat model (or one moving against the samples): the residual linear in ln e.
  const double u = std::log(epochs / r.epochs[lo]) / std::log(r.epochs[hi] / r.epochs[lo]);
  const double res_lo = r.measured[lo] - r.model[lo], res_hi = r.measured[hi] - r.model[hi];
  return m + res_lo + u * (res_hi - res_lo);
}

std::string RunPinnedMetricModel::describe() const {
  return inner_->describe() +
         fmt::format("\n  pinned to the samples of its {} measured runs (the model's shape between a run's "
                     "samples, shifted by its residual before the first and past the last)",
                     runs_.size());
}

}  // namespace trainplan::uncertainty
