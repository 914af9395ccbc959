// Which registered models the planner uses. "auto" picks, separately for the
// epoch time and the metric, the registered model with the lowest 5-fold
// cross-validated MRE (equation 12, scoring::evaluate_model) on the samples.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.h"
#include "models/registry.h"

namespace trainplan::scoring {

// The --model default of `trainplan plan`; one constant so it can change in one place.
inline constexpr const char* kDefaultPlanModel = "auto";

struct ModelChoice {
  std::string time_model, metric_model;
  std::string reason;  // one line per part: how it was chosen (with the CV MRE for "auto")
  // The chosen part's CV MRE where "auto" computed it (what
  // scoring::part_cv_mre gives with the same folds and seed); nullopt otherwise.
  std::optional<double> time_cv, metric_cv;
  // The folds those were computed with (0 where not computed).
  int time_folds = 0, metric_folds = 0;
};

// Resolves `time_name` and `metric_name` (either may be "auto"). Throws
// InputError when "auto" finds no model that can be scored on the samples.
// "auto" cross-validates the registered models that do not opt out
// (models::AutoChoice), each made with `params`, on `folds` folds
// (scoring::kFoldsAuto: chosen per part by scoring::cv_folds_for).
ModelChoice choose_models(const std::string& time_name, const std::string& metric_name, const SampleSet& samples,
                          int folds = 5, uint64_t seed = 1, const models::ModelParams& params = {});

}  // namespace trainplan::scoring
