#include "app/planning_model.h"

#include "uncertainty/conformal.h"
#include "uncertainty/measured_bounds.h"

namespace trainplan::app {

PlanningModel fit_planning_model(const std::string& time_model, const std::string& metric_model,
                                 const SampleSet& samples, const PlanningModelOptions& o) {
  PlanningModel out;
  if (o.conformal) {
    uncertainty::ConformalParams cp;
    cp.seed = o.seed;
    cp.pin_runs = o.pin_runs;
    std::shared_ptr<models::TimeModel> tm = uncertainty::conformal_time_model(time_model, cp, o.model_params);
    std::shared_ptr<models::MetricModel> mm = uncertainty::conformal_metric_model(metric_model, cp, o.model_params);
    tm->fit(samples);
    mm->fit(samples);
    out.fitted = std::make_shared<models::FittedPerformanceModel>(tm, mm, samples.direction);
  } else {
    out.fitted = models::fit_performance_model(time_model, metric_model, samples, o.model_params);
  }
  out.planned = planned_side(out.fitted, samples, o);
  return out;
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
