// A fitted model read on its pessimistic side, for planning at a confidence
// level: the upper bound of the epoch time and the metric's bound on the
// wrong side of the target (the lower bound for a metric to maximise, the
// upper for one to minimise), both at `coverage`.
#pragma once
#include <memory>
#include <string>

#include "models/performance_model.h"

namespace trainplan::uncertainty {

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
                   ConfidenceBounds bounds = ConfidenceBounds::kTwoSided);
  std::optional<double> epoch_time(int batch, int workers, int nodes) const override;
  std::optional<double> metric(int batch, int workers, double epochs) const override;
  MetricDirection direction() const override { return m_->direction(); }
  std::string name() const override;

 private:
  std::shared_ptr<const models::FittedPerformanceModel> m_;
  double coverage_;
  ConfidenceBounds bounds_;
};

}  // namespace trainplan::uncertainty
