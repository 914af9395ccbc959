// The transformer time and memory models (models/llm_time.h,
// models/llm_memory.h) against Megatron-LM's CI runs (io/megatron_ci_csv.h):
//   datasheet: each GPU's catalog figures and the default parameters;
//   calibrated, leave one model out: for each model (family and shape), the
//     time model's overheads (LlmTimeParams::fit_overheads, the efficiency factors kept)
//     fitted per GPU to the other models' runs on that GPU (datasheet where
//     there are none), and the memory
//     overhead the median gap of the other models' runs;
//   ranking: within each group of runs of one model on one GPU, world size,
//     global batch and attention kernel (fused or not: the user's setting,
//     which the planner prices but does not choose) that measured several
//     parallel configurations, whether the configuration the time model ranks
//     first measured within `tolerance` of the fastest one;
//   repeatability: the same configuration's runs predicted by each other.
// Memory is the last pipeline stage's (the CI logs the last rank).
#pragma once
#include <string>
#include <vector>

#include "io/megatron_ci_csv.h"
#include "models/llm_time.h"

namespace trainplan::scoring {

struct CiRowPrediction {
  const io::MegatronCiRun* run = nullptr;
  double time_datasheet = 0, time_calibrated = 0;  // seconds per iteration
  double peak_datasheet = 0, peak_calibrated = 0;  // GiB
};

struct CiRankingGroup {
  std::string key;             // model, GPU, world size, global batch, fused attention
  int configurations = 0;      // distinct parallel configurations measured
  double fastest_s = 0;        // the fastest measured
  double chosen_s = 0;         // measured time of the predicted-fastest
  std::string chosen, fastest; // their layouts in words
  bool within() const;         // chosen_s <= (1 + tolerance) · fastest_s
  double tolerance = 0.03;
};

struct CiEvaluation {
  std::vector<CiRowPrediction> rows;
  // Mean |relative error| over the rows, and per model (model -> MAPE, rows).
  double time_datasheet_mape = 0, time_calibrated_mape = 0;
  double peak_datasheet_mape = 0, peak_calibrated_mape = 0;
  struct PerModel {
    std::string model;
    int rows = 0;
    double time_datasheet = 0, time_calibrated = 0, peak_datasheet = 0, peak_calibrated = 0;
  };
  std::vector<PerModel> per_model;
  std::vector<CiRankingGroup> ranking;
  // How far the runs themselves repeat: the rows the models cannot tell
  // apart (one model, GPU, global batch and parallel configuration; the CI
  // tests differ in flags such as deterministic mode, checkpoint resume or
  // the layer implementation, and in the machine and container), each
  // predicted by the median of the others' times. Over those rows only:
  // that MAPE, and the calibrated time model's on the same rows.
  int repeated_rows = 0;
  double time_repeat_mape = 0, time_calibrated_on_repeated_mape = 0;
};

// Throws InputError when `runs` is empty.
CiEvaluation evaluate_megatron_ci(const std::vector<io::MegatronCiRun>& runs, double tolerance = 0.03);

// The use `llm predict --calibrate` is made for: a few runs measured on the
// target cluster, the rest predicted. For each GPU, `k` of its runs drawn
// at random (`draws` draws, seeds 1..draws) calibrate the time model from
// `params` (LlmTimeModel::fit: its fit switches say what is fitted) and the
// memory overhead (the median gap of their last stages); every other run of
// that GPU is predicted. GPUs with no more than k runs are skipped.
struct CiCalibratedOnK {
  std::string gpu;
  int k = 0, draws = 0;
  long predictions = 0;              // over all draws
  double time_mape = 0, peak_mape = 0;
  double time_worst = 0;
};
// With several candidate `params`, each draw calibrates the one that
// cross-validates best on its k runs (uncertainty::select_by_cross_validation).
std::vector<CiCalibratedOnK> evaluate_megatron_ci_calibrated_on(const std::vector<io::MegatronCiRun>& runs,
                                                                const std::vector<models::LlmTimeParams>& params,
                                                                int k, int draws);

}  // namespace trainplan::scoring
