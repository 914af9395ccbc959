// Leave-one-configuration-out scoring of the transformer time and memory
// models on a measured grid (io/llm_config_csv.h rows with iteration_time_s
// and memory_gib), such as the CPU GPT grid of `trainplan llm profile`
// (docs/LLM.md, "The CPU grid"). For each row the models are calibrated
// exactly as `llm predict --calibrate` calibrates them, on every other row,
// and predict the row left out; the datasheet prediction is reported beside.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "io/llm_config_csv.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "structure/gpu_catalog.h"

namespace trainplan::scoring {

struct GridPrediction {
  const io::LlmConfigRow* row = nullptr;
  double time_datasheet = 0, time_calibrated = 0;      // seconds
  double memory_datasheet = 0, memory_calibrated = 0;  // bytes; 0 where the row has no memory_gib
};

struct GridEvaluation {
  std::vector<GridPrediction> rows;
  double time_datasheet_mape = 0, time_calibrated_mape = 0, time_calibrated_worst = 0;
  double memory_datasheet_mape = 0, memory_calibrated_mape = 0, memory_calibrated_worst = 0;
  int memory_rows = 0;
  // Calibrated on all rows: the fitted time parameters and memory overhead.
  models::LlmTimeParams fitted_time;
  models::LlmMemoryParams fitted_memory;
  int fitted_factors = 0;
  // models::LlmTimeModel::fitted_mode() of that fit, and of the fits on the
  // rows left when one is left out: a fit asked of too few configurations
  // fits less ("all" needs 8, "overheads" 3; llm_time.h), and these say what.
  std::string fitted_mode;
  std::set<std::string> left_out_fitted_modes;
  double time_in_sample_mape = 0;
  // The prediction intervals `llm predict --calibrate --interval` would give
  // each row left out (uncertainty::cross_validate_llm on the other rows,
  // then uncertainty::conformal_interval at `coverage`): how many contain
  // the measurement, and their mean relative half-width.
  double coverage = 0;
  int time_covered = 0, memory_covered = 0;
  double time_mean_half_width = 0, memory_mean_half_width = 0;
};

// Calibrated on `k` rows drawn at random (seeds first_seed.., one draw per
// seed), as `llm predict --calibrate` calibrates on a user's k measured
// configurations, the other rows predicted; the errors of every prediction
// of every draw together. Empty (draws = 0) when the grid has no more than
// k rows.
struct GridDrawScore {
  int k = 0, draws = 0, predictions = 0;
  double time_mape = 0, time_median = 0, time_worst = 0;
  double memory_mape = 0, memory_worst = 0;
  int memory_predictions = 0;
};
GridDrawScore score_llm_grid_on_k(const std::vector<io::LlmConfigRow>& rows, const structure::HardwareProfile& hw,
                                  const std::vector<models::LlmTimeParams>& time_candidates, size_t k, int draws,
                                  uint64_t first_seed = 1, const models::LlmMemoryParams& memory_base = {});

// The rows predicted by models already calibrated (elsewhere: on another
// grid, as `llm evaluate --grid --calibrate` does): mean and worst
// |predicted / measured - 1| of time, and of peak memory on the rows with
// memory_gib. Every row needs iteration_time_s; throws on none.
struct GridScore {
  int rows = 0, memory_rows = 0;
  double time_mape = 0, time_worst = 0, memory_mape = 0, memory_worst = 0;
};
GridScore score_llm_grid_with(const std::vector<io::LlmConfigRow>& rows, const models::LlmTimeModel& time,
                              const models::LlmMemoryModel& memory);

// `time_candidates` are the time parameters calibration starts from (their
// fit switches, such as LlmTimeParams::fit_overheads, included): with
// several, each calibration takes the one that cross-validates best on its
// rows (uncertainty::select_by_cross_validation), as `--fit auto` does; the
// datasheet column uses the first. `memory_base` likewise for memory.
// Throws InputError with fewer than two rows or a row without iteration_time_s.
// `coverage` > 0 also scores the intervals (above) at that coverage.
GridEvaluation evaluate_llm_grid(const std::vector<io::LlmConfigRow>& rows, const structure::HardwareProfile& hw,
                                 const std::vector<models::LlmTimeParams>& time_candidates = {{}},
                                 const models::LlmMemoryParams& memory_base = {}, double coverage = 0);

}  // namespace trainplan::scoring
