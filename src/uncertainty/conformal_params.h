// The settings of the conformal wrappers (conformal.h) and their calibrators
// (metric_calibrators.h), with their defaults.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "models/model.h"

namespace trainplan::uncertainty {

struct ConformalParams {
  int folds = 5;
  uint64_t seed = 1;  // shuffles configurations into folds, and runs' samples into run folds
  // Metric models: Mondrian bins; at most `metric_bins`, and only as many as
  // give each bin `min_per_bin` residuals. Each rule below needs
  // `min_per_bin` residuals too.
  int metric_bins = 3;
  int min_per_bin = 20;
  // What the metric's Mondrian bins split on: the predicted metric, or the
  // model's local slope in epochs.
  enum class Taxonomy { kPredicted, kSlope };
  Taxonomy taxonomy = Taxonomy::kSlope;
  // Metric models at a measured run (batch, workers): within-run residuals
  // from run_folds folds of each run's samples (RunGapRule); 0 or 1 turns the
  // run-gap and between rules off.
  int run_folds = 3;
  // Metric models: the pessimistic end of an interval or bound (the lower for
  // a metric to maximise, the upper for one to minimise) never promises a
  // metric better than the best sample the model was fitted on.
  bool hold_to_best_measured = true;
  // Metric models between two sampled epochs of a measured run: the between
  // rule (BetweenSamplesRule) there instead of the others. false: the others
  // everywhere.
  bool between_rule = true;
  // The between rule's floor in gap |ln(e / e')|: next to a sample the error
  // does not vanish (per-epoch noise, a curve misplaced by a fraction of an epoch).
  double between_gap_floor = 0.3;
  // Metric models past the last sampled epoch of every run: widen both ends
  // to the beyond rule's (BeyondRule) where it is wider. false: the others there too.
  bool beyond_rule = true;
  // The samples at the latest `beyond_holdout` of the sampled epochs (by count)
  // are the forward fold; `beyond_gap_floor` is the floor of its scale.
  double beyond_holdout = 1.0 / 3;
  double beyond_gap_floor = 0.1;
  // Metric models: pin the wrapped model to each measured run's samples
  // (uncertainty/metric_run_pinned.h), in the full fit and in every fold's, so
  // the within-run residuals are those of pinned interpolations. false: the
  // model as registered.
  bool pin_runs = false;
};

// A fresh unfitted model; the wrappers call it once per fold.
using TimeFactory = std::function<std::unique_ptr<models::TimeModel>()>;
using MetricFactory = std::function<std::unique_ptr<models::MetricModel>()>;

}  // namespace trainplan::uncertainty
