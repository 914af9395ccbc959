#include "models/optimus_curve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <utility>

#include "core/cancel.h"
#include "core/median.h"
#include "numerics/golden_section.h"
#include "numerics/nnls.h"

namespace trainplan::models {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Curves on more observations than this solve their reweighted least
// squares from the normal equations (fit_at). The paper's sampling plan has
// at most 240.
constexpr double kNormalEquationsObservations = 256;

// argmin ||A x - z||^2 over x >= 0 for a two-column A, from A^T A = [aa ab;
// ab bb] and A^T z = (az, bz): the convex problem's optimum is the
// unconstrained one when it is feasible, else on a face, the better of the
// one-variable optima (or 0).
std::pair<double, double> nnls2(double aa, double ab, double bb, double az, double bz) {
  const double det = aa * bb - ab * ab;
  if (det > 0) {
    const double x0 = (bb * az - ab * bz) / det, x1 = (aa * bz - ab * az) / det;
    if (x0 >= 0 && x1 >= 0) return {x0, x1};
  }
  // f(x) - z^T z = x^T (A^T A) x - 2 (A^T z)^T x on each face.
  const double x0 = aa > 0 ? std::max(0.0, az / aa) : 0.0, x1 = bb > 0 ? std::max(0.0, bz / bb) : 0.0;
  const double f0 = aa * x0 * x0 - 2 * az * x0, f1 = bb * x1 * x1 - 2 * bz * x1;
  return f0 <= f1 ? std::pair{x0, 0.0} : std::pair{0.0, x1};
}

}  // namespace

OptimusCurve::Fit OptimusCurve::fit_at(double b2, const std::vector<double>& kn, const std::vector<double>& ln,
                                       const std::vector<bool>& kept) const {
  size_t n = 0;
  for (bool k : kept) n += k;
  Fit f;
  f.b2 = b2;
  // Iteratively reweighted: a row weighted by u_obs * u_fit has linearised
  // residual u_obs u_fit (1/u_fit - 1/u_obs) = u_obs - u_fit, exactly the
  // residual in l. The first pass has no fit yet and uses u_obs^2.
  // Beyond kNormalEquationsObservations observations each solve sums the
  // rows' normal equations and solves the two-variable NNLS exactly (the
  // unconstrained optimum when both coefficients are >= 0, else the better
  // of the two one-variable optima): no n x 2 matrix and QR per solve. Up to
  // it, the general NNLS on the rows.
  const bool normal = count_ > kNormalEquationsObservations;
  for (int pass = 0; pass < 4; ++pass) {
    Eigen::MatrixXd A(normal ? 0 : n, 2);
    Eigen::VectorXd z(normal ? 0 : n);
    double aa = 0, ab = 0, bb = 0, az = 0, bz = 0;  // the normal equations: A^T A and A^T z
    size_t r = 0;
    for (size_t i = 0; i < kn.size(); ++i) {
      if (!kept[i]) continue;
      double u = ln[i] - b2;  // > 0: b2 < min loss
      double d = f.b0 * kn[i] + f.b1;
      double w = pass > 0 && d > 0 ? u / d : u * u;
      double target = w / u;
      if (const Spread& s = spread_n_[i]; s.w != 1) {
        // The pooled observations' rows u_i^2 [k 1] (u_i^2) or u_i/d [k 1]
        // (1/d) sum in the normal equations to one row of scale sqrt(S) and
        // target T/sqrt(S): S = sum u_i^4, T = sum u_i^3, or S = sum u_i^2 / d^2,
        // T = sum u_i / d^2, with sum u_i^m from the central moments.
        const double p1 = s.w * u, p2 = s.w * u * u + s.m2;
        double S, T;
        if (pass > 0 && d > 0) {
          S = p2 / (d * d), T = p1 / (d * d);
        } else {
          S = s.w * u * u * u * u + 6 * u * u * s.m2 + 4 * u * s.m3 + s.m4;
          T = s.w * u * u * u + 3 * u * s.m2 + s.m3;
        }
        w = std::sqrt(S);
        target = T / w;
      }
      if (normal) {
        const double a = w * kn[i], b = w;
        aa += a * a, ab += a * b, bb += b * b, az += a * target, bz += b * target;
        continue;
      }
      A(r, 0) = w * kn[i];
      A(r, 1) = w;
      z(r) = target;
      ++r;
    }
    if (normal) {
      const auto [b0, b1] = nnls2(aa, ab, bb, az, bz);
      f.b0 = b0, f.b1 = b1;
      continue;
    }
    auto res = numerics::nnls(A, z);
    f.b0 = res.x(0);
    f.b1 = res.x(1);
  }
  for (size_t i = 0; i < kn.size(); ++i) {
    if (!kept[i]) continue;
    double d = f.b0 * kn[i] + f.b1;
    if (!(d > 0)) return Fit{f.b0, f.b1, b2, kInf};
    double e = 1.0 / d + b2 - ln[i];
    f.sse += spread_n_[i].w * e * e + spread_n_[i].m2;
  }
  return f;
}

