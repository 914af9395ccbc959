// Baselines for the transfer of step times to another GPU, scored beside
// split-transfer on the same splits (docs/TRANSFER.md). Each predicts from
// the source's step time at the same placement and per-GPU batch: the
// measured one when the source ran exactly that configuration, else the
// source-side fit of split-transfer (for placements the source never ran,
// such as 8 GPUs on a node when its nodes have 4).
//
//   datasheet-ratio      source step / (the target's headline peak / the
//                        source's): fp16 tensor-core peaks, fp32 where a GPU
//                        has none. No hardware model and no use of trials.
//   scale-through-trials source step x one factor, the geometric mean of
//                        measured / source over the trials (the datasheet
//                        ratio without trials).
//   line-through-trials  a + b x source step, least squares through the
//                        trials (needs 2; with fewer, the datasheet ratio).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "models/transfer.h"
#include "models/transfer_split.h"

namespace trainplan::models {

enum class BaselineKind { kDatasheetRatio, kScaleThroughTrials, kLineThroughTrials };

struct TransferBaselineParams {
  BaselineKind kind = BaselineKind::kDatasheetRatio;
};

class TransferBaseline : public TransferModel {
 public:
  explicit TransferBaseline(TransferBaselineParams p = {}) : p_(p) {}
  std::string name() const override;
  void fit(const TransferProblem& problem) override;
  double predict(const StepSample& at) const override;
  std::optional<double> predict_source(const StepSample& at) const override { return source_step(at); }
  std::string describe() const override;

  // target = intercept + slope x source step (intercept 0 for the ratios).
  double intercept() const { return intercept_; }
  double slope() const { return slope_; }
  double datasheet_ratio() const { return ratio_; }  // target / source headline peak

 private:
  double source_step(const StepSample& at) const;
  TransferBaselineParams p_;
  SplitTransferModel source_fit_;
  std::map<std::pair<std::string, double>, double> measured_;  // (placement, batch) -> source step
  double ratio_ = 1, intercept_ = 0, slope_ = 1;
  std::string note_;
};

}  // namespace trainplan::models
