// A sample set and what is fitted on it, cached: model choices ("auto"
// cross-validation), fitted models and conformal wrappers, by name and
// parameters, and the model a plan is made on. The CLI makes one per call;
// the server keeps one per /fit id, so repeated requests on one id fit
// nothing twice (of conformal wrappers, the 8 used most recently of each
// part). Fits are deterministic, so a cached model predicts what a fresh fit
// would.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "app/planning_model.h"
#include "core/sample.h"
#include "models/performance_model.h"
#include "models/registry.h"
#include "scoring/model_choice.h"
#include "uncertainty/conformal.h"

namespace trainplan::app {

// Not thread-safe: callers serialise calls on one source (the server holds a mutex per id).
class ModelSource {
 public:
  // Every model fitted here is made with `params`.
  explicit ModelSource(SampleSet samples, models::ModelParams params = {})
      : samples_(std::move(samples)), params_(std::move(params)) {}
  const SampleSet& samples() const { return samples_; }
  const models::ModelParams& params() const { return params_; }
  // scoring::choose_models(time, metric, samples), cached by the two names.
  const scoring::ModelChoice& choose(const std::string& time_name, const std::string& metric_name);
  // Registered models wrapped in K-fold conformal intervals, fitted on the samples.
  std::shared_ptr<models::TimeModel> conformal_time(const std::string& name, uncertainty::ConformalParams p);
  std::shared_ptr<models::MetricModel> conformal_metric(const std::string& name, uncertainty::ConformalParams p);
  // Conformal wrappers held now, both parts together.
  size_t conformal_models_held() const { return times_.size() + metrics_.size(); }
  // models::fit_performance_model(time, metric, samples).
  std::shared_ptr<const models::FittedPerformanceModel> performance(const std::string& time_name,
                                                                    const std::string& metric_name);
  // The model to plan on (app/planning_model.h): the point model, wrapped in
  // conformal intervals with o.conformal, read on its pessimistic side at
  // o.confidence. o.model_params is not read: every model here is made with
  // params().
  PlanningModel planning_model(const std::string& time_name, const std::string& metric_name,
                               const PlanningModelOptions& o);

 private:
  SampleSet samples_;
  models::ModelParams params_;
  std::map<std::string, scoring::ModelChoice> choices_;
  // Conformal wrappers by model and parameters, with when each was last
  // used: at most kConformalKept of each part, since a request may name any
  // seed or fold count and each wrapper holds its K fold fits.
  static constexpr size_t kConformalKept = 8;
  std::map<std::string, std::pair<std::shared_ptr<models::TimeModel>, long>> times_;
  std::map<std::string, std::pair<std::shared_ptr<models::MetricModel>, long>> metrics_;
  long use_clock_ = 0;
  std::map<std::string, std::shared_ptr<const models::FittedPerformanceModel>> performance_;
};

}  // namespace trainplan::app
