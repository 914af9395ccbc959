// Every time model the registry makes is fitted on one point per
// configuration (batch, workers, nodes): distinct_time_configs of its samples
// (models/pooled_samples.h), the same points `evaluate` scores it on and
// `auto` chooses it by, so that the model planned with is the model scored.
// A configuration timed by several trials, or read at several epochs, is one
// configuration: fitted on every row, it would weigh as many times.
//
// The wrapper forwards everything else to the model unchanged; describe()
// adds a line when pooling merged rows. Fitting an already pooled set pools
// nothing, so wrapping is idempotent.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "models/model.h"

namespace trainplan::models {

class ConfigPooledTimeModel : public TimeModel {
 public:
  explicit ConfigPooledTimeModel(std::unique_ptr<TimeModel> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, int nodes) const override { return inner_->predict(batch, workers, nodes); }
  std::optional<Interval> predict_interval(double batch, int workers, int nodes, double coverage) const override {
    return inner_->predict_interval(batch, workers, nodes, coverage);
  }
  std::optional<double> predict_bound(double batch, int workers, int nodes, double coverage,
                                      BoundSide side) const override {
    return inner_->predict_bound(batch, workers, nodes, coverage, side);
  }
  std::string describe() const override;
  // The model fitted on the pooled points.
  const TimeModel& inner() const { return *inner_; }
  // Rows fitted, and the configurations they were pooled into (equal when nothing was merged).
  size_t rows() const { return rows_; }
  size_t configurations() const { return configs_; }

 private:
  std::unique_ptr<TimeModel> inner_;
  size_t rows_ = 0, configs_ = 0;
};

}  // namespace trainplan::models
