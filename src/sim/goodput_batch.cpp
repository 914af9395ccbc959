#include "sim/goodput_batch.h"

#include <algorithm>
#include <cmath>

#include "sim/app_model.h"

namespace trainplan::sim {
namespace {

// Candidate global batches for g GPUs: from the larger of the initial batch
// and g x the least local batch, by factors of sqrt(2), to the largest batch.
std::vector<int> candidate_batches(const AppModel& app, int g) {
  std::vector<int> c;
  double lo = std::max<double>(app.init_batch(), static_cast<double>(g) * app.min_local());
  double hi = app.max_batch();
  if (lo > hi) return c;
  for (double b = lo; b < hi * 1.0001; b *= std::sqrt(2.0)) c.push_back(static_cast<int>(std::lround(b)));
  if (c.empty() || c.back() != static_cast<int>(hi)) c.push_back(static_cast<int>(hi));
  return c;
}

}  // namespace

int most_gpus(const JobState& j, int total_gpus) { return most_gpus_on(j, j.group, total_gpus); }

int most_gpus_on(const JobState& j, int group, int group_gpus) {
  if (j.rigid()) return j.spec->gpus;
  const AppModel& app = *j.spec->app_on(group);
  return std::min(group_gpus, app.max_gpus(app.max_batch()));
}

GoodputBatch GoodputTable::at_on(const SchedInput& in, const JobState& j, int group, int g) {
  Entry& e = entries_[j.id];
  if (e.epoch != j.epoch) {
    e.epoch = j.epoch;
    for (auto& by_gpus : e.by_group) by_gpus.clear();  // each keeps its capacity
  }
  if (e.by_group.size() <= size_t(group)) e.by_group.resize(size_t(group) + 1);
  auto& by_gpus = e.by_group[size_t(group)];
  if (int(by_gpus.size()) <= g) by_gpus.resize(size_t(g) + 1);
  std::optional<GoodputBatch>& known = by_gpus[size_t(g)];
  if (known) return *known;
  GoodputBatch b;
  if (j.rigid()) {
    if (g == j.spec->gpus) b = {in.est->rate_on(j, group, g, 0), 0};
  } else {
    for (int batch : candidate_batches(*j.spec->app_on(group), g)) {
      const double r = rates_.rate_on(*in.est, j, group, g, batch);
      if (r > b.rate) b = {r, batch};
    }
  }
  known = b;
  return b;
}

int GoodputTable::batch_to_run_on(const SchedInput& in, const JobState& j, int group, int g) {
  const GoodputBatch best = at_on(in, j, group, g);
  if (j.gpus > 0 && !j.rigid() && j.batch > 0 && g == j.gpus && group == j.group) {
    const double keep = rates_.rate_on(*in.est, j, group, j.gpus, j.batch);
    if (keep > 0 && j.remaining() / keep - j.remaining() / best.rate <= in.restart_delay) return j.batch;
  }
  return best.batch;
}

}  // namespace trainplan::sim
