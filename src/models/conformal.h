// Prediction intervals for any model by K-fold (cross-validated) conformal
// prediction on relative residuals.
//
//   fit():  the wrapped model is fitted once on all samples (the point
//           prediction); then K fresh copies are fitted, each leaving one fold
//           out, and every held-out sample gives a relative residual
//           |y - f_{-k}(x)| / |f_{-k}(x)|.
//   predict_interval(c):  q = the ceil((n+1) c)-th smallest of the n residuals
//           (the split-conformal rank, which guarantees coverage >= c for
//           exchangeable data), and the interval is f(x) * (1 -/+ q).
//
// Why this and not the bootstrap: it needs no model of the noise, gives
// finite-sample coverage under exchangeability, costs K extra fits (not
// hundreds), and works for any registered model, including step functions
// whose bootstrap distribution is poor. Relative residuals because both
// targets (seconds, metrics) have errors roughly proportional to their size.
// Folds keep samples of one configuration (batch, workers, nodes) together:
// samples that differ only in epochs share one epoch time and a correlated
// metric, and the planner asks about configurations it has not measured. For
// time models each held-out configuration counts once.
// When (n+1) c > n the largest residual is used, and describe() says the
// interval is too short to guarantee c.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/model.h"

namespace trainplan::models {

struct ConformalParams {
  int folds = 5;
  uint64_t seed = 1;  // shuffles configurations into folds
};

using TimeFactory = std::function<std::unique_ptr<TimeModel>()>;
using MetricFactory = std::function<std::unique_ptr<MetricModel>()>;

// Residual store shared by both wrappers.
class ConformalResiduals {
 public:
  void set(std::vector<double> r);
  size_t size() const { return r_.size(); }
  // The conformal quantile at coverage c in (0, 1); nullopt with no residuals.
  std::optional<double> quantile(double coverage) const;
  // True when `coverage` needs more residuals than there are.
  bool too_few(double coverage) const;
  std::string describe() const;

 private:
  std::vector<double> r_;  // sorted ascending
};

class ConformalTimeModel : public TimeModel {
 public:
  ConformalTimeModel(TimeFactory make, ConformalParams p = {});
  std::string name() const override { return name_; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, int nodes) const override;
  std::optional<Interval> predict_interval(double batch, int workers, int nodes, double coverage) const override;
  std::string describe() const override;
  const ConformalResiduals& residuals() const { return res_; }

 private:
  TimeFactory make_;
  ConformalParams p_;
  std::unique_ptr<TimeModel> model_;
  std::string name_;
  ConformalResiduals res_;
  std::vector<std::string> notes_;
};

class ConformalMetricModel : public MetricModel {
 public:
  ConformalMetricModel(MetricFactory make, ConformalParams p = {});
  std::string name() const override { return name_; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, double epochs) const override;
  std::optional<Interval> predict_interval(double batch, int workers, double epochs, double coverage) const override;
  std::string describe() const override;
  const ConformalResiduals& residuals() const { return res_; }

 private:
  MetricFactory make_;
  ConformalParams p_;
  std::unique_ptr<MetricModel> model_;
  std::string name_;
  ConformalResiduals res_;
  std::vector<std::string> notes_;
};

// Wrap a model given by its factory (called K+1 times per fit).
std::unique_ptr<TimeModel> with_conformal(TimeFactory make, ConformalParams p = {});
std::unique_ptr<MetricModel> with_conformal_metric(MetricFactory make, ConformalParams p = {});
// Wrap a registered model by name; throws InputError if it lacks that part.
std::unique_ptr<TimeModel> conformal_time_model(const std::string& name, ConformalParams p = {});
std::unique_ptr<MetricModel> conformal_metric_model(const std::string& name, ConformalParams p = {});

// Fold index of every sample: configurations (batch, workers, nodes) shuffled
// with `seed` and dealt round-robin into min(folds, configurations) folds.
std::vector<int> config_folds(const SampleSet& s, int folds, uint64_t seed);

}  // namespace trainplan::models
