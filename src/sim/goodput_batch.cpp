#include "sim/goodput_batch.h"

#include <algorithm>
#include <cmath>

#include "sim/app_model.h"

namespace trainplan::sim {

std::vector<int> candidate_batches(const AppModel& app, int g) {
  std::vector<int> c;
  double lo = std::max<double>(app.init_batch(), static_cast<double>(g) * app.min_local());
  double hi = app.max_batch();
  if (lo > hi) return c;
  for (double b = lo; b < hi * 1.0001; b *= std::sqrt(2.0)) c.push_back(static_cast<int>(std::lround(b)));
  if (c.empty() || c.back() != static_cast<int>(hi)) c.push_back(static_cast<int>(hi));
  return c;
}

GoodputBatch goodput_batch(const SchedInput& in, const JobState& j, int g, RateTable& table) {
  GoodputBatch b;
  if (j.rigid()) {
    if (g == j.spec->gpus) b = {in.est->rate(j, g, 0), 0};
    return b;
  }
  for (int batch : candidate_batches(*j.spec->app, g)) {
    double r = table.rate(*in.est, j, g, batch);
    if (r > b.rate) b = {r, batch};
  }
  return b;
}

int batch_to_run(const SchedInput& in, const JobState& j, int g, const GoodputBatch& best, RateTable& table) {
  if (j.gpus > 0 && !j.rigid() && j.batch > 0 && g == j.gpus) {
    const double keep = table.rate(*in.est, j, j.gpus, j.batch);
    if (keep > 0 && j.remaining() / keep - j.remaining() / best.rate <= in.restart_delay) return j.batch;
  }
  return best.batch;
}

}  // namespace trainplan::sim
