// Small analytic PerformanceModels for the planner tests.
#pragma once
#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "models/performance_model.h"

namespace plantest {

using trainplan::MetricDirection;

// Epoch time and metric given as functions; nullopt where they return NaN.
class FnModel : public trainplan::models::PerformanceModel {
 public:
  using TimeFn = std::function<double(int b, int r, int nodes)>;
  using MetricFn = std::function<double(int b, int r, double e)>;
  FnModel(TimeFn t, MetricFn m, MetricDirection d = MetricDirection::kMax) : t_(t), m_(m), d_(d) {}
  std::optional<double> epoch_time(int b, int r, int nodes) const override {
    double v = t_(b, r, nodes);
    return std::isnan(v) ? std::nullopt : std::optional<double>(v);
  }
  std::optional<double> metric(int b, int r, double e) const override {
    double v = m_(b, r, e);
    return std::isnan(v) ? std::nullopt : std::optional<double>(v);
  }
  MetricDirection direction() const override { return d_; }
  std::string name() const override { return "analytic"; }

 private:
  TimeFn t_;
  MetricFn m_;
  MetricDirection d_;
};

// A data-parallel job: epoch time = steps x (compute + all-reduce); accuracy
// rises with epochs, more slowly at large global batch.
inline FnModel physical_model(MetricDirection d = MetricDirection::kMax) {
  return FnModel(
      [](int b, int r, int) {
        double steps = 50000.0 / (double(b) * r);
        return steps * (0.01 + 0.0004 * b + (r > 1 ? 0.02 * std::log2(double(r)) : 0.0));
      },
      [d](int b, int r, double e) {
        double gb = double(b) * r;
        double tau = 2.0 + gb / 256.0;
        double acc = 0.95 - 0.1 * std::log2(1 + gb / 4096.0) - 0.85 * std::exp(-e / tau);
        return d == MetricDirection::kMax ? acc : 1.0 - acc;
      },
      d);
}

}  // namespace plantest
