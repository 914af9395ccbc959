// How close the transformer memory and time models (models/llm_memory.h,
// models/llm_time.h) come to Korthikanti et al. 2022's published Megatron-LM
// runs (io/korthikanti_csv.h): per row, the published and predicted value
// and the relative error (predicted / published - 1).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "io/korthikanti_csv.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"

namespace trainplan::scoring {

struct LlmRowError {
  std::string model;
  std::string what;  // the recomputation and sequence parallelism, or the memory metric and mode
  double published = 0;
  double predicted = 0;
  double relative_error() const { return predicted / published - 1; }
};

struct LlmErrorSummary {
  std::vector<LlmRowError> rows;
  double mean_abs = 0;  // mean |relative error|
  double max_abs = 0;
  // Where scored: the prediction intervals at `interval_coverage`
  // (uncertainty::conformal_interval on the calibration's cross-validated
  // errors), how many of the rows they hold, and their mean relative half-width.
  double interval_coverage = 0;
  int interval_covered = 0;
  int interval_rows = 0;  // rows that got an interval (the calibration cross-validated)
  double interval_mean_half_width = 0;
};

// Iteration times predicted by `model` (its hardware and parameters) from
// each run's shape and layout alone.
LlmErrorSummary score_iterations(const std::vector<io::PublishedIteration>& runs, const models::LlmTimeModel& model);

// Iteration times calibrated by leave-one-model-out: for each model (an
// architecture: layers, width, heads, key/value groups and FFN, whatever the
// table names it), the efficiency factors fitted (LlmTimeModel::fit) to the
// other models' runs, starting from `model`'s parameters, predict its runs.
LlmErrorSummary score_iterations_leave_model_out(const std::vector<io::PublishedIteration>& runs,
                                                 const models::LlmTimeModel& model);

// Iteration times calibrated on `k` runs drawn at random (seeds
// `first_seed`..`first_seed + seeds - 1`): the factors fitted to those runs
// predict every other run; the rows of all draws together. Empty when there
// are not more than `k` runs. `coverage` > 0 also scores the intervals
// `llm predict --calibrate --interval` would give from those k runs.
// `candidates` (empty: `model`'s parameters) are the time parameters to
// start from; with several, each draw takes the one that cross-validates
// best on its k runs, as `--fit auto` does.
LlmErrorSummary score_iterations_calibrated_on(const std::vector<io::PublishedIteration>& runs,
                                               const models::LlmTimeModel& model, size_t k, int seeds,
                                               uint64_t first_seed = 1, double coverage = 0,
                                               const std::vector<models::LlmTimeParams>& candidates = {});

// Iteration times on one GPU from the time parameters fitted to every run of
// another GPU: `source_runs` fitted on `source_model`'s hardware, as
// `llm predict --calibrate MEASURED --calibrate-gpu OTHER` fits them, the
// fitted fractions and overheads then pricing `target_runs` on
// `target_model`'s hardware. `candidates` as for score_iterations_calibrated_on
// (several: the one that cross-validates best on the source runs).
LlmErrorSummary score_iterations_calibrated_elsewhere(const std::vector<io::PublishedIteration>& target_runs,
                                                      const models::LlmTimeModel& target_model,
                                                      const std::vector<io::PublishedIteration>& source_runs,
                                                      const models::LlmTimeModel& source_model,
                                                      const std::vector<models::LlmTimeParams>& candidates = {});

// Memory per GPU: params_grads_optimizer_GiB_per_gpu against the first
// stage's weights, gradients and optimizer states of its transformer layers
// (the figure leaves the embedding out), activations_GiB_per_gpu against the first stage's
// layer activations, activation_memory_pct_of_no_recompute_no_seqpar
// against one layer's activations relative to the same layout without
// recomputation or sequence parallelism. Other metrics are skipped.
LlmErrorSummary score_memory(const std::vector<io::PublishedMemory>& rows, const models::LlmMemoryModel& model);

}  // namespace trainplan::scoring
