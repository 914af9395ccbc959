#include "app/model_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace trainplan::app {

namespace {

std::string conformal_key(const std::string& name, const uncertainty::ConformalParams& p) {
  return fmt::format("{}|{}|{}|{}", name, p.folds, p.seed, p.pin_runs);
}

// The model cached under `key`, or `make()`'s (fitted: nothing is kept when
// it throws), kept in place of the least recently used past `most`.
template <class Model, class Make>
std::shared_ptr<Model> cached(std::map<std::string, std::pair<std::shared_ptr<Model>, long>>& cache, long& clock,
                              const std::string& key, size_t most, Make make) {
  if (auto it = cache.find(key); it != cache.end()) {
    it->second.second = ++clock;
    return it->second.first;
  }
  std::shared_ptr<Model> fresh = make();
  if (cache.size() >= most)
    cache.erase(std::min_element(cache.begin(), cache.end(),
                                 [](const auto& a, const auto& b) { return a.second.second < b.second.second; }));
  cache.emplace(key, std::make_pair(fresh, ++clock));
  return fresh;
}

}  // namespace

const scoring::ModelChoice& ModelSource::choose(const std::string& time_name, const std::string& metric_name) {
  std::string key = time_name + "|" + metric_name;
  auto it = choices_.find(key);
  if (it == choices_.end()) it = choices_.emplace(key, scoring::choose_models(time_name, metric_name, samples_, 5, 1, params_)).first;
  return it->second;
}

std::shared_ptr<models::TimeModel> ModelSource::conformal_time(const std::string& name, uncertainty::ConformalParams p) {
  return cached(times_, use_clock_, conformal_key(name, p), kConformalKept, [&] {
    std::shared_ptr<models::TimeModel> fresh = uncertainty::conformal_time_model(name, p, params_);
    fresh->fit(samples_);
    return fresh;
  });
}

std::shared_ptr<models::MetricModel> ModelSource::conformal_metric(const std::string& name, uncertainty::ConformalParams p) {
  return cached(metrics_, use_clock_, conformal_key(name, p), kConformalKept, [&] {
    std::shared_ptr<models::MetricModel> fresh = uncertainty::conformal_metric_model(name, p, params_);
    fresh->fit(samples_);
    return fresh;
  });
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
