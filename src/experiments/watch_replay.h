// The live forecast judged on replayed runs (`trainplan watch --replay`):
// every validation curve of the Pollux traces is fed to an EpochForecaster
// one row (one epoch of progress) at a time, and after a share of the run
// (the checkpoints) it forecasts the epoch at which the run first meets each
// target it does meet later. Targets lie a share of the way from the curve's
// first evaluation to its best (`target_shares`), so they exist in either
// metric direction and every run reaches them; targets already met at the
// checkpoint are not forecasts and are left out.
//
// Error: |predicted - true| / true epoch; a forecast that the run never gets
// there counts as an infinite error. Coverage: the share of forecasts whose
// interval holds the true epoch (a forecast without an interval misses).
// Intervals are calibrated two ways: `own`, the run's own past errors only;
// `lono`, also the errors of every run of the other networks
// (leave-one-network-out: never the network being judged).
#pragma once
#include <string>
#include <vector>

#include "models/epoch_forecaster.h"

namespace trainplan::experiments {

struct WatchReplayParams {
  // Shares of a run's rows seen before forecasting (rounded up to whole rows).
  // Default: 0.1, 0.25, 0.5.
  std::vector<double> checkpoints = {0.1, 0.25, 0.5};
  // Targets, as shares of the way from the first evaluation to the run's best.
  // Default: 0.8, 0.9, 0.98 (where the co-configuration benchmark's targets lie).
  std::vector<double> target_shares = {0.8, 0.9, 0.98};
  // Checkpoints that saw fewer rows are skipped (a curve has three parameters).
  // Default: 3.
  size_t min_rows_seen = 3;
  std::vector<models::ForecastMethod> methods = {models::ForecastMethod::kNaive, models::ForecastMethod::kOptimus,
                                                 models::ForecastMethod::kEnsemble};
  // The forecasters' parameters except method and direction (set per run).
  models::EpochForecasterParams forecaster;
};

// One method at one checkpoint, over every forecast made there.
struct WatchReplayCell {
  models::ForecastMethod method = models::ForecastMethod::kEnsemble;
  double checkpoint = 0;
  size_t forecasts = 0;
  size_t never = 0;  // forecasts that the target is never met
  double median_error = 0, p90_error = 0;  // relative; +infinity when that many forecasts are `never`
  double coverage_own = 0, coverage_lono = 0;
  double median_width_own = 0, median_width_lono = 0;  // (hi - lo) / true epoch, over forecasts with an interval
};

struct WatchReplayReport {
  std::vector<WatchReplayCell> cells;  // methods x checkpoints, in the params' order
  std::vector<std::string> networks;   // those with curves used
  size_t curves = 0;                   // curves replayed
  std::vector<std::string> skipped;    // curves left out, with why
};

// The calibration errors (models::ForecastError) of every run in `dirs`,
// each replayed to its end with a forecaster of parameters `fp` (direction
// set per run): the prior a live forecast may be calibrated on
// (`watch --prior`). Runs of `exclude` (a network's name) are left out.
std::vector<models::ForecastError> replay_calibration_errors(const std::vector<std::string>& dirs,
                                                             const models::EpochForecasterParams& fp,
                                                             size_t min_rows = 6, const std::string& exclude = "");

// Replays every curve of the traces in `dirs` (Pollux format, read with
// replay::ReplayOracle for the metric direction). Throws InputError when no
// curve can be replayed.
WatchReplayReport run_watch_replay(const std::vector<std::string>& dirs, const WatchReplayParams& p);

}  // namespace trainplan::experiments
