#include "models/metric_optimus.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "models/pooled_samples.h"
#include "models/registry.h"

namespace trainplan::models {

void OptimusMetricModel::fit(const SampleSet& samples) {
  // A fit that throws leaves no earlier fit's curves beside this one's loss.
  groups_.clear();
  // Samples of one configuration pooled: one point, weighted by their count.
  const PooledMetricSamples pooled(samples.samples);
  if (pooled.size() == 0) throw InputError(samples.source, 0, "metric", "no sample carries a metric to fit");
  loss_ = MetricLoss::for_values(samples.direction, pooled.values());
  n_ = samples.dataset_size ? double(*samples.dataset_size) : 1.0;
  using Point = PooledMetricSamples::Point;
  std::vector<Point> rows = pooled.points();
  std::sort(rows.begin(), rows.end(), [](const Point& a, const Point& b) { return a.global_batch() < b.global_batch(); });

  // Pool consecutive global batches until a group can carry a curve.
  std::vector<std::vector<const Point*>> pools(1);
  auto ready = [&](const std::vector<const Point*>& g) {
    std::set<double> ks;
    double count = 0;
    for (auto* s : g) ks.insert(s->epochs / s->global_batch()), count += s->w;
    return count >= double(p_.min_points) && ks.size() >= p_.min_distinct_k;
  };
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    while (j < rows.size() && rows[j].global_batch() == rows[i].global_batch()) pools.back().push_back(&rows[j++]);
    i = j;
    if (p_.per_batch && ready(pools.back()) && i < rows.size()) pools.emplace_back();
  }
  if (pools.size() > 1 && !ready(pools.back())) {  // a short tail joins the group before it
    auto tail = pools.back();
    pools.pop_back();
    pools.back().insert(pools.back().end(), tail.begin(), tail.end());
  }
  if (!ready(pools.front())) {
    double count = 0;
    for (auto* s : pools.front()) count += s->w;
    throw InputError(samples.source, 0, "metric",
                     fmt::format("optimus-curve needs at least {} samples at {} distinct steps, got {}", p_.min_points,
                                 p_.min_distinct_k, count));
  }
  // A loss of 0 or less (a metric at its ceiling) is clipped just above 0.
  const double floor = loss_.loss_floor();
  groups_.clear();
  for (const auto& pool : pools) {
    Group g{0, pool.front()->global_batch(), pool.back()->global_batch(), OptimusCurve(p_.curve)};
    double count = 0;
    for (auto* s : pool) count += s->w;
    std::vector<double> k, l;
    std::vector<OptimusCurve::Spread> spread;
    // Losses are offset - metric for a metric to maximise: odd moments change sign.
    const double odd = samples.direction == MetricDirection::kMax ? -1 : 1;
    for (auto* s : pool) {
      g.log_batch += s->w * std::log(s->global_batch()) / count;
      k.push_back(s->epochs * n_ / s->global_batch());
      l.push_back(std::max(floor, loss_.to_loss(s->y)));
      // The least and largest observed loss.
      const double l_lo = std::max(floor, loss_.to_loss(odd < 0 ? s->hi : s->lo));
      const double l_hi = std::max(floor, loss_.to_loss(odd < 0 ? s->lo : s->hi));
      spread.push_back({s->w, s->ss, odd * s->m3, s->m4, l_lo, l_hi});
    }
    try {
      g.curve.fit(k, l, spread);
    } catch (const std::invalid_argument& e) {
      throw InputError(samples.source, 0, "metric", std::string("optimus-curve: ") + e.what());
    }
    groups_.push_back(std::move(g));
  }
}

double OptimusMetricModel::group_metric(const Group& g, double global_batch, double epochs) const {
  return loss_.to_metric(g.curve.predict(epochs * n_ / global_batch));
}

double OptimusMetricModel::predict(double batch, int workers, double epochs) const {
  if (groups_.empty()) return std::nan("");
  double B = batch * workers, lb = std::log(B);
  if (groups_.size() == 1 || lb <= groups_.front().log_batch) return group_metric(groups_.front(), B, epochs);
  if (lb >= groups_.back().log_batch) return group_metric(groups_.back(), B, epochs);
  size_t hi = 1;
  while (groups_[hi].log_batch < lb) ++hi;
  const Group &a = groups_[hi - 1], &b = groups_[hi];
  double t = (lb - a.log_batch) / (b.log_batch - a.log_batch);
  return (1 - t) * group_metric(a, B, epochs) + t * group_metric(b, B, epochs);
}

std::string OptimusMetricModel::describe() const {
  std::string s = fmt::format("{}: {} in steps k = e*N/(b*r), N = {:g}; {}", name(),
                              p_.per_batch ? "one curve per global-batch group, linear in log B between groups"
                                           : "one curve shared by all global batches",
                              n_, loss_.describe());
  for (const auto& g : groups_)
    s += fmt::format("\n  B {:g}..{:g}: {}", g.lo, g.hi, g.curve.describe());
  return s;
}

static MetricModelRegistrar reg_optimus("optimus-curve",
                                        "Optimus loss curve 1/(b0 k + b1) + b2 (NNLS) per global-batch group, in steps",
                                        [] { return std::make_unique<OptimusMetricModel>(); });
static MetricModelRegistrar reg_optimus_shared("optimus-curve-shared",
                                               "Optimus loss curve 1/(b0 k + b1) + b2 (NNLS), one curve in steps e*N/(b*r)",
                                               [] {
                                                 OptimusMetricParams p;
                                                 p.per_batch = false;
                                                 return std::make_unique<OptimusMetricModel>(p);
                                               });

}  // namespace trainplan::models
