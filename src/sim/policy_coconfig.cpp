// coconfig (ours): at every scheduling point, choose each job's GPUs AND
// global batch with trainplan's models, to minimise average JCT at a low
// GPU cost.
//  1. For each GPU count g, the batch with the highest estimated goodput
//     (throughput x statistical efficiency) among candidate batches that
//     the application's measured range allows.
//  2. Each job's efficient size g*: GPUs are added while one more GPU (or a
//     few, to step over a placement dip) adds at least `min_gain` of the
//     job's current goodput per GPU: beyond that the cost grows faster
//     than the job speeds up.
//  3. Shortest estimated remaining time (at g*) first: each job gets g*
//     while GPUs last, then spare GPUs go where they cut remaining time most.
//  4. A running job keeps its batch unless the change saves more than the
//     restart delay, so that re-planning does not thrash.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/app_model.h"
#include "sim/marginal_gain.h"
#include "sim/policy.h"
#include "sim/rate_table.h"

namespace trainplan::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class Coconfig : public Policy {
 public:
  explicit Coconfig(const PolicyOptions& o) : min_gain_(o.coconfig_min_gain) {}
  std::string name() const override { return "coconfig"; }

  struct Best {
    double rate = 0;
    int batch = 0;
  };

  // Candidate global batches for g GPUs: log-spaced over the feasible range.
  static std::vector<int> candidates(const AppModel& app, int g) {
    std::vector<int> c;
    double lo = std::max<double>(app.init_batch(), static_cast<double>(g) * app.min_local());
    double hi = app.max_batch();
    if (lo > hi) return c;
    for (double b = lo; b < hi * 1.0001; b *= std::sqrt(2.0)) c.push_back(static_cast<int>(std::lround(b)));
    if (c.empty() || c.back() != static_cast<int>(hi)) c.push_back(static_cast<int>(hi));
    return c;
  }

  Best best(const SchedInput& in, const JobState& j, int g) {
    Best b;
    if (j.rigid()) {
      if (g == j.spec->gpus) b = {in.est->rate(j, g, 0), 0};
      return b;
    }
    for (int batch : candidates(*j.spec->app, g)) {
      double r = table_.rate(*in.est, j, g, batch);
      if (r > b.rate) b = {r, batch};
    }
    return b;
  }

  std::vector<Decision> schedule(const SchedInput& in) override {
    const auto& jobs = *in.jobs;
    size_t n = jobs.size();
    std::vector<std::vector<Best>> bests(n);  // bests[i][g], filled lazily up to what is needed
    auto best_at = [&](size_t i, int g) -> const Best& {
      auto& v = bests[i];
      while (static_cast<int>(v.size()) <= g) v.push_back(v.empty() ? Best{} : best(in, *jobs[i], static_cast<int>(v.size())));
      return v[g];
    };
    auto cap = [&](size_t i) {
      const JobState& j = *jobs[i];
      if (j.rigid()) return j.spec->gpus;
      return std::min(in.total_gpus, std::max(1, j.spec->app->max_batch() / j.spec->app->min_local()));
    };
    // 2. Efficient sizes.
    std::vector<int> want(n, 0);
    std::vector<double> t_want(n, kInf);
    for (size_t i = 0; i < n; ++i) {
      const JobState& j = *jobs[i];
      int g = j.rigid() ? j.spec->gpus : 1;
      if (!j.rigid()) {
        while (true) {
          double r = best_at(i, g).rate;
          int next = 0;
          for (int h = g + 1; h <= std::min(cap(i), g + 4); ++h)
            if (best_at(i, h).rate - r >= min_gain_ * (h - g) * r / g) {
              next = h;
              break;
            }
          if (!next) break;
          g = next;
        }
      }
      double r = best_at(i, g).rate;
      want[i] = g;
      t_want[i] = r > 0 ? j.remaining() / r : kInf;
    }
    // 3. Shortest remaining time first.
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t_want[a] < t_want[b]; });
    std::vector<int> alloc(n, 0);
    int free = in.total_gpus;
    for (size_t i : order) {
      if (free <= 0) break;
      if (!std::isfinite(t_want[i])) continue;
      int g = std::min(want[i], free);
      if (jobs[i]->rigid() && g < want[i]) continue;
      while (g > 0 && best_at(i, g).rate <= 0) --g;
      if (g <= 0) continue;
      alloc[i] = g;
      free -= g;
    }
    // Spare GPUs: largest drop in remaining time.
    give_gpus_by_marginal_gain(alloc, free, [&](size_t i) {
      if (alloc[i] == 0 || jobs[i]->rigid() || alloc[i] >= cap(i)) return 0.0;
      double r0 = best_at(i, alloc[i]).rate, r1 = best_at(i, alloc[i] + 1).rate;
      return r1 > r0 && r0 > 0 ? jobs[i]->remaining() / r0 - jobs[i]->remaining() / r1 : 0.0;
    });
    // 4. Decisions; keep a running job's configuration unless changing it pays for the restart.
    std::vector<Decision> out;
    for (size_t i : order) {
      if (alloc[i] == 0) continue;
      const JobState& j = *jobs[i];
      int g = alloc[i], b = best_at(i, g).batch;
      if (j.gpus > 0 && !j.rigid() && j.batch > 0) {
        double r_keep = table_.rate(*in.est, j, j.gpus, j.batch);
        double r_new = best_at(i, g).rate;
        if (g == j.gpus && r_keep > 0 && j.remaining() / r_keep - j.remaining() / r_new <= in.restart_delay) b = j.batch;
      }
      out.push_back({j.id, g, b});
    }
    return out;
  }

 private:
  double min_gain_;
  RateTable table_;
};

PolicyRegistrar reg("coconfig",
                    "ours: re-plan GPUs and batch of every job with the models (goodput-optimal batch, efficient GPU "
                    "count, shortest remaining time first)",
                    [](const PolicyOptions& o) { return std::make_unique<Coconfig>(o); });

}  // namespace
}  // namespace trainplan::sim
