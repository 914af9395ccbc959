// The seed paper's performance model (Liang et al. 2022; docs/MODELS.md), kept
// faithful: each target is a weighted sum of one-dimensional isotonic
// regressions, one per input parameter, with weights from mutual information.
//   f1(batch, workers) -> seconds per epoch     (nodes are ignored)
//   f2(batch, epochs)  -> validation metric      (workers are ignored, as in the paper)
// Each g_s is the isotonic regression of the target on parameter s alone, its
// direction the one with the lower SSE; prediction interpolates between knots.
// Registered as "isotonic-mi" and "isotonic-mi-unimodal" (metric vs batch may
// rise then fall, or fall then rise).
#pragma once
#include <string>
#include <vector>

#include "models/model.h"
#include "numerics/mutual_information.h"
#include "numerics/pava.h"

namespace trainplan::models {

struct IsotonicMiParams {
  bool unimodal_metric_batch = false;  // metric vs batch: best of peak/valley instead of monotone
  numerics::MiBinning binning;                   // discretisation for Algorithm 1
};

// y ~ sum_s w_s g_s(x_s) over named input columns.
class AdditiveIsotonic {
 public:
  struct Dimension {
    std::string name;
    numerics::IsotonicCurve curve;
    double mi = 0;      // mutual information with the target, nats
    double weight = 0;  // from Algorithm 1
  };

  // `unimodal[s]`: dimension s may take a peak or valley shape as well.
  void fit(const std::vector<std::string>& names, const std::vector<std::vector<double>>& columns,
           const std::vector<double>& y, const std::vector<bool>& unimodal, const numerics::MiBinning& binning);
  double predict(const std::vector<double>& x) const;
  const std::vector<Dimension>& dimensions() const { return dims_; }
  std::string describe() const;

 private:
  std::vector<Dimension> dims_;
};

class IsotonicMiTimeModel : public TimeModel {
 public:
  explicit IsotonicMiTimeModel(IsotonicMiParams p = {}, std::string name = "isotonic-mi")
      : params_(p), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, int nodes) const override;
  std::string describe() const override;
  const AdditiveIsotonic& additive() const { return f1_; }

 private:
  IsotonicMiParams params_;
  std::string name_;
  AdditiveIsotonic f1_;
};

class IsotonicMiMetricModel : public MetricModel {
 public:
  explicit IsotonicMiMetricModel(IsotonicMiParams p = {}, std::string name = "isotonic-mi")
      : params_(p), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  void fit(const SampleSet& samples) override;
  double predict(double batch, int workers, double epochs) const override;
  std::string describe() const override;
  const AdditiveIsotonic& additive() const { return f2_; }

 private:
  IsotonicMiParams params_;
  std::string name_;
  AdditiveIsotonic f2_;
};

}  // namespace trainplan::models