OptimusCurve::Fit OptimusCurve::fit_kept(const std::vector<double>& kn, const std::vector<double>& ln,
                                         const std::vector<bool>& kept) const {
  double lmin = kInf;
  for (size_t i = 0; i < ln.size(); ++i)
    if (kept[i]) lmin = std::min(lmin, std::isnan(spread_n_[i].lo) ? ln[i] : spread_n_[i].lo);
  const double top = lmin * (1 - 1e-9);  // b2 must stay below every loss
  const int g = std::max(2, p_.beta2_grid);
  Fit best{0, 0, 0, kInf};
  int best_j = 0;
  for (int j = 0; j < g; ++j) {
    // Each grid point solves every point's least squares: a request's time limit is checked between them
    // (the two-variable solve never reaches nnls's own check).
    check_cancelled();
    Fit f = fit_at(top * j / (g - 1), kn, ln, kept);
    if (f.sse < best.sse) best = f, best_j = j;
  }
  // Golden-section refinement between the neighbours of the best grid point.
  const double a = top * std::max(0, best_j - 1) / (g - 1), b = top * std::min(g - 1, best_j + 1) / (g - 1);
  numerics::golden_section_minimize(
      [&](double b2) {
        const Fit f = fit_at(b2, kn, ln, kept);
        if (f.sse < best.sse) best = f;
        return f.sse;
      },
      a, b, p_.golden_iterations);
  return best;
}

void OptimusCurve::refit() {
  const size_t m = k_.size();                     // points
  const size_t n = static_cast<size_t>(count_);   // observations
  if (n < std::max<size_t>(p_.min_points, 2)) throw std::invalid_argument(fmt::format(
      "Optimus curve needs at least {} points, got {}", std::max<size_t>(p_.min_points, 2), n));
  double kmax = *std::max_element(k_.begin(), k_.end());
  double lmax = -kInf;
  for (size_t i = 0; i < m; ++i) lmax = std::max(lmax, std::isnan(spread_[i].hi) ? loss_[i] : spread_[i].hi);
  if (!(kmax > 0)) kmax = 1;
  std::vector<double> kn(m), ln(m);
  spread_n_.resize(m);
  for (size_t i = 0; i < m; ++i) {
    kn[i] = k_[i] / kmax, ln[i] = loss_[i] / lmax;
    const Spread& s = spread_[i];
    spread_n_[i] = {s.w, s.m2 / (lmax * lmax), s.m3 / (lmax * lmax * lmax), s.m4 / (lmax * lmax * lmax * lmax),
                    s.lo / lmax, s.hi / lmax};
  }
  std::vector<bool> kept(m, true);
  Fit f = fit_kept(kn, ln, kept);
  size_t dropped = 0;  // observations
  const size_t max_drop = static_cast<size_t>(p_.max_outlier_fraction * double(n));
  // The worst point per pass: a gross outlier distorts the first fit, and
  // with it the residuals of good points near it. With many flagged at once
  // (thousands of points), the worst sixteenth of them per pass, so that
  // the passes grow as the logarithm of the points dropped, not linearly
  // (20,000 points took 71 s one at a time); under 32 flagged, one.
  while (p_.outlier_z > 0 && dropped < max_drop && std::isfinite(f.sse)) {
    check_cancelled();
    std::vector<double> r, rw;
    std::vector<double> res(m, 0);
    for (size_t i = 0; i < m; ++i)
      if (kept[i]) res[i] = ln[i] - (1.0 / (f.b0 * kn[i] + f.b1) + f.b2), r.push_back(res[i]), rw.push_back(spread_[i].w);
    const bool unit = std::all_of(rw.begin(), rw.end(), [](double x) { return x == 1; });
    double med = unit ? median(r) : weighted_median(r, rw);
    // A point's deviation on one observation's scale: the mean of w
    // observations deviates sqrt(w) times less by chance, so sqrt(w) |r - med|
    // is judged by the same robust scale and threshold as one observation's.
    auto dev_of = [&](size_t i) {
      const double d = std::abs(res[i] - med);
      return spread_[i].w == 1 ? d : std::sqrt(spread_[i].w) * d;
    };
    std::vector<double> dev;
    for (size_t i = 0; i < m; ++i)
      if (kept[i]) dev.push_back(dev_of(i));
    // Floor the scale so that an exact fit does not flag rounding noise.
    double scale = std::max(1.4826 * (unit ? median(dev) : weighted_median(dev, rw)), 1e-4);
    // Drop the worst offenders first, within the budget.
    std::vector<std::pair<double, size_t>> bad;
    for (size_t i = 0; i < m; ++i)
      if (kept[i] && dev_of(i) / scale > p_.outlier_z) bad.push_back({dev_of(i), i});
    if (bad.empty() || n - dropped <= p_.min_points) break;
    const size_t per_pass = std::max<size_t>(1, bad.size() / 16);
    std::partial_sort(bad.begin(), bad.begin() + long(per_pass), bad.end(), std::greater<>());
    size_t dropped_now = 0;
    for (size_t j = 0; j < per_pass; ++j) {
      const size_t worst = bad[j].second;
      const size_t weight = static_cast<size_t>(spread_[worst].w);
      if (dropped + weight > max_drop || n - dropped <= p_.min_points) break;
      kept[worst] = false;
      dropped += weight;
      ++dropped_now;
    }
    if (dropped_now == 0) break;
    f = fit_kept(kn, ln, kept);
  }
  if (!std::isfinite(f.sse)) throw std::invalid_argument("Optimus curve: no finite fit (are the losses positive?)");
  // Back to the caller's units: l = lmax / (b0 k/kmax + b1) + lmax b2.
  beta0_ = f.b0 / (kmax * lmax);
  beta1_ = f.b1 / lmax;
  beta2_ = f.b2 * lmax;
  outliers_ = dropped;
  rmse_ = lmax * std::sqrt(f.sse / double(n - dropped));
  fitted_ = true;
}

