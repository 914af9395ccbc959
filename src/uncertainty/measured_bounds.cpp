#include "uncertainty/measured_bounds.h"

#include <algorithm>
#include <optional>


namespace trainplan::uncertainty {
namespace {

// The better and the worse of two metric values under direction `d`.
double better_of(double a, double b, MetricDirection d) { return metric_better(b, a, d) ? b : a; }
double worse_of(double a, double b, MetricDirection d) { return metric_better(b, a, d) ? a : b; }

}  // namespace

MeasuredBoundsModel::MeasuredBoundsModel(std::shared_ptr<const models::PerformanceModel> inner,
                                         const SampleSet& samples,
                                         std::shared_ptr<const models::PerformanceModel> point)
    : inner_(std::move(inner)), point_(std::move(point)), curves_(!samples.curve.empty()) {
  const MetricDirection d = inner_->direction();
  for (const auto& [key, v] : samples.metric_runs(/*with_curve=*/true)) {
    Trials& t = trials_[key];
    // The floor at e: what every run measured at some e' <= e had reached there. Runs measured at
    // the same epochs (reruns) vouch together for their worst: the luckiest of them does not
    // speak for the next. One run a count of epochs (a trial and its curve) is the best so far.
    for (size_t i = 0; i < v.size(); ++i) {
      const auto [e, m] = v[i];
      if (i == 0 || v[i - 1].first != e) {  // the first of the runs measured at e: their worst
        double worst_here = m;
        for (size_t j = i + 1; j < v.size() && v[j].first == e; ++j) worst_here = worse_of(worst_here, v[j].second, d);
        t.floor.push_back(t.floor.empty() ? worst_here : better_of(worst_here, t.floor.back(), d));
      } else {
        t.floor.push_back(t.floor.back());
      }
      t.epochs.push_back(e);
      t.cap.push_back(m);
      // The point model's misfit at this trial where it is optimistic, else 0.
      auto p = point_ ? point_->metric(static_cast<int>(key.first), key.second, e) : std::nullopt;
      t.shift.push_back(p && metric_better(*p, m, d) ? m - *p : 0.0);
    }
    for (size_t i = t.cap.size() - 1; i-- > 0;) {
      t.cap[i] = worse_of(t.cap[i], t.cap[i + 1], d);
      t.shift[i] = worse_of(t.shift[i], t.shift[i + 1], d);
    }
  }
}

std::optional<double> MeasuredBoundsModel::epoch_time(int batch, int workers, int nodes) const {
  return inner_->epoch_time(batch, workers, nodes);
}

std::optional<double> MeasuredBoundsModel::metric(int batch, int workers, double epochs) const {
  auto m = inner_->metric(batch, workers, epochs);
  auto it = trials_.find({double(batch), workers});
  if (!m || it == trials_.end()) return m;
  const Trials& t = it->second;
  const MetricDirection d = inner_->direction();
  double v = *m;
  // The cap: the first trial with >= epochs epochs; the shift: the largest
  // optimistic misfit among the same trials (0 without a point model).
  size_t later = static_cast<size_t>(std::lower_bound(t.epochs.begin(), t.epochs.end(), epochs) - t.epochs.begin());
  std::optional<double> cap;
  if (later < t.epochs.size()) {
    cap = t.cap[later];
    v = worse_of(v, *m + t.shift[later], d);
  }
  // The floor: the last trial with <= epochs epochs.
  size_t upto = static_cast<size_t>(std::upper_bound(t.epochs.begin(), t.epochs.end(), epochs) - t.epochs.begin());
  const std::optional<double> floor = upto > 0 ? std::optional<double>(t.floor[upto - 1]) : std::nullopt;
  // Held between the two. Where reruns disagree (the floor better than the cap: one run reached
  // more, sooner, than another did later), the measurements bracket the run, and the model
  // decides within the bracket: the luckiest rerun does not speak for the next.
  if (floor && cap) {
    v = better_of(v, worse_of(*floor, *cap, d), d);
    return worse_of(v, better_of(*floor, *cap, d), d);
  }
  if (cap) v = worse_of(v, *cap, d);
  if (floor) v = better_of(v, *floor, d);
  return v;
}

std::string MeasuredBoundsModel::name() const {
  const std::string held = curves_ ? ", held to the measured trials and their learning curves" : ", held to the measured trials";
  return inner_->name() + held + (point_ ? " and shifted by the misfit there" : "");
}

}  // namespace trainplan::uncertainty
