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
  if (o.confidence == 0) return fitted;
  std::shared_ptr<const models::PerformanceModel> point = o.misfit_shift ? fitted : nullptr;
  std::shared_ptr<const models::PerformanceModel> out =
      std::make_shared<uncertainty::PessimisticModel>(std::move(fitted), o.confidence, o.probe_batch, o.bounds);
  // Held to the profiled trials: a trial that met the target vouches for its
  // configuration where the interval alone might not (uncertainty/measured_bounds.h).
  if (o.measured_bounds) out = std::make_shared<uncertainty::MeasuredBoundsModel>(out, samples, point);
  return out;
}

}  // namespace trainplan::app
