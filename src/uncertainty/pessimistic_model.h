// A fitted model read on its pessimistic side, for planning at a confidence
// level: the upper bound of the epoch time and the metric's bound on the
// wrong side of the target (the lower bound for a metric to maximise, the
// upper for one to minimise), both at `coverage`.
//
// An error every epoch time shares (`shared_time_log_sd`: times predicted on
// another GPU, SampleSet::times_predicted_log_sd) is one the time model's
// intervals cannot see: fitted on the moved samples, they measure how well
// the model follows them, not how far the transfer put them all. It joins
// the interval's own width in quadrature, in log space: the upper epoch time
// is point x exp(sqrt(w^2 + (z s)^2)), w = log(interval end / point), z the
// normal quantile of the bound's coverage (one-sided or the interval end's).
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "models/performance_model.h"

namespace trainplan::uncertainty {

// `end` (an interval's end or a bound) moved away from `point` by an error of
// log standard deviation `log_sd` that every prediction shares, joined to the
// interval's own width in quadrature: point x exp(+-sqrt(w^2 + (z log_sd)^2)),
// w = |log(end / point)|, + for the upper end and - for the lower. The side is
// given, not read from `end`: a zero-width interval's ends equal the point.
// `end` unchanged when log_sd is 0 or point or end is not positive.
enum class IntervalEnd { kLower, kUpper };
double widen_by_shared_error(double point, double end, IntervalEnd side, double z, double log_sd);

// Which bounds a confidence P reads.
enum class ConfidenceBounds {
  // The ends of each part's two-sided interval at P. Each end holds with
  // probability >= P on its own (about (1 + P) / 2 for symmetric errors), so
  // both constraints hold together with >= 2P - 1 by the union bound, and
  // about P when the errors are symmetric and independent.
  kTwoSided,
  // Each part's one-sided bound at P: each constraint holds with >= P on its
  // own, both together with >= 2P - 1, and with about P where one part is
  // nearly certain (epoch time at a measured configuration).
  kOneSided,
};
// "two-sided" / "one-sided"; parse throws InputError for anything else.
std::string to_string(ConfidenceBounds b);
ConfidenceBounds parse_confidence_bounds(const std::string& s);

class PessimisticModel : public models::PerformanceModel {
 public:
  // Throws InputError when either part gives no interval (probed at
  // `probe_batch`, one worker, one epoch), naming the model.
  PessimisticModel(std::shared_ptr<const models::FittedPerformanceModel> m, double coverage, int probe_batch,
                   ConfidenceBounds bounds = ConfidenceBounds::kTwoSided, double shared_time_log_sd = 0);
  std::optional<double> epoch_time(int batch, int workers, int nodes) const override;
  // The best of the metric's bounds at the epoch counts looked at up to
  // `epochs`: every whole epoch up to kEveryEpochUpTo, then steps of
  // kEpochStep. The models take the metric as never worse for training
  // longer, but its interval widens beyond the epochs the trials ran, so the
  // bound alone can turn back as epochs grow (a run that meets the target at
  // 24 epochs would seem not to at 1,000), and the planners search epochs
  // assuming the metric monotone: they would miss the 24. At the counts
  // looked at the answer never turns back; a count between them (a fraction
  // of an epoch, or a count between steps) takes its own bound held between
  // the answers at the counts on either side. Past kMostEpochs, the answer
  // there. Keeps the bounds of the last (batch, workers) asked, as a planner
  // asks one cell's epochs in a row. Thread-safe.
  std::optional<double> metric(int batch, int workers, double epochs) const override;
  MetricDirection direction() const override { return m_->direction(); }
  std::string name() const override;

  static constexpr int kEveryEpochUpTo = 100;
  static constexpr double kEpochStep = 1.02;

 private:
  // The metric's bound at exactly `epochs`.
  std::optional<double> bound(int batch, int workers, double epochs) const;

  std::shared_ptr<const models::FittedPerformanceModel> m_;
  double coverage_;
  ConfidenceBounds bounds_;
  double shared_time_log_sd_;
  double shared_time_z_ = 0;  // the normal quantile the bound's side of `coverage_` reads it at
  // For cell_: (epochs, the best bound at these epochs or fewer, NaN while
  // none), at the epoch counts looked at so far, ascending.
  mutable std::pair<int, int> cell_{0, 0};
  mutable std::vector<std::pair<double, double>> best_so_far_;
  mutable std::mutex best_so_far_mutex_;
};

}  // namespace trainplan::uncertainty
