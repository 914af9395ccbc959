#include "app/model_source.h"

#include <fmt/format.h>

namespace trainplan::app {

namespace {

std::string conformal_key(const std::string& name, const uncertainty::ConformalParams& p) {
  return fmt::format("{}|{}|{}|{}", name, p.folds, p.seed, p.pin_runs);
}

}  // namespace

const scoring::ModelChoice& ModelSource::choose(const std::string& time_name, const std::string& metric_name) {
  std::string key = time_name + "|" + metric_name;
  auto it = choices_.find(key);
  if (it == choices_.end()) it = choices_.emplace(key, scoring::choose_models(time_name, metric_name, samples_, 5, 1, params_)).first;
  return it->second;
}

std::shared_ptr<models::TimeModel> ModelSource::conformal_time(const std::string& name, uncertainty::ConformalParams p) {
  auto& m = times_[conformal_key(name, p)];
  if (!m) {
    std::shared_ptr<models::TimeModel> fresh = uncertainty::conformal_time_model(name, p, params_);
    fresh->fit(samples_);
    m = fresh;  // only once the fit succeeded
  }
  return m;
}

std::shared_ptr<models::MetricModel> ModelSource::conformal_metric(const std::string& name, uncertainty::ConformalParams p) {
  auto& m = metrics_[conformal_key(name, p)];
  if (!m) {
    std::shared_ptr<models::MetricModel> fresh = uncertainty::conformal_metric_model(name, p, params_);
    fresh->fit(samples_);
    m = fresh;
  }
  return m;
}

std::shared_ptr<const models::FittedPerformanceModel> ModelSource::performance(const std::string& time_name,
                                                                               const std::string& metric_name) {
  auto& m = performance_[time_name + "|" + metric_name];
  if (!m) m = models::fit_performance_model(time_name, metric_name, samples_, params_);
  return m;
}

// ---- predict ---------------------------------------------------------------

PlanningModel ModelSource::planning_model(const std::string& time_name, const std::string& metric_name,
                                          const PlanningModelOptions& o) {
  PlanningModel out;
  if (o.conformal) {
    uncertainty::ConformalParams cp;
    cp.seed = o.seed;
    cp.pin_runs = o.pin_runs;
    std::shared_ptr<const models::TimeModel> tm = conformal_time(time_name, cp);
    std::shared_ptr<const models::MetricModel> mm = conformal_metric(metric_name, cp);
    out.fitted = std::make_shared<models::FittedPerformanceModel>(tm, mm, samples_.direction);
  } else {
    out.fitted = performance(time_name, metric_name);
  }
  out.planned = planned_side(out.fitted, samples_, o);
  return out;
}

}  // namespace trainplan::app
