// The transformer time and memory models against single-GPU runs
// (io/transformer_runs_csv.h): per run the datasheet prediction and the
// calibrated one, leave one configuration out (the time model's efficiency
// factors fitted, LlmTimeModel::fit, and the memory overhead, the median
// gap, on every other run). Memory is the allocator's peak.
#pragma once
#include <vector>

#include "io/transformer_runs_csv.h"
#include "structure/gpu_catalog.h"

namespace trainplan::scoring {

struct RunPrediction {
  const io::TransformerRun* run = nullptr;
  double time_datasheet = 0, time_calibrated = 0;  // seconds
  double peak_datasheet = 0, peak_calibrated = 0;  // bytes
};

struct RunsEvaluation {
  std::vector<RunPrediction> rows;
  double time_datasheet_mape = 0, time_calibrated_mape = 0;
  double peak_datasheet_mape = 0, peak_calibrated_mape = 0;
  double time_datasheet_bias = 0, peak_datasheet_bias = 0;  // mean signed relative error
};

// Throws InputError with fewer than two runs.
RunsEvaluation evaluate_transformer_runs(const std::vector<io::TransformerRun>& runs,
                                         const structure::HardwareProfile& hw);

}  // namespace trainplan::scoring
