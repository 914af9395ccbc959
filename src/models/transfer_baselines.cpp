#include "models/transfer_baselines.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "core/error.h"

namespace trainplan::models {

namespace {

// The peaks a datasheet ratio compares: fp16 tensor where both GPUs have
// tensor cores, else fp32 on both (a P100's fp32 against a T4's fp16 tensor
// peak would say it is seven times slower).
std::pair<double, double> headline_tflops(const structure::GpuSpec& a, const structure::GpuSpec& b) {
  if (a.fp16_tensor_tflops > 0 && b.fp16_tensor_tflops > 0) return {a.fp16_tensor_tflops, b.fp16_tensor_tflops};
  return {a.fp32_tflops, b.fp32_tflops};
}

}  // namespace

std::string TransferBaseline::name() const {
  switch (p_.kind) {
    case BaselineKind::kDatasheetRatio: return "datasheet-ratio";
    case BaselineKind::kScaleThroughTrials: return "scale-through-trials";
    case BaselineKind::kLineThroughTrials: return "line-through-trials";
  }
  return "?";
}

double TransferBaseline::source_step(const StepSample& at) const {
  auto it = measured_.find({at.placement(), at.batch});
  if (it != measured_.end()) return it->second;
  return *source_fit_.predict_source(at);
}

void TransferBaseline::fit(const TransferProblem& problem) {
  // The source fit only: no target trials, so that it is the source's.
  TransferProblem src = problem;
  src.target_trials.clear();
  source_fit_.fit(src);
  measured_.clear();
  std::map<std::pair<std::string, double>, std::pair<double, int>> sums;
  for (const auto& s : problem.source) {
    auto& a = sums[{s.placement(), s.batch}];
    a.first += s.step_s, a.second++;
  }
  for (const auto& [k, v] : sums) measured_[k] = v.first / v.second;

  const auto [hs, ht] = headline_tflops(problem.source_hw.gpu, problem.target_hw.gpu);
  ratio_ = hs > 0 && ht > 0 ? ht / hs : 1;
  intercept_ = 0, slope_ = 1 / ratio_, note_.clear();
  const auto& trials = problem.target_trials;
  if (p_.kind == BaselineKind::kScaleThroughTrials && !trials.empty()) {
    double s = 0;
    for (const auto& t : trials) s += std::log(t.step_s / source_step(t));
    slope_ = std::exp(s / trials.size());
  } else if (p_.kind == BaselineKind::kLineThroughTrials) {
    if (trials.size() < 2) {
      note_ = "fewer than 2 trials: the datasheet ratio";
      return;
    }
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& t : trials) {
      double x = source_step(t), y = t.step_s;
      n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    double det = n * sxx - sx * sx;
    if (std::abs(det) <= 1e-12 * std::max(1.0, n * sxx)) {
      slope_ = sy / sx;  // all trials at one source step time: a ratio through them
      note_ = "the trials share one source step time: a ratio through them";
    } else {
      slope_ = (n * sxy - sx * sy) / det;
      intercept_ = (sy - slope_ * sx) / n;
    }
  }
}

double TransferBaseline::predict(const StepSample& at) const { return intercept_ + slope_ * source_step(at); }

std::string TransferBaseline::describe() const {
  return fmt::format("target = {:.4g} + {:.4g} x source step (datasheet ratio {:.3g}){}\n", intercept_, slope_, ratio_,
                     note_.empty() ? "" : "; " + note_);
}

static TransferModelRegistrar reg_ratio(10, "datasheet-ratio",
                                        "source step divided by the ratio of the GPUs' headline (fp16 tensor) peaks",
                                        [] { return std::make_unique<TransferBaseline>(); });
static TransferModelRegistrar reg_scale(20, "scale-through-trials",
                                        "source step times one factor, the geometric mean ratio over the target trials",
                                        [] {
                                          return std::make_unique<TransferBaseline>(
                                              TransferBaselineParams{BaselineKind::kScaleThroughTrials});
                                        });
static TransferModelRegistrar reg_line(30, "line-through-trials",
                                       "a + b x source step, least squares through the target trials (no hardware model)",
                                       [] {
                                         return std::make_unique<TransferBaseline>(
                                             TransferBaselineParams{BaselineKind::kLineThroughTrials});
                                       });

}  // namespace trainplan::models
