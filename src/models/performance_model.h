// What the planner and the simulator ask of a model: epoch time and metric
// for a configuration, or nullopt where the configuration is not feasible
// (outside the measured region of an oracle, for example).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "core/sample.h"
#include "models/model.h"
#include "models/registry.h"

namespace trainplan::models {

class PerformanceModel {
 public:
  virtual ~PerformanceModel() = default;
  virtual std::optional<double> epoch_time(int batch, int workers, int nodes) const = 0;
  virtual std::optional<double> metric(int batch, int workers, double epochs) const = 0;
  virtual MetricDirection direction() const = 0;
  virtual std::string name() const = 0;
};

// Fitted time and metric models, used together.
class FittedPerformanceModel : public PerformanceModel {
 public:
  FittedPerformanceModel(std::shared_ptr<const TimeModel> time, std::shared_ptr<const MetricModel> metric,
                         MetricDirection direction)
      : time_(std::move(time)), metric_(std::move(metric)), direction_(direction) {}
  std::optional<double> epoch_time(int batch, int workers, int nodes) const override;
  std::optional<double> metric(int batch, int workers, double epochs) const override;
  MetricDirection direction() const override { return direction_; }
  std::string name() const override;
  const TimeModel* time_model() const { return time_.get(); }
  const MetricModel* metric_model() const { return metric_.get(); }

 private:
  std::shared_ptr<const TimeModel> time_;
  std::shared_ptr<const MetricModel> metric_;
  MetricDirection direction_;
};

// Fits the time part of registered model `time_name` and the metric part of
// `metric_name` on `samples`; the metric part is skipped for time-only samples.
std::shared_ptr<FittedPerformanceModel> fit_performance_model(const std::string& time_name,
                                                              const std::string& metric_name,
                                                              const SampleSet& samples,
                                                              const ModelParams& params = {});

}  // namespace trainplan::models
