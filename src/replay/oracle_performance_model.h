// The replay oracle seen as a PerformanceModel: the ground truth that
// benchmarks and the simulator plan against.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "models/performance_model.h"
#include "replay/replay_oracle.h"

namespace trainplan::replay {

class OraclePerformanceModel : public models::PerformanceModel {
 public:
  explicit OraclePerformanceModel(std::shared_ptr<const ReplayOracle> oracle) : oracle_(std::move(oracle)) {}
  std::optional<double> epoch_time(int batch, int workers, int nodes) const override {
    return oracle_->epoch_time(batch, workers, nodes);
  }
  std::optional<double> metric(int batch, int workers, double epochs) const override {
    return oracle_->metric(double(batch) * workers, epochs);
  }
  MetricDirection direction() const override { return oracle_->direction(); }
  std::string name() const override { return "oracle:" + oracle_->name(); }

 private:
  std::shared_ptr<const ReplayOracle> oracle_;
};

}  // namespace trainplan::replay
