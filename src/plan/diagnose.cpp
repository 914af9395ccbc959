#include "plan/diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "core/cancel.h"
#include "core/digits_apart.h"
#include "core/error.h"
#include "plan/objective.h"

namespace trainplan::plan {

static std::string where(const Config& c, int nodes) {
  std::string s = fmt::format("batch {}, {} worker{}, {} epoch{}", c.batch, c.workers, c.workers == 1 ? "" : "s",
                              c.epochs, c.epochs == 1 ? "" : "s");
  if (nodes > 0) s += fmt::format(", {} node{}", nodes, nodes == 1 ? "" : "s");
  return s;
}

// The fewest epochs from 1 to `most` whose metric at (b, r) is near(), by bisection: the metric
// taken as monotone in epochs, and near() true at `most`.
template <typename Near>
static int fewest_epochs_near(const models::PerformanceModel& m, int b, int r, int most, const Near& near) {
  int lo = 1, hi = most;
  while (lo < hi) {
    check_cancelled();
    const int mid = lo + (hi - lo) / 2;
    const auto v = m.metric(b, r, mid);
    if (v && near(*v)) hi = mid;
    else lo = mid + 1;
  }
  return hi;
}

// The configuration's figures, named as the plan's JSON names them.
static std::vector<std::pair<std::string, double>> figures(const Candidate& c) {
  return {{"batch", c.config.batch},         {"workers", c.config.workers}, {"epochs", c.config.epochs},
          {"nodes", c.nodes},                {"epoch_time_s", c.epoch_time_s}, {"total_time_s", c.total_time_s},
          {"metric", c.metric}};
}

Infeasibility diagnose_infeasibility(const models::PerformanceModel& m, const PlanProblem& p) {
  const MetricDirection d = m.direction();
  const char* cmp = d == MetricDirection::kMax ? ">=" : "<=";
  PlanProblem unbounded = p;
  unbounded.deadline_s = std::numeric_limits<double>::infinity();

  long cells = 0, timed = 0, with_metric = 0, diverged = 0;
  std::optional<Candidate> fastest_epoch, best_by_deadline, best_anywhere, fastest_to_target;
  for (int b : p.space.batches)
    for (int r = 1; r <= p.space.max_workers; ++r) {
      ++cells;
      check_cancelled();
      if (p.space.diverged.count({b, r})) {  // never planned: nothing to report of it
        ++diverged;
        continue;
      }
      int nodes = nodes_for(r, p.space.workers_per_node);
      auto t = m.epoch_time(b, r, nodes);
      if (!t || !(*t > 0)) continue;
      ++timed;
      Candidate c;
      c.config = Config{b, r, 1};
      c.nodes = nodes;
      c.epoch_time_s = *t;
      if (!fastest_epoch || *t < fastest_epoch->epoch_time_s) fastest_epoch = c;
      // The metric is taken as monotone in epochs: the last allowed epoch is the best.
      if (auto v = m.metric(b, r, p.space.max_epochs)) {
        ++with_metric;
        Candidate a = c;
        a.config.epochs = p.space.max_epochs;
        a.metric = *v;
        if (!best_anywhere || metric_better(*v, best_anywhere->metric, d)) best_anywhere = a;
      }
      int emax = max_epochs_within(p, *t);
      if (emax >= 1)
        if (auto v = m.metric(b, r, emax)) {
          Candidate a = c;
          a.config.epochs = emax;
          a.metric = *v;
          a.total_time_s = emax * *t;
          if (!best_by_deadline || metric_better(*v, best_by_deadline->metric, d)) best_by_deadline = a;
        }
      if (auto f = evaluate_cell(m, unbounded, b, r))
        if (!fastest_to_target || f->total_time_s < fastest_to_target->total_time_s) fastest_to_target = f;
    }

  if (diverged == cells)
    return {fmt::format("diverged: training diverged (a NaN or infinite metric) in every one of the {} (batch, "
                       "workers) candidates",
                       cells), std::nullopt};
  if (timed == 0)
    return {fmt::format("model: {} gives no epoch time for any of the {} (batch, workers) candidates", m.name(), cells),
            std::nullopt};
  if (with_metric == 0)
    return {fmt::format("model: {} gives no metric for any (batch, workers) candidate", m.name()), std::nullopt};

  // The best metric by the deadline is reached at the most epochs it allows; where the curve has
  // flattened long before, the same metric (to kSameMetric of it) comes far sooner, and that is
  // the configuration worth naming: the cheapest way to it, at its fewest epochs (the metric
  // taken as monotone in epochs, as above).
  std::optional<double> best_metric_by_deadline;  // when the configuration named reaches it only to kSameMetric
  constexpr double kSameMetric = 1e-4;             // relative
  auto near_to = [d](double best) {
    const double tol = kSameMetric * std::max(std::abs(best), 1e-12);
    return [=](double v) { return !metric_better(best, v + (d == MetricDirection::kMax ? tol : -tol), d); };
  };
  // The best metric within the epoch limit likewise: its cell at the fewest epochs that reach it.
  Candidate soonest_best = *best_anywhere;
  {
    Candidate& a = soonest_best;
    const int hi = fewest_epochs_near(m, a.config.batch, a.config.workers, a.config.epochs, near_to(a.metric));
    if (const auto v = m.metric(a.config.batch, a.config.workers, hi); v && hi < a.config.epochs)
      a.config.epochs = hi, a.metric = *v;
    a.total_time_s = a.config.epochs * a.epoch_time_s;
  }
  if (best_by_deadline) {
    const double best = best_by_deadline->metric;
    const auto near_best = near_to(best);
    for (int b : p.space.batches)
      for (int r = 1; r <= p.space.max_workers; ++r) {
        if (p.space.diverged.count({b, r})) continue;
        const int nodes = nodes_for(r, p.space.workers_per_node);
        const auto t = m.epoch_time(b, r, nodes);
        if (!t || !(*t > 0)) continue;
        int hi = max_epochs_within(p, *t);
        const auto at_hi = hi >= 1 ? m.metric(b, r, hi) : std::nullopt;
        if (!at_hi || !near_best(*at_hi)) continue;
        hi = fewest_epochs_near(m, b, r, hi, near_best);
        if (hi * *t < best_by_deadline->total_time_s) {
          Candidate a;
          a.config = Config{b, r, hi};
          a.nodes = nodes;
          a.epoch_time_s = *t;
          a.metric = *m.metric(b, r, hi);
          a.total_time_s = hi * *t;
          best_by_deadline = a;
          best_metric_by_deadline = best;
        }
      }
  }

  // Three figures below 100 s, so that 0.72 and 0.75 do not both read 0.7; tenths above.
  auto secs = [](double v, int digits) {
    return v < 100 ? fmt::format("{:.{}g}", v, digits) : fmt::format("{:.{}f}", v, digits - 2);
  };
  // As many figures as tell a time from the deadline: a shortfall must not read as two equal numbers.
  auto digits_from_deadline = [&](double v) { return digits_apart(secs, v, p.deadline_s, 3, 9); };
  auto apart = [&](double v) { return secs(v, digits_from_deadline(v)); };
  std::string out;
  // A search that is not exhaustive (manual's random tries) can miss a configuration that meets
  // both: then no constraint fails, and none is named.
  if (fastest_to_target && fastest_to_target->total_time_s <= p.deadline_s)
    return {fmt::format("search: a configuration meets both constraints ({}, {} s, metric {:.6g}) but the method did "
                        "not find it: its search is not exhaustive (--method coconfig searches every configuration)",
                        where(fastest_to_target->config, fastest_to_target->nodes),
                        secs(fastest_to_target->total_time_s, 3), fastest_to_target->metric),
            std::nullopt};
  InfeasibleError::Shortfall shortfall;
  if (fastest_to_target)
    shortfall = {"deadline", p.deadline_s, fastest_to_target->total_time_s, "s", figures(*fastest_to_target)};
  else
    shortfall = {"target", p.target, best_anywhere->metric, "metric", figures(soonest_best)};
  if (fastest_to_target) {
    const int digits = digits_from_deadline(fastest_to_target->total_time_s);
    out = fmt::format("deadline: reaching the target {} {} takes at least {} s ({}) but the deadline is {} s", cmp,
                      p.target, secs(fastest_to_target->total_time_s, digits),
                      where(fastest_to_target->config, fastest_to_target->nodes), secs(p.deadline_s, digits));
  } else {
    out = fmt::format("target: {} {} is not reachable at any epoch count <= {} in this space; the best predicted metric "
                      "is {:.6g} ({}){}",
                      cmp, p.target, p.space.max_epochs, best_anywhere->metric,
                      where(best_anywhere->config, best_anywhere->nodes),
                      soonest_best.config.epochs < best_anywhere->config.epochs
                          ? fmt::format("; to within {:g}% of it soonest: {:.6g} ({}, {} s)", 100 * kSameMetric,
                                        soonest_best.metric, where(soonest_best.config, soonest_best.nodes),
                                        secs(soonest_best.total_time_s, 3))
                          : "");
  }
  if (best_by_deadline && best_metric_by_deadline) {
    out += fmt::format("\n  best metric reachable by the deadline: {:.6g}; to within {:g}% of it soonest: {:.6g} ({}, "
                       "{} s)",
                       *best_metric_by_deadline, 100 * kSameMetric, best_by_deadline->metric,
                       where(best_by_deadline->config, best_by_deadline->nodes), apart(best_by_deadline->total_time_s));
  } else if (best_by_deadline) {
    out += fmt::format("\n  best metric reachable by the deadline: {:.6g} ({}, {} s)", best_by_deadline->metric,
                       where(best_by_deadline->config, best_by_deadline->nodes), apart(best_by_deadline->total_time_s));
  } else {
    out += fmt::format("\n  no configuration finishes even one epoch by the deadline: the fastest epoch takes {} s ({})",
                       apart(fastest_epoch->epoch_time_s), where(fastest_epoch->config, fastest_epoch->nodes));
  }
  if (fastest_to_target)
    out += fmt::format("\n  shortest time that reaches the target: {} s ({})", apart(fastest_to_target->total_time_s),
                       where(fastest_to_target->config, fastest_to_target->nodes));
  else
    out += "\n  the target is unreachable at any epoch count within the space, whatever the deadline";
  return {out, shortfall};
}

std::string infeasibility_report(const models::PerformanceModel& m, const PlanProblem& p) {
  return diagnose_infeasibility(m, p).report;
}

void throw_infeasible(const models::PerformanceModel& m, const PlanProblem& p, const std::string& method) {
  auto found = diagnose_infeasibility(m, p);
  const std::string what = method + ": no configuration meets both constraints\n" + found.report;
  throw InfeasibleError(what, std::move(found.shortfall));
}

}  // namespace trainplan::plan
