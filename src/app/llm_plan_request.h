// What `trainplan llm plan --json` prints and `POST /llm/plan` answers, from
// one function, so that both give the same JSON (plan/llm_planner.h does the
// search).
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "app/llm_calibration.h"
#include "io/llm_config_csv.h"
#include "plan/llm_planner.h"
#include "structure/gpu_catalog.h"
#include "structure/transformer.h"

namespace trainplan::app {

struct LlmPlanOutcome {
  structure::TransformerSpec spec;
  structure::HardwareProfile hardware;
  plan::LlmPlanOptions options;
  plan::LlmPlanResult result;
  // Set when the models were calibrated on measured iterations.
  std::optional<LlmCalibration> calibration;
  double interval = 0;  // coverage of the intervals (the measured rows' `interval`)
  // The time model's parameters the plan ranked with (calibrated when
  // `calibration` is set): LlmTimeModel(hardware, time_params) gives each
  // candidate's breakdown.
  models::LlmTimeParams time_params;
  // With a calibration whose cross-validation gave errors: the training
  // time's interval at `interval` for a candidate's predicted training time
  // (uncertainty::conformal_interval); nullopt otherwise.
  std::optional<uncertainty::LlmInterval> train_time_interval(const plan::LlmCandidate& c) const;
  // Under a GPU-hour or cost budget the plan minimises the training time,
  // else the GPU-hours.
  bool minimises_time() const;
  // "least time" under a budget, else "fewest GPU-hours".
  const char* objective() const;
};

// Measured iterations to calibrate the plan's models on (llm_calibration.h):
// rows of any shape and layout, read with require_time.
struct LlmPlanMeasured {
  io::LlmConfigTable table;
  std::string source;          // the file, or the name given to the text
  std::string fit = "auto";  // one of llm_fit_modes()
  double interval = 0.8;     // coverage of the training-time intervals (0: none)
  // The GPU the rows ran on, when not the plan's: fitted there, the fitted
  // fractions and overheads then price the plan's GPU, with no interval (the
  // cross-validated errors are the other GPU's).
  std::optional<structure::HardwareProfile> hardware = std::nullopt;
};

// Searches with the hardware's time model and the memory model, both
// calibrated on `measured` when given (every configuration is then ranked by
// the calibrated models). Throws InputError (fields tokens, global_batch,
// max_gpus) as plan::plan_llm does.
LlmPlanOutcome make_llm_plan(const structure::TransformerSpec& spec, const structure::HardwareProfile& hw,
                             const plan::LlmPlanOptions& options, const LlmPlanMeasured* measured = nullptr);

// A configuration's model FLOPs (llm_model_flops: no recomputation counted)
// per GPU per second, and their share of the GPU's dense peak at the
// layout's precision (GpuSpec::dense_peak_tflops): the model FLOP
// utilisation (MFU) plans and published runs are compared by.
struct ModelFlopUtilisation {
  double tflops_per_gpu = 0;
  double peak_tflops = 0;
  double mfu = 0;
};
ModelFlopUtilisation model_flop_utilisation(const LlmPlanOutcome& o, const plan::LlmCandidate& c);

// {"model", "params", "gpu", "objective", "iterations", "enumerated",
//  "fit_memory", "qualified", "memory_available_gib", "top": [...],
//  "chosen" (when something qualifies), "failing", "explanation",
//  each candidate's "model_tflops_per_gpu" and "mfu"
//  (model_flop_utilisation), "price_per_gpu_hour" and each candidate's
//  "cost" (with options' price_per_gpu_hour),
//  "closest" (when nothing does), "calibration" (when calibrated:
//  to_json(LlmCalibration)), and with a calibration's intervals
//  "interval_coverage" and each candidate's "train_time_interval_s"}; memory
//  in GiB; with options.frontier, "frontier": the cost-time frontier,
//  fastest first; "notes": the plan's, and reserve_note's.
// `compared`: one GPU's answer of a comparison (reserve_note's).
nlohmann::json to_json(const LlmPlanOutcome& o, bool compared = false);
// A choice at the edge of memory for a hair of speed, said: when the chosen
// configuration keeps under a tenth of the GPU's memory free and one ranked
// within 1% behind keeps at least twice as much (and 5 GiB more), the note
// names it and the --reserve-gib that chooses it; nullopt otherwise.
// `compared`: the plan is one GPU's of a comparison, where the option reserves
// as much on every GPU, which the note says.
std::optional<std::string> reserve_note(const LlmPlanOutcome& outcome, bool compared = false);
nlohmann::json to_json(const plan::LlmCandidate& c);

}  // namespace trainplan::app
