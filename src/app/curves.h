// What `POST /curves` answers (docs/SERVER.md), for the page's samples view
// (docs/WEB.md): the measured points, the fitted models' curves over them
// with their conformal band, and each candidate model's scores as
// `trainplan evaluate --json` gives them.
//
//   time:   epoch time against workers, one curve per measured per-worker
//           batch (up to `curves`, spread evenly), nodes packed as the
//           samples were (SampleSet::packed_nodes)
//   metric: the metric against epochs, one curve per measured (batch,
//           workers) (up to `curves`, spread evenly over the global batches),
//           from the fewest epochs a metric was measured at (a trial's or a
//           curve row's: no extrapolation before the data) to 1.1 x the
//           longest trial
//
// Each curve's band is the conformal interval at `confidence` of the chosen
// model (uncertainty/conformal.h, what /predict reports); null, with a note,
// when the conformal copy cannot be fitted on these samples.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/model_source.h"
#include "scoring/model_choice.h"

namespace trainplan::app {

struct CurvesQuery {
  std::string model = scoring::kDefaultPlanModel;
  std::string time_model, metric_model;  // override `model` per part when not empty
  double confidence = 0.9;
  int curves = 6;         // curves per chart, 1..32
  int steps = 80;         // points per metric curve, 2..1000
  int max_points = 64;    // worker counts per time curve, 2..1000 (spread over 1..the most sampled)
  // Models scored as `trainplan evaluate` scores them; empty: none.
  std::vector<std::string> evaluate;
  int folds = 5;
  uint64_t seed = 1;
};

// Throws InputError for a confidence outside (0, 1), a count out of its
// range, folds < 2 or an unknown model name.
void check_curves_query(const CurvesQuery& q);

// The answer of /curves: {"samples", "n_samples", "direction",
// "time_model", "metric_model", "choice", "confidence",
// "time": {"model", "points", "curves": [{"batch", "workers", "epoch_time_s", "lo", "hi"}]},
// "metric": {...} or null (time-only samples),
// "evaluation": as `trainplan evaluate --json` (null when `evaluate` is empty),
// "notes": [...]}. Throws InputError as the library does.
nlohmann::json curves(ModelSource& src, const CurvesQuery& q, const std::string& label);

}  // namespace trainplan::app
