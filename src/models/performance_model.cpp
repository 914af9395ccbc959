#include "models/performance_model.h"

#include <cmath>

#include "core/error.h"
#include "models/registry.h"

namespace trainplan::models {

std::optional<double> FittedPerformanceModel::epoch_time(int batch, int workers, int nodes) const {
  double t = time_->predict(batch, workers, nodes);
  if (!std::isfinite(t) || t <= 0) return std::nullopt;
  return t;
}

std::optional<double> FittedPerformanceModel::metric(int batch, int workers, double epochs) const {
  if (!metric_) return std::nullopt;
  double m = metric_->predict(batch, workers, epochs);
  if (!std::isfinite(m)) return std::nullopt;
  return m;
}

std::string FittedPerformanceModel::name() const {
  std::string t = time_->name(), m = metric_ ? metric_->name() : "none";
  return t == m ? t : t + "+" + m;
}

std::shared_ptr<FittedPerformanceModel> fit_performance_model(const std::string& time_name,
                                                              const std::string& metric_name,
                                                              const SampleSet& samples,
                                                              const ModelParams& params) {
  auto& reg = ModelRegistry::instance();
  std::shared_ptr<TimeModel> tm = reg.make_time(time_name, params);
  tm->fit(samples);
  std::shared_ptr<MetricModel> mm;
  if (samples.has_metric()) {
    mm = reg.make_metric(metric_name, params);
    mm->fit(samples);
  }
  return std::make_shared<FittedPerformanceModel>(tm, mm, samples.direction);
}

}  // namespace trainplan::models
