// How well Optimus's resource-speed model (models/optimus_speed.h) predicts
// measured speeds: equation 12 in sample and k-fold cross-validated, folds
// dealt by scoring::kfold as every other cross-validation here.
#pragma once
#include <cstdint>
#include <vector>

#include "models/optimus_speed.h"

namespace trainplan::scoring {

// Equation 12 (scoring::mre): sum |pred - true| / sum true over `points`.
// REQUIRES: points not empty, speeds not all 0.
double speed_mre(const models::OptimusSpeedModel& m, const std::vector<models::SpeedPoint>& points);

// k-fold cross-validated equation 12, pooled over the folds (kfold with
// `seed`). Throws InputError naming --cv when there are fewer points than
// folds, or a fold leaves fewer points to train on than the model has
// parameters (saying the least --cv that would do).
double speed_cv_mre(const std::vector<models::SpeedPoint>& points, models::OptimusSpeedParams params, int folds,
                    uint64_t seed);

}  // namespace trainplan::scoring
