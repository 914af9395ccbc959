#include "app/planning_model.h"

#include "app/model_source.h"
#include "uncertainty/measured_bounds.h"

namespace trainplan::app {

PlanningModel fit_planning_model(const std::string& time_model, const std::string& metric_model,
                                 const SampleSet& samples, const PlanningModelOptions& o) {
  ModelSource source(samples, o.model_params);
  return source.planning_model(time_model, metric_model, o);
}

std::shared_ptr<const models::PerformanceModel> planned_side(
    std::shared_ptr<const models::FittedPerformanceModel> fitted, const SampleSet& samples,
    const PlanningModelOptions& o) {
  // A point plan is held to the measurements too: no model may promise a
  // configuration more than a longer measured run of it reached.
  if (o.confidence == 0)
    return o.measured_bounds ? std::make_shared<uncertainty::MeasuredBoundsModel>(fitted, samples)
                             : std::shared_ptr<const models::PerformanceModel>(fitted);
  std::shared_ptr<const models::PerformanceModel> point = o.misfit_shift ? fitted : nullptr;
  std::shared_ptr<const models::PerformanceModel> out =
      std::make_shared<uncertainty::PessimisticModel>(std::move(fitted), o.confidence, o.probe_batch, o.bounds,
                                                      samples.times_predicted_log_sd.value_or(0));
  // Held to the profiled trials: a trial that met the target vouches for its
  // configuration where the interval alone might not (uncertainty/measured_bounds.h).
  if (o.measured_bounds) out = std::make_shared<uncertainty::MeasuredBoundsModel>(out, samples, point);
  return out;
}

}  // namespace trainplan::app
