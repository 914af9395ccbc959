// The one interface every predictor sits behind (scikit-learn style):
// construct with a plain parameter struct, fit() on samples, then predict().
// Time models predict seconds per data epoch from (batch, workers, nodes);
// metric models predict the validation metric from (batch, workers, epochs).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "core/sample.h"

namespace trainplan::models {

// A prediction interval [lo, hi] at a stated coverage.
struct Interval {
  double lo = 0, hi = 0;
  double coverage = 0.9;
};

// Which side a one-sided bound holds: kLower b gives P(y >= b) >= coverage,
// kUpper b gives P(y <= b) >= coverage.
enum class BoundSide { kLower, kUpper };

class TimeModel {
 public:
  virtual ~TimeModel() = default;
  virtual std::string name() const = 0;
  // Fits on all samples. Throws InputError if the samples cannot support a fit.
  virtual void fit(const SampleSet& samples) = 0;
  // Seconds per data epoch at per-worker `batch` on `workers` workers over
  // `nodes` nodes (0: unknown). Call only after fit().
  virtual double predict(double batch, int workers, int nodes) const = 0;
  // An interval at `coverage`, for models that provide one.
  virtual std::optional<Interval> predict_interval(double, int, int, double) const { return std::nullopt; }
  // A one-sided bound at `coverage` (see BoundSide), for models that provide one.
  virtual std::optional<double> predict_bound(double, int, int, double, BoundSide) const { return std::nullopt; }
  // Human-readable fitted parameters and any notes (priors used, fallbacks).
  virtual std::string describe() const { return ""; }
};

class MetricModel {
 public:
  virtual ~MetricModel() = default;
  virtual std::string name() const = 0;
  // Fits on the samples that carry a metric; throws InputError if there are none.
  virtual void fit(const SampleSet& samples) = 0;
  // Validation metric after `epochs` data epochs at per-worker `batch` on `workers`.
  virtual double predict(double batch, int workers, double epochs) const = 0;
  virtual std::optional<Interval> predict_interval(double, int, double, double) const { return std::nullopt; }
  virtual std::optional<double> predict_bound(double, int, double, double, BoundSide) const { return std::nullopt; }
  virtual std::string describe() const { return ""; }
};

}  // namespace trainplan::models
