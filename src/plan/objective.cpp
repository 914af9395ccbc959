#include "plan/objective.h"

#include <algorithm>
#include <cmath>

#include "core/cancel.h"

namespace trainplan::plan {

int max_epochs_within(const PlanProblem& p, double epoch_time_s) {
  if (!(epoch_time_s > 0)) return 0;
  double by_deadline = std::floor(p.deadline_s / epoch_time_s);
  // Guard against rounding: e * t must not exceed the deadline.
  long e = static_cast<long>(std::min<double>(by_deadline, p.space.max_epochs));
  while (e > 0 && e * epoch_time_s > p.deadline_s) --e;
  return static_cast<int>(std::max(0L, e));
}

static Candidate make(const PlanProblem& p, int b, int r, int nodes, double t, int e, double m) {
  (void)p;
  Candidate c;
  c.config = Config{b, r, e};
  c.nodes = nodes;
  c.epoch_time_s = t;
  c.total_time_s = e * t;
  c.metric = m;
  c.cost = r * c.total_time_s;
  return c;
}

std::optional<Candidate> evaluate_cell(const models::PerformanceModel& m, const PlanProblem& p, int batch, int workers,
                                       EpochSearch search) {
  check_cancelled();
  if (p.space.diverged.count({batch, workers})) return std::nullopt;
  int nodes = nodes_for(workers, p.space.workers_per_node);
  auto t = m.epoch_time(batch, workers, nodes);
  if (!t || !(*t > 0)) return std::nullopt;
  int emax = max_epochs_within(p, *t);
  if (emax < 1) return std::nullopt;
  MetricDirection d = m.direction();
  auto ok = [&](int e) -> std::optional<double> {
    auto v = m.metric(batch, workers, e);
    if (v && meets(*v, p.target, d)) return v;
    return std::nullopt;
  };
  if (search == EpochSearch::kLinear) {
    for (int e = 1; e <= emax; ++e) {
      if (e % 1024 == 0) check_cancelled();
      if (auto v = ok(e)) return make(p, batch, workers, nodes, *t, e, *v);
    }
    return std::nullopt;
  }
  auto top = ok(emax);
  if (!top) return std::nullopt;
  int lo = 0, hi = emax;  // invariant: ok(hi), and lo == 0 or !ok(lo)
  double at_hi = *top;
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (auto v = ok(mid)) {
      hi = mid;
      at_hi = *v;
    } else {
      lo = mid;
    }
  }
  return make(p, batch, workers, nodes, *t, hi, at_hi);
}

std::optional<Candidate> evaluate_config(const models::PerformanceModel& m, const PlanProblem& p, const Config& c) {
  if (p.space.diverged.count({c.batch, c.workers})) return std::nullopt;
  int nodes = nodes_for(c.workers, p.space.workers_per_node);
  auto t = m.epoch_time(c.batch, c.workers, nodes);
  if (!t) return std::nullopt;
  auto v = m.metric(c.batch, c.workers, c.epochs);
  if (!v) return std::nullopt;
  return make(p, c.batch, c.workers, nodes, *t, c.epochs, *v);
}

void Leaderboard::offer(const Candidate& c) {
  if (top_.size() == keep_ && !preferred(c, top_.back(), dir_)) return;
  auto it = std::upper_bound(top_.begin(), top_.end(), c,
                             [&](const Candidate& a, const Candidate& b) { return preferred(a, b, dir_); });
  top_.insert(it, c);
  if (top_.size() > keep_) top_.pop_back();
}

void Leaderboard::fill(PlanResult& r) const {
  r.best = top_.front();
  r.alternatives.assign(top_.begin() + 1, top_.end());
}

}  // namespace trainplan::plan
