// A metric model pinned to each measured run's own samples.
//
// A run (batch, workers) that was sampled at epochs e_1 < ... < e_k is a
// measurement of that configuration; a smooth model fitted across every run
// passes near, not through, its samples, and between two of them it errs as
// it errs at them (a run that sits below the model at e_i and e_{i+1} sits
// below it in between). So on a measured run the prediction is pinned:
//   * between e_i and e_{i+1}: the model's shape rescaled to pass through the
//     two samples, y_i + (y_{i+1} - y_i) (m(e) - m(e_i)) / (m(e_{i+1}) - m(e_i))
//     (where the model is flat there, its residual linear in ln e instead);
//   * before e_1 and past e_k: the model shifted by its residual there.
// The samples are first made monotone in epochs (PAVA, in the metric's
// direction, repeated epochs pooled), so with a model monotone in epochs the
// pinned prediction is monotone in epochs, and equals the pooled samples at
// their epochs. Configurations with no sample are the model's own prediction.
// Why not only hold the planner to the trials (uncertainty/measured_bounds.h): those
// bounds say where a run cannot be; pinning moves the point, and under the
// conformal wrapper (ConformalParams::pin_runs) the within-run residuals are
// then those of pinned interpolations, so the intervals follow.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/model.h"

namespace trainplan::uncertainty {

class RunPinnedMetricModel : public models::MetricModel {
 public:
  explicit RunPinnedMetricModel(std::unique_ptr<models::MetricModel> inner);
  // The wrapped model's name: pinning changes no configuration the model was
  // not measured at, so leaderboards and choices by name stay the same.
  std::string name() const override { return inner_->name(); }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, double epochs) const override;
  std::string describe() const override;

  // The runs pinned (configurations with at least one metric sample).
  size_t runs() const { return runs_.size(); }

 private:
  struct Run {
    std::vector<double> epochs;    // increasing
    std::vector<double> measured;  // monotone (PAVA) sample values
    std::vector<double> model;     // the wrapped model at those epochs
  };
  std::unique_ptr<models::MetricModel> inner_;
  std::map<std::pair<double, int>, Run> runs_;  // by (batch, workers)
};

}  // namespace trainplan::uncertainty
