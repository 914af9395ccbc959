// Optimus's training-loss curve (Peng et al., EuroSys'18; docs/MODELS.md):
//   l(k) = 1 / (beta0 * k + beta1) + beta2,   beta >= 0,
// with k the training step (or any progress measure).
//
// Fitting, as Optimus does it, by non-negative least squares:
//  1. Normalise: divide losses by their largest value and k by its largest
//     value, so the NNLS columns are of order one.
//  2. For a fixed asymptote beta2 < min loss the model is linear in (beta0,
//     beta1): 1/(l - beta2) = beta0 k + beta1. Solve it by NNLS with rows
//     weighted so that the linearised residual equals the residual in l:
//     weight u_obs * u_fit (u = l - beta2), u_fit from the previous solve,
//     starting from u_obs^2 (d(1/u) = -du/u^2); four reweighted solves.
//  3. beta2 is searched on a grid over [0, min loss) and refined by golden
//     section, keeping the value with the least squared error in l.
//  4. Outliers: while some point's residual lies more than `outlier_z`
//     robust standard deviations (1.4826 MAD, floored at 1e-4 of the largest
//     loss) from the median residual, the worst such point is dropped and the
//     fit repeated; at most `max_outlier_fraction` of the points, and never
//     below `min_points` points.
// Online use: add_point() appends one observation and refits on all points
// kept so far, so after the same points it equals the batch fit.
// Pooled points: a point may stand for w observations at one k, given by
// their mean loss, w and the sums of their deviations from the mean squared,
// cubed and to the fourth (PooledLosses). Every reweighted solve and squared
// error is then the one of the w observations (the weights of step 2 are
// powers of u, whose sums over the observations follow from those moments);
// an outlier pass judges a point's mean by sqrt(w) times its deviation (the
// mean of w observations strays sqrt(w) times less by chance) and drops the
// whole point, its w observations counting against max_outlier_fraction and
// min_points.
#pragma once
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace trainplan::models {

struct OptimusCurveParams {
  int beta2_grid = 48;        // grid points over [0, min loss) before golden refinement
  int golden_iterations = 40;
  double outlier_z = 4.0;     // robust z beyond which a point is an outlier; <= 0 disables
  double max_outlier_fraction = 0.2;  // never drop more than this share of the points
  size_t min_points = 3;
};

class OptimusCurve {
 public:
  explicit OptimusCurve(OptimusCurveParams p = {}) : p_(p) {}

  // Each point's observations about its mean loss: their count w (>= 1),
  // sums of deviations squared, cubed and to the fourth, and their least and
  // largest loss (NaN: the point's own; b2 stays below every observation,
  // and losses are scaled by the largest).
  struct Spread {
    double w = 1, m2 = 0, m3 = 0, m4 = 0;
    double lo = NAN, hi = NAN;
  };
  // Fits all points; losses must be finite and > 0, k finite and >= 0.
  // Throws std::invalid_argument on bad input or fewer than min_points points.
  // `spread` (empty: one observation each) makes the points pooled ones (above).
  void fit(const std::vector<double>& k, const std::vector<double>& loss, const std::vector<Spread>& spread = {});
  // Online: adds one observation; refits once min_points points are held.
  void add_point(double k, double loss);

  bool fitted() const { return fitted_; }
  // Predicted loss at step k. Call only when fitted().
  double predict(double k) const;
  // The least k >= 0 whose predicted loss is <= target; nullopt if the curve
  // never gets there (target <= beta2).
  std::optional<double> steps_to(double target) const;

  // Parameters in the caller's units: l = 1/(beta0 k + beta1) + beta2.
  double beta0() const { return beta0_; }
  double beta1() const { return beta1_; }
  double beta2() const { return beta2_; }
  size_t points() const { return static_cast<size_t>(count_); }  // observations (weights summed)
  size_t outliers() const { return outliers_; }                    // observations dropped
  double rmse() const { return rmse_; }  // over the points kept, caller's units
  std::string describe() const;

 private:
  struct Fit {
    double b0 = 0, b1 = 0, b2 = 0, sse = 0;
  };
  // One NNLS fit at asymptote b2 on normalised points (kept[i] true).
  Fit fit_at(double b2, const std::vector<double>& kn, const std::vector<double>& ln,
             const std::vector<bool>& kept) const;
  Fit fit_kept(const std::vector<double>& kn, const std::vector<double>& ln, const std::vector<bool>& kept) const;
  void refit();

  OptimusCurveParams p_;
  std::vector<double> k_, loss_;
  std::vector<Spread> spread_;
  std::vector<Spread> spread_n_;  // spread_ in the normalised units of refit()
  double count_ = 0;  // sum of w_
  bool fitted_ = false;
  double beta0_ = 0, beta1_ = 0, beta2_ = 0, rmse_ = 0;
  size_t outliers_ = 0;
};

}  // namespace trainplan::models
