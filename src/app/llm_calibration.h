// Calibrating the transformer time and memory models on measured iterations,
// one way for `trainplan llm predict --calibrate`, `trainplan llm plan
// --calibrate` and `POST /llm/plan`'s `calibrate`, so that a plan ranks its
// configurations with the very models that predict reports.
//
// The time model's efficiency factors (or, by `fit`, its overheads) are
// fitted by models::LlmTimeModel::fit on every measured row; the memory
// model's overhead constant by models::LlmMemoryModel::fit on the rows with
// memory_gib. The measured rows may be of any shape and layout: the factors
// belong to the GPU and the software, not to one model.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/llm_config_csv.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "uncertainty/llm_cross_validation.h"

namespace trainplan::app {

// What a calibration fits (models::LlmTimeModel::fit): "efficiency", the
// peak, link and memory fractions (the default); "overheads", the
// per-iteration and per-layer host overheads with the datasheet fractions
// kept; "all", the fractions, the overheads and the link latency together;
// "auto", whichever of the three cross-validates best on the measured rows
// (uncertainty::select_by_cross_validation).
const std::vector<std::string>& llm_fit_modes();
// The time model's starting parameters for `fit` (one of llm_fit_modes();
// "auto": the efficiency fit's, until the measured rows choose).
models::LlmTimeParams llm_time_params_for_fit(const std::string& fit);
// The candidates `fit` chooses among, in llm_fit_modes() order: the three
// fits for "auto", else the one.
std::vector<models::LlmTimeParams> llm_fit_candidates(const std::string& fit);

// What one calibration fitted, and how well, in sample.
struct LlmCalibration {
  std::string source;        // the measured file (or the name the text was given)
  std::string fit;           // one of llm_fit_modes(): what was asked
  std::string fitted;        // what was fitted: `fit`, or for "auto" the fit it chose
  long rows = 0;             // measured iterations fitted
  long memory_rows = 0;      // of them with a measured memory_gib (0: the memory model is the datasheet's)
  int fitted_factors = 0;    // models::LlmTimeModel::fitted_factors()
  models::LlmTimeParams time;          // the fitted time parameters
  double memory_overhead_bytes = 0;    // the fitted memory overhead
  // Mean over the rows of |predicted / measured - 1| of the iteration time
  // after the fit, and of the memory when memory_rows > 0 (else -1).
  double time_mean_abs_relative_error = 0;
  double memory_mean_abs_relative_error = -1;
  uncertainty::LlmCrossValidation cv;  // out of sample
  // What the user should know about the fit: a fraction pushed to a bound of
  // its range, which the measured rows then explain by something else.
  std::vector<std::string> warnings;
  // For "auto": the fits it passed over as implausible, each with why
  // (uncertainty::implausible_fit).
  std::vector<std::string> passed_over;
};

// Fits `time` and `memory` in place on `measured` (read with require_time,
// so every row has its iteration_time_s). `time` should have been made with
// llm_time_params_for_fit(fit).
LlmCalibration calibrate_llm_models(const io::LlmConfigTable& measured, const std::string& source,
                                    const std::string& fit, models::LlmTimeModel& time,
                                    models::LlmMemoryModel& memory);

// The same, for rows measured on `measured_hw` when `time` prices another
// GPU: fitted on `measured_hw`, then `time` is replaced by a model of its own
// hardware with the fitted parameters (the fractions and overheads moved).
// With `measured_hw` the hardware of `time`, calibrate_llm_models itself.
LlmCalibration calibrate_llm_models_on(const io::LlmConfigTable& measured, const std::string& source,
                                       const std::string& fit, const structure::HardwareProfile& measured_hw,
                                       models::LlmTimeModel& time, models::LlmMemoryModel& memory);

// {"measured", "fit", "rows", "memory_rows", "fitted_factors", "cv" ({"folds",
//  "time_mean_abs_relative_error", "memory_mean_abs_relative_error" (null
//  without), "time_errors", "memory_errors"}),
//  "peak_fraction", "link_fraction", "memory_fraction", "memory_overhead_gib",
//  "mean_abs_relative_error", and with memory rows
//  "memory_mean_abs_relative_error"; with fit "overheads" or "all" also
//  "iteration_overhead_s", "layer_overhead_s", "link_latency_s"}.
nlohmann::json to_json(const LlmCalibration& c);
// "calibrated on FILE (N rows): K factor(s): peak P, link L, memory M;
// memory overhead G GiB (from R rows); mean |error| E%; cross-validated
// (F folds) X%, memory Y%": one line.
std::string describe(const LlmCalibration& c);

}  // namespace trainplan::app
