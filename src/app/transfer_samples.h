// Profiling samples moved to a GPU they were not measured on. The steps a
// sample set implies feed a transfer model (models/transfer.h) as its source
// or as trials on the target; the fitted model then gives every sample's
// epoch time on the target, so that `plan`, `predict` and `evaluate` work on
// the target GPU as on a profiled one. The metric is kept: how far an epoch
// at a global batch takes the training is the training's, not the GPU's.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.h"
#include "models/transfer.h"
#include "structure/gpu_catalog.h"
#include "structure/layer_graph.h"

namespace trainplan::app {

// Where `workers` run: spread as evenly as possible (the larger counts last,
// as the Pollux traces write placements) over `nodes` nodes, or, with
// `nodes` 0 (unknown), over as few nodes of `gpus_per_node` as hold them.
// Throws InputError when `workers` < 1 or fewer than `nodes`.
std::vector<int> sample_placement(int workers, int nodes, int gpus_per_node);

// One step per distinct (batch, workers, nodes) of `set`'s trials: the median
// of their epoch times as seconds per step, epoch_time · batch · workers /
// dataset_size. Samples measure no synchronisation, so no sync time is set.
// Throws InputError naming set.source when the set has no dataset size or no
// trials.
std::vector<models::StepSample> sample_steps(const SampleSet& set, int gpus_per_node);

// The steps of trials measured on `target` for a job whose samples elsewhere
// give `job_dataset_size`: the trials take it where they give none (the same
// job, the same data). Throws InputError naming trials.source when their
// times were predicted by a move (times_predicted_from): a trial corrects the
// move with what the target measured, not with the move's own guess.
std::vector<models::StepSample> trial_steps(SampleSet trials, std::optional<long> job_dataset_size,
                                            const std::string& target, int gpus_per_node);

// `set` as if run on the target: every trial and curve point placed on the
// target's nodes of `gpus_per_node` (packed, as a plan there runs them; the
// `nodes` column follows), its epoch time `model`'s prediction there (steps
// per epoch × predicted seconds per step), `hardware` set to `target`,
// time_spread dropped and times_predicted_from set to `source` (kept when
// already set): the times are predictions, not measurements.
// times_predicted_log_sd is the median of `model`'s log_sd over the moved
// samples (combined in quadrature with one already set: moved twice, both
// errors stand); unset when the model gives none. `model` must be fitted.
SampleSet transferred_samples(const SampleSet& set, const models::TransferModel& model, const std::string& source,
                              const std::string& target, int gpus_per_node);

// A sample set moved to another GPU (`trainplan transfer --samples`,
// POST /transfer).
struct SamplesTransfer {
  SampleSet moved;             // transferred_samples' answer
  std::string source, target;  // the hardware's names
  std::string network;         // the layer graph the move used; empty: none known
  size_t source_steps = 0;     // configurations the samples measured
  size_t target_trials = 0;    // steps measured on the target that corrected the move
  // One per distinct (batch, workers, nodes) of the samples' trials, in that order.
  struct Configuration {
    double batch = 0;
    int workers = 0, nodes = 0, target_nodes = 0;
    double measured_s = 0, predicted_s = 0;  // epoch times, seconds; measured: the median of its trials
    // The 80% interval about predicted_s (the model's log_sd there); unset when the model gives none.
    std::optional<double> low80_s, high80_s;
    // The model's own source fit at this configuration over predicted_s: the
    // hardware's effect, without the fit's miss of this measurement.
    double speed_up = 1;
  };
  std::vector<Configuration> configurations;
  // Said to the user: a catalog GPU in the samples' hardware column that is not `source`.
  std::vector<std::string> notes;
  nlohmann::json ratios;    // the hardware ratios each part was scaled by (scoring::ratios_json)
  std::string description;  // the source fit, the ratios and the trials' corrections, for people
};

// Fits split-transfer on `set` (measured on `from`), corrected by `trials`
// (steps measured on `to`; may be empty), and moves `set` to `to`.
// `network` is the layer graph; null: the samples' model when the network
// zoo knows it. `precision`: what the training ran its matrix work in and
// will run it in on `to`, when the user knows it (models::TrainingPrecision;
// kAuto: the model's guess, and the same on `to`). Throws
// InputError as sample_steps and the fit do.
SamplesTransfer transfer_samples(const SampleSet& set, const structure::HardwareProfile& from,
                                 const structure::HardwareProfile& to, std::vector<models::StepSample> trials,
                                 const structure::LayerGraph* network = nullptr,
                                 models::TrainingPrecision precision = {});

// {"from_gpu", "to_gpu", "network", "target_trials", "ratios",
// "times_predicted_log_sd" (null: none), "configurations": [{"batch",
// "workers", "nodes", "target_nodes", "source_epoch_time_s",
// "target_epoch_time_s", "target_epoch_time_low80_s",
// "target_epoch_time_high80_s" (null: no interval), "speed_up"}], "notes"}.
nlohmann::json to_json(const SamplesTransfer& t);

}  // namespace trainplan::app
