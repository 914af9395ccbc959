// A live forecast for one running job: fed its epochs one at a time (epoch,
// validation metric, optionally the epoch's wall time), it predicts the epoch
// at which the metric first reaches a target, an interval around it, the time
// until then and whether a deadline holds.
//
// The method is a parameter:
//  * naive:    the last epoch's slope, extended in a straight line (seed 001's
//              simplest extrapolation, applied to the metric).
//  * optimus:  Optimus's curve 1/(b0 k + b1) + b2 refitted online by NNLS on
//              every epoch so far (models/optimus_curve.h, faithful; metrics
//              become losses by models/metric_loss.h).
//  * ensemble: four curve families y = a + b g(k) (power law k^-c,
//              exponential e^-ck, hyperbola 1/(1+ck), logarithm -ln k), each
//              fitted by weighted least squares with recent epochs weighted
//              more (half-life `recent_half_life` of the epochs seen), and
//              weighted by how well a fit on the earlier epochs predicted the
//              last `holdout_share` of them (weight 1/mse). The predicted
//              epoch is the weighted median of the families that reach the
//              target (one that levels off short of it says more about its
//              asymptote than about the run: counted as +infinity, the
//              replay's forecasts at 10% of a run are "never" for 24 of 78
//              targets that the runs reach); when those that level off hold
//              most of the weight, the interval's upper end is +infinity.
//
// Intervals are conformal on log(true epoch / predicted epoch) and never use
// an epoch not yet seen: every fit is kept, and when the run first reaches a
// new best at epoch j, each earlier fit that had not seen that level yet is
// scored on it, giving a calibration error e = log(j / predicted) at horizon
// h = predicted / epochs seen then. Errors are stored per unit of
// log(1 + h), so that they transfer to longer horizons than the run has seen
// (an early forecast looks further ahead than any of its own past ones). A
// forecast at horizon H takes the `neighbours` errors nearest in log h, from
// the run's own past and from `prior` errors (other runs, given by the
// caller), and its interval is predicted * exp(z_q log(1 + H)) at the
// quantiles (1 -+ coverage) / 2, widened where needed to hold the predicted
// epoch itself.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.h"
#include "models/optimus_curve.h"

namespace trainplan::models {

enum class ForecastMethod { kNaive, kOptimus, kEnsemble };
const char* to_string(ForecastMethod m);  // "naive", "optimus", "ensemble"
// Parses the names above; nullopt otherwise.
std::optional<ForecastMethod> parse_forecast_method(const std::string& s);

// One calibration error (see the header comment).
struct ForecastError {
  double horizon = 1;  // predicted epoch / epochs seen when it was made (>= 1)
  double z = 0;        // log(true / predicted) / log(1 + horizon)
};

struct EpochForecasterParams {
  // Parameters that affect what is predicted.
  ForecastMethod method = ForecastMethod::kEnsemble;
  // Whether larger metrics are better (accuracy) or smaller (loss, WER).
  MetricDirection direction = MetricDirection::kMax;
  // Epochs needed before a curve is fitted; naive needs 2 whatever this says.
  // Default: 3 (a curve has three parameters).
  size_t min_points = 3;
  // Ensemble: the weight of an epoch halves every this share of the epochs
  // seen, counted back from the last. Default: 0.5. <= 0: equal weights.
  double recent_half_life = 0.5;
  // Ensemble: the share of the epochs (the last ones) each family predicts
  // from a fit on the rest, to weigh the families. Default: 0.3.
  double holdout_share = 0.3;
  OptimusCurveParams optimus;

  // Parameters that affect the interval.
  // Nominal coverage of the interval, in (0, 1). Default: 0.8.
  double coverage = 0.8;
  // Calibration errors used per forecast: those nearest in horizon.
  // Default: 60.
  size_t neighbours = 60;
  // Fewer calibration errors than this: no interval. Default: 5.
  size_t min_calibration = 5;
};

// A forecast for one target, made after the epochs seen so far.
struct EpochForecast {
  size_t epochs_seen = 0;
  double last_epoch = 0;       // the latest epoch number fed
  double metric = 0;           // the latest metric
  double best = 0;             // the best metric so far
  std::optional<double> reached_at;  // the epoch at which the target was first met, when it was
  // The predicted epoch of first meeting the target: nullopt when the fit
  // never gets there (or too few epochs were seen to fit).
  std::optional<double> epoch;
  bool never = false;          // fitted, but the curve never meets the target
  // The interval at `coverage`; hi may be +infinity. Absent without
  // enough calibration errors or without a predicted epoch.
  std::optional<double> epoch_lo, epoch_hi;
  // Seconds from the start of the first epoch: elapsed (the epoch times fed
  // so far, summed) and predicted until the target, from the median of the
  // last five epoch times; absent without epoch times.
  std::optional<double> elapsed_s, finish_s, finish_lo_s, finish_hi_s;
};

// Whether a job meets a deadline (seconds from the start of its first epoch)
// on its way to the target: met when the whole interval finishes by it (or
// the target was reached by it), missed when even its early end is later
// (or the curve never gets there), uncertain in between, unknown without
// epoch times or a forecast.
enum class DeadlineVerdict { kMet, kMissed, kUncertain, kUnknown };
const char* to_string(DeadlineVerdict v);  // "met", "missed", "uncertain", "unknown"
DeadlineVerdict deadline_verdict(const EpochForecast& f, double deadline_s);

class EpochForecaster {
 public:
  explicit EpochForecaster(EpochForecasterParams p = {}, std::vector<ForecastError> prior = {});

