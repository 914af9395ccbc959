// A fitted model read on its pessimistic side, for planning at a confidence
// level: the upper bound of the epoch-time interval and the bound of the
// metric interval on the wrong side of the target (the lower bound for a
// metric to maximise, the upper for one to minimise), both at `coverage`.
#pragma once
#include <memory>

#include "models/performance_model.h"

namespace trainplan::plan {

class PessimisticModel : public models::PerformanceModel {
 public:
  // Throws InputError when either part gives no interval (probed at
  // `probe_batch`, one worker, one epoch), naming the model.
  PessimisticModel(std::shared_ptr<const models::FittedPerformanceModel> m, double coverage, int probe_batch);
  std::optional<double> epoch_time(int batch, int workers, int nodes) const override;
  std::optional<double> metric(int batch, int workers, double epochs) const override;
  MetricDirection direction() const override { return m_->direction(); }
  std::string name() const override;

 private:
  std::shared_ptr<const models::FittedPerformanceModel> m_;
  double coverage_;
};

}  // namespace trainplan::plan