void OptimusCurve::fit(const std::vector<double>& k, const std::vector<double>& loss,
                       const std::vector<Spread>& spread) {
  if (k.size() != loss.size() || (!spread.empty() && spread.size() != k.size()))
    throw std::invalid_argument("Optimus curve: k, loss and spread differ in length");
  for (const Spread& s : spread)
    if (!(s.w >= 1 && std::isfinite(s.w))) throw std::invalid_argument("Optimus curve: a point's weight counts observations (>= 1)");
  for (size_t i = 0; i < k.size(); ++i) {
    if (!std::isfinite(k[i]) || k[i] < 0) throw std::invalid_argument("Optimus curve: k must be finite and >= 0");
    if (!std::isfinite(loss[i]) || loss[i] <= 0)
      throw std::invalid_argument("Optimus curve: losses must be finite and > 0");
  }
  k_ = k;
  loss_ = loss;
  spread_ = spread.empty() ? std::vector<Spread>(k.size()) : spread;
  count_ = 0;
  for (const Spread& s : spread_) count_ += s.w;
  fitted_ = false;
  refit();
}

void OptimusCurve::add_point(double k, double loss) {
  if (!std::isfinite(k) || k < 0) throw std::invalid_argument("Optimus curve: k must be finite and >= 0");
  if (!std::isfinite(loss) || loss <= 0) throw std::invalid_argument("Optimus curve: losses must be finite and > 0");
  k_.push_back(k);
  loss_.push_back(loss);
  spread_.push_back({});
  count_ += 1;
  if (k_.size() >= std::max<size_t>(p_.min_points, 2)) refit();
}

double OptimusCurve::predict(double k) const {
  double d = beta0_ * k + beta1_;
  return d > 0 ? 1.0 / d + beta2_ : kInf;
}

std::optional<double> OptimusCurve::steps_to(double target) const {
  if (target <= beta2_) return std::nullopt;
  if (predict(0) <= target) return 0.0;
  if (beta0_ <= 0) return std::nullopt;
  return (1.0 / (target - beta2_) - beta1_) / beta0_;
}

std::string OptimusCurve::describe() const {
  if (!fitted_) return fmt::format("Optimus curve: not fitted ({} points)", points());
  return fmt::format("l(k) = 1/({:.4g} k + {:.4g}) + {:.4g}; {} points, {} outliers dropped, rmse {:.3g}", beta0_,
                     beta1_, beta2_, points(), outliers_, rmse_);
}

}  // namespace trainplan::models
