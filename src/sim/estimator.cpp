#include "sim/estimator.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "models/registry.h"
#include "replay/sampler.h"
#include "sim/app_model.h"

namespace trainplan::sim {

double Estimator::remaining_time(const JobState& job, int gpus, int batch) const {
  double r = gpus > 0 ? rate(job, gpus, batch) : 0;
  return r > 0 ? job.remaining() / r : std::numeric_limits<double>::infinity();
}

double OracleEstimator::rate_on(const JobState& job, int group, int gpus, int batch) const {
  if (job.rigid()) return gpus == job.spec->gpus ? 1.0 : 0.0;
  return job.spec->app_on(group)->rate(gpus, 0, batch, job.epoch);
}

FittedEstimator::FittedEstimator(const std::vector<const AppModel*>& apps, const std::string& model, uint64_t seed)
    : model_(model) {
  const auto& entry = models::ModelRegistry::instance().with_time(model);
  for (const AppModel* app : apps) {
    auto drawn = replay::draw_samples(app->oracle(), replay::named_plan("paper", seed));
    std::shared_ptr<models::TimeModel> tm = entry.make_time({});
    tm->fit(drawn.samples);
    fitted_[app] = tm;
  }
}

double FittedEstimator::rate_on(const JobState& job, int group, int gpus, int batch) const {
  if (job.rigid()) return gpus == job.spec->gpus ? 1.0 : 0.0;
  const AppModel* app = job.spec->app_on(group);
  auto it = fitted_.find(app);
  if (it == fitted_.end()) return 0;
  // Accumulation rules do not depend on timing: take them from the app.
  auto ex = app->execute(gpus, 0, batch);
  if (!ex) return 0;
  double n = static_cast<double>(app->oracle().dataset_size());
  int nodes = app->oracle().default_nodes(gpus);
  // TimeModel: seconds per data epoch; a step is atomic * gpus examples.
  double step = it->second->predict(ex->atomic_batch, gpus, nodes) * ex->atomic_batch * gpus / n;
  if (ex->accum_steps > 0) step += ex->accum_steps * it->second->predict(ex->atomic_batch, 1, 1) * ex->atomic_batch / n;
  if (!std::isfinite(step) || step <= 0) return 0;
  return app->gain(ex->batch, job.epoch) / step;
}

}  // namespace trainplan::sim