  // Adds one epoch. Epochs must increase; metric finite; epoch_time_s > 0
  // when given. Throws std::invalid_argument otherwise.
  void add(double epoch, double metric, std::optional<double> epoch_time_s = std::nullopt);

  // The forecast of reaching `target` (under the direction) after the epochs
  // fed so far.
  EpochForecast forecast(double target) const;

  const EpochForecasterParams& params() const { return p_; }
  size_t epochs_seen() const { return epochs_.size(); }
  // The epochs fed so far, their metrics, and their epoch times (empty
  // unless every epoch came with one), in the order fed.
  const std::vector<double>& epochs() const { return epochs_; }
  const std::vector<double>& metrics() const { return metric_; }
  const std::vector<double>& epoch_times() const { return times_; }
  // The metric the fit to the epochs so far puts at `epoch`: the weighted
  // median of its curves' values there; with `reaching`, of the curves that
  // reach that target when any does (the curves whose epochs forecast()
  // takes the median of, so this curve meets the target near the forecast).
  // nullopt without such a fit, or where no curve is finite.
  std::optional<double> fitted_metric(double epoch, std::optional<double> reaching = std::nullopt) const;
  // The run's own calibration errors so far (header comment).
  const std::vector<ForecastError>& own_errors() const { return own_errors_; }
  // Past these, the older half of the fits kept (those whose forecasts are
  // scored as the run improves) and of the run's own errors is thinned to
  // every other one: a run of thousands of epochs then costs a bounded time
  // per epoch, where scoring every earlier fit at every new best made the
  // whole run's work grow as the cube of its length. Runs shorter than this
  // are untouched.
  // (A run that improves every epoch adds as many errors as fits kept: the
  // errors' cap is past 256 · 257 / 2, so that it too leaves such runs whole.)
  static constexpr size_t kMostFits = 256, kMostOwnErrors = 40000;
  // Past this many epochs a fit sees the newest half whole and the older
  // ones thinned evenly to the other half (fit_ensemble).
  static constexpr size_t kMostFitPoints = 512;

  // One fitted curve in y = direction-adjusted metric (smaller is better).
  enum class Family { kLine, kOptimus, kPower, kExp, kHyperbola, kLog };
  struct Curve {
    Family family = Family::kLine;
    double a = 0, b = 0, c = 0;  // y = a + b g_c(k); kOptimus: y = 1/(a k + b) + c
    double scale = 1;            // epochs are divided by it inside g (kExp, kHyperbola)
    double weight = 1;
    // The least k at which y(k) <= level; nullopt when never. The fitted
    // families improve with k, so y stays there; a line that worsens (the
    // naive forecast of a run getting worse) reaches no level it is not
    // already at for good: nullopt unless it is flat at or under the level.
    std::optional<double> epoch_at(double level) const;
    double value(double k) const;
  };
  // The fit after the latest epoch: its curves (empty before enough epochs).
  const std::vector<Curve>& curves() const { return fits_.empty() ? empty_ : fits_.back().curves; }

 private:
  struct Fit {
    double epochs_seen = 0;  // the last epoch fed then
    double step = 1;         // the last epoch's increment then
    double best_y = 0;       // the best y then
    std::vector<Curve> curves;
  };
  double to_y(double metric) const { return p_.direction == MetricDirection::kMax ? -metric : metric; }
  Fit fit_now() const;
  std::vector<Curve> fit_ensemble() const;
  // The predicted epoch of reaching y-level `level` from fit `f`; nullopt: never.
  static std::optional<double> predict(const Fit& f, double level);
  // The share of fit `f`'s weight in families that never reach `level`.
  static double never_weight(const Fit& f, double level);
  void record_errors(double epoch, double y);


  EpochForecasterParams p_;
  std::vector<ForecastError> prior_, own_errors_;
  // The median time of the last five timed epochs (times_ not empty): the
  // run's current rate, for the forecast and for an epoch that lacks its time.
  double recent_epoch_time() const;
  std::vector<double> epochs_, y_, metric_, times_;
  std::vector<Fit> fits_;
  std::unique_ptr<OptimusCurve> optimus_;
  double optimus_offset_ = 0;
  bool optimus_ok_ = false;
  std::vector<Curve> empty_;
};

}  // namespace trainplan::models
