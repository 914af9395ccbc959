#include "models/optimus_curve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/median.h"
#include "numerics/nnls.h"

namespace trainplan::models {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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
  for (int pass = 0; pass < 4; ++pass) {
    Eigen::MatrixXd A(n, 2);
    Eigen::VectorXd z(n);
    size_t r = 0;
    for (size_t i = 0; i < kn.size(); ++i) {
      if (!kept[i]) continue;
      double u = ln[i] - b2;  // > 0: b2 < min loss
      double d = f.b0 * kn[i] + f.b1;
      double w = pass > 0 && d > 0 ? u / d : u * u;
      A(r, 0) = w * kn[i];
      A(r, 1) = w;
      z(r) = w / u;
      ++r;
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
    f.sse += e * e;
  }
  return f;
}

OptimusCurve::Fit OptimusCurve::fit_kept(const std::vector<double>& kn, const std::vector<double>& ln,
                                         const std::vector<bool>& kept) const {
  double lmin = kInf;
  for (size_t i = 0; i < ln.size(); ++i)
    if (kept[i]) lmin = std::min(lmin, ln[i]);
  const double top = lmin * (1 - 1e-9);  // b2 must stay below every loss
  const int g = std::max(2, p_.beta2_grid);
  Fit best{0, 0, 0, kInf};
  int best_j = 0;
  for (int j = 0; j < g; ++j) {
    Fit f = fit_at(top * j / (g - 1), kn, ln, kept);
    if (f.sse < best.sse) best = f, best_j = j;
  }
  // Golden-section refinement between the neighbours of the best grid point.
  double a = top * std::max(0, best_j - 1) / (g - 1), b = top * std::min(g - 1, best_j + 1) / (g - 1);
  const double phi = 0.5 * (std::sqrt(5.0) - 1);
  double c = b - phi * (b - a), d = a + phi * (b - a);
  Fit fc = fit_at(c, kn, ln, kept), fd = fit_at(d, kn, ln, kept);
  for (int it = 0; it < p_.golden_iterations; ++it) {
    if (fc.sse < fd.sse) {
      b = d, d = c, fd = fc;
      c = b - phi * (b - a);
      fc = fit_at(c, kn, ln, kept);
    } else {
      a = c, c = d, fc = fd;
      d = a + phi * (b - a);
      fd = fit_at(d, kn, ln, kept);
    }
  }
  if (fc.sse < best.sse) best = fc;
  if (fd.sse < best.sse) best = fd;
  return best;
}

void OptimusCurve::refit() {
  const size_t n = k_.size();
  if (n < std::max<size_t>(p_.min_points, 2)) throw std::invalid_argument(fmt::format(
      "Optimus curve needs at least {} points, got {}", std::max<size_t>(p_.min_points, 2), n));
  double kmax = *std::max_element(k_.begin(), k_.end());
  double lmax = *std::max_element(loss_.begin(), loss_.end());
  if (!(kmax > 0)) kmax = 1;
  std::vector<double> kn(n), ln(n);
  for (size_t i = 0; i < n; ++i) kn[i] = k_[i] / kmax, ln[i] = loss_[i] / lmax;
  std::vector<bool> kept(n, true);
  Fit f = fit_kept(kn, ln, kept);
  size_t dropped = 0;
  const size_t max_drop = static_cast<size_t>(p_.max_outlier_fraction * double(n));
  // One point per pass, the worst: a gross outlier distorts the first fit,
  // and with it the residuals of good points near it.
  for (size_t pass = 0; p_.outlier_z > 0 && pass < max_drop && std::isfinite(f.sse); ++pass) {
    std::vector<double> r, idx;
    std::vector<double> res(n, 0);
    for (size_t i = 0; i < n; ++i)
      if (kept[i]) res[i] = ln[i] - (1.0 / (f.b0 * kn[i] + f.b1) + f.b2), r.push_back(res[i]);
    double med = median(r);
    std::vector<double> dev;
    for (double x : r) dev.push_back(std::abs(x - med));
    // Floor the scale so that an exact fit does not flag rounding noise.
    double scale = std::max(1.4826 * median(dev), 1e-4);
    // Drop the worst offenders first, within the budget.
    std::vector<std::pair<double, size_t>> bad;
    for (size_t i = 0; i < n; ++i)
      if (kept[i] && std::abs(res[i] - med) / scale > p_.outlier_z) bad.push_back({std::abs(res[i] - med), i});
    if (bad.empty() || n - dropped <= p_.min_points) break;
    kept[std::max_element(bad.begin(), bad.end())->second] = false;
    ++dropped;
    f = fit_kept(kn, ln, kept);
  }
  if (!std::isfinite(f.sse)) throw std::invalid_argument("Optimus curve: no finite fit (are the losses positive?)");
  // Back to the caller's units: l = lmax / (b0 k/kmax + b1) + lmax b2.
  beta0_ = f.b0 / (kmax * lmax);
  beta1_ = f.b1 / lmax;
  beta2_ = f.b2 * lmax;
  outliers_ = dropped;
  size_t m = n - dropped;
  rmse_ = lmax * std::sqrt(f.sse / double(m));
  fitted_ = true;
}

void OptimusCurve::fit(const std::vector<double>& k, const std::vector<double>& loss) {
  if (k.size() != loss.size()) throw std::invalid_argument("Optimus curve: k and loss differ in length");
  for (size_t i = 0; i < k.size(); ++i) {
    if (!std::isfinite(k[i]) || k[i] < 0) throw std::invalid_argument("Optimus curve: k must be finite and >= 0");
    if (!std::isfinite(loss[i]) || loss[i] <= 0)
      throw std::invalid_argument("Optimus curve: losses must be finite and > 0");
  }
  k_ = k;
  loss_ = loss;
  fitted_ = false;
  refit();
}

void OptimusCurve::add_point(double k, double loss) {
  if (!std::isfinite(k) || k < 0) throw std::invalid_argument("Optimus curve: k must be finite and >= 0");
  if (!std::isfinite(loss) || loss <= 0) throw std::invalid_argument("Optimus curve: losses must be finite and > 0");
  k_.push_back(k);
  loss_.push_back(loss);
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
  if (!fitted_) return fmt::format("Optimus curve: not fitted ({} points)", k_.size());
  return fmt::format("l(k) = 1/({:.4g} k + {:.4g}) + {:.4g}; {} points, {} outliers dropped, rmse {:.3g}", beta0_,
                     beta1_, beta2_, k_.size(), outliers_, rmse_);
}

}  // namespace trainplan::models
