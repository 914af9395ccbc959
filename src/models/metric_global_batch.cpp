#include "models/metric_global_batch.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "models/registry.h"

namespace trainplan::models {

namespace {
constexpr double kTinyX = 1e-12;

// Centred isotonic regression (Oron & Flournoy 2017): PAVA leaves flat blocks
// with jumps between neighbouring points; putting one knot at each block's
// centroid (mean x of its points) and interpolating linearly between them
// keeps monotonicity and removes the artificial steps.
IsotonicCurve centered(const IsotonicCurve& g, const std::vector<double>& lx) {
  IsotonicCurve c;
  c.shape = g.shape;
  c.sse = g.sse;
  std::vector<double> xs = lx;
  std::sort(xs.begin(), xs.end());
  size_t i = 0;
  while (i < xs.size()) {
    double v = g.predict(xs[i]), sum = 0;
    size_t j = i;
    while (j < xs.size() && g.predict(xs[j]) == v) sum += xs[j++];
    double cx = sum / double(j - i);
    if (c.x.empty() || cx > c.x.back()) c.x.push_back(cx), c.y.push_back(v);
    i = j;
  }
  return c;
}
}  // namespace

double GlobalBatchModel::x_of(const Noise& n, double B, double e, int steps) {
  if (!(e > 0)) return 0;
  auto eff = [&](double ep) {
    double lphi = n.a + n.c * std::log(ep / n.e_ref) + n.d * std::log(B);
    double phi = std::exp(std::clamp(lphi, -700.0, 700.0));
    return (phi + 1) / (phi + B / n.s);
  };
  if (n.c == 0 && n.d == 0) return e * eff(e);  // constant in e: exact
  double h = e / steps, sum = 0;
  for (int j = 0; j < steps; ++j) sum += eff((j + 0.5) * h);
  return sum * h;
}

double GlobalBatchModel::effective_epochs(double global_batch, double epochs) const {
  return x_of(noise_, global_batch, epochs, p_.integration_steps);
}

// Fits G on (x, y) and returns its sum of squared errors in metric units.
// `keep` stores the fit in the model.
double GlobalBatchModel::fit_link(const std::vector<double>& x, const std::vector<double>& y, bool keep) {
  double sse = 0;
  if (p_.link == GlobalBatchParams::Link::kIsotonic) {
    std::vector<double> lx(x.size());
    for (size_t i = 0; i < x.size(); ++i) lx[i] = std::log(std::max(x[i], kTinyX));
    auto g = fit_isotonic(lx, y, {}, dir_ == MetricDirection::kMax ? Shape::kIncreasing : Shape::kDecreasing);
    if (p_.centered) g = centered(g, lx);
    for (size_t i = 0; i < x.size(); ++i) sse += std::pow(g.predict(lx[i]) - y[i], 2);
    if (keep) iso_ = std::move(g);
  } else {
    const double floor = 1e-9 * std::max(1.0, std::abs(loss_.offset));
    std::vector<double> l(y.size()), xx(x.size());
    for (size_t i = 0; i < y.size(); ++i) l[i] = std::max(floor, loss_.to_loss(y[i])), xx[i] = std::max(x[i], 0.0);
    OptimusCurve c(OptimusCurveParams{});
    c.fit(xx, l);
    for (size_t i = 0; i < x.size(); ++i) sse += std::pow(loss_.to_metric(c.predict(xx[i])) - y[i], 2);
    if (keep) curve_ = std::move(c);
  }
  return sse;
}

void GlobalBatchModel::fit(const SampleSet& samples) {
  auto rows = samples.with_metric();
  if (rows.size() < 3)
    throw InputError(samples.source, 0, "metric",
                     fmt::format("{} needs at least 3 samples with a metric, got {}", name_, rows.size()));
  dir_ = samples.direction;
  n_ = rows.size();
  std::vector<double> B, e, y;
  double bmin = std::numeric_limits<double>::infinity(), bmax = 0, log_b = 0, log_e = 0;
  size_t n_pos_e = 0;
  for (const auto& s : rows) {
    B.push_back(s.global_batch());
    e.push_back(s.epochs);
    y.push_back(*s.metric);
    bmin = std::min(bmin, s.global_batch()), bmax = std::max(bmax, s.global_batch());
    log_b += std::log(s.global_batch()) / double(rows.size());
    if (s.epochs > 0) log_e += std::log(s.epochs), ++n_pos_e;
  }
  loss_ = MetricLoss::for_values(dir_, y);

  // Gradient noise-scale trend, when the samples carry the statistics.
  std::vector<std::array<double, 3>> g;
  for (const auto& s : rows)
    if (s.grad_sqr && s.grad_var && *s.grad_sqr > 0 && *s.grad_var > 0 && s.epochs > 0)
      g.push_back({std::log(*s.grad_var / *s.grad_sqr), std::log(s.epochs), std::log(s.global_batch())});
  const bool grad_ok = g.size() >= p_.min_grad_samples;
  if (p_.noise == GlobalBatchParams::Noise::kGradStats && g.size() < 4)
    throw InputError(samples.source, 0, "grad_var",
                     fmt::format("{}: gradient statistics requested but only {} samples carry them", name_, g.size()));
  // Families of noise-scale trends to search: from the gradient statistics,
  // fitted, or (auto) both, the better in-sample fit winning.
  std::vector<bool> families;
  if (p_.noise != GlobalBatchParams::Noise::kFitted && (grad_ok || p_.noise == GlobalBatchParams::Noise::kGradStats))
    families.push_back(true);
  if (p_.noise != GlobalBatchParams::Noise::kGradStats) families.push_back(false);

  const int m = std::max(2, p_.scale_grid);
  const double lo = std::log(bmin / p_.scale_span), hi = std::log(bmax * p_.scale_span);
  double best = std::numeric_limits<double>::infinity();
  Noise best_n;
  std::vector<double> x(rows.size());
  for (bool use_grad : families) {
    Noise base;
    base.grad = use_grad;
    if (use_grad) {
      Eigen::MatrixXd X(g.size(), 3);
      Eigen::VectorXd t(g.size());
      for (size_t i = 0; i < g.size(); ++i) X(i, 0) = 1, X(i, 1) = g[i][1], X(i, 2) = g[i][2], t(i) = g[i][0];
      Eigen::VectorXd beta = X.colPivHouseholderQr().solve(t);
      base.a = beta(0), base.c = beta(1), base.d = beta(2);
    } else {
      base.e_ref = n_pos_e ? std::exp(log_e / double(n_pos_e)) : 1.0;
      base.s = std::exp(log_b);
    }
    // Grid: reference batch s (statistics) or theta x growth c (fitted).
    std::vector<double> growth = use_grad ? std::vector<double>{base.c} : p_.growth;
    if (growth.empty()) growth = {0};
    for (double c : growth)
      for (int j = 0; j < m; ++j) {
        Noise n = base;
        double v = std::exp(lo + (hi - lo) * j / (m - 1));
        if (use_grad) n.s = v;
        else n.c = c, n.a = std::log(v / base.s);  // theta = v examples, in units of s = B_ref
        for (size_t i = 0; i < rows.size(); ++i) x[i] = x_of(n, B[i], e[i], p_.integration_steps);
        double sse;
        try {
          sse = fit_link(x, y, false);
        } catch (const std::invalid_argument&) {
          continue;
        }
        if (sse < best) best = sse, best_n = n;
      }
  }
  if (!std::isfinite(best)) throw InputError(samples.source, 0, "metric", name_ + ": no parameter gave a finite fit");
  grad_available_ = grad_ok;
  noise_ = best_n;
  grad_ = best_n.grad;
  for (size_t i = 0; i < rows.size(); ++i) x[i] = x_of(noise_, B[i], e[i], p_.integration_steps);
  in_sample_rmse_ = std::sqrt(fit_link(x, y, true) / double(rows.size()));
}

double GlobalBatchModel::predict(double batch, int workers, double epochs) const {
  double x = effective_epochs(batch * workers, epochs);
  if (p_.link == GlobalBatchParams::Link::kIsotonic) return iso_.predict(std::log(std::max(x, kTinyX)));
  return loss_.to_metric(curve_.predict(std::max(x, 0.0)));
}

std::string GlobalBatchModel::describe() const {
  std::string s = fmt::format("{}: metric = G(x), x = integral_0^e (phi+1)/(phi+B/s) de', B = b*r\n", name_);
  if (grad_)
    s += fmt::format("  noise scale from gradient statistics: log phi = {:.3g} + {:.3g} log e + {:.3g} log B; "
                     "reference batch s = {:.4g}\n",
                     noise_.a, noise_.c, noise_.d, noise_.s);
  else
    s += fmt::format("  noise scale fitted ({}): phi*s = {:.4g} * (e/{:.3g})^{:.3g} examples\n",
                     grad_available_ ? "fits better than the gradient statistics' trend" : "no gradient statistics",
                     std::exp(noise_.a) * noise_.s, noise_.e_ref, noise_.c);
  if (p_.link == GlobalBatchParams::Link::kIsotonic)
    s += fmt::format("  G: isotonic ({}) in log x, {} knots", dir_ == MetricDirection::kMax ? "increasing" : "decreasing",
                     iso_.x.size());
  else
    s += fmt::format("  G: Optimus curve in x, {}; {}", loss_.describe(), curve_.describe());
  s += fmt::format("; {} samples, in-sample rmse {:.4g}", n_, in_sample_rmse_);
  return s;
}

static MetricModelRegistrar reg_gb("global-batch",
                                   "metric = isotonic G(effective epochs), efficiency of global batch b*r from the "
                                   "gradient noise scale (fitted when absent)",
                                   [] { return std::make_unique<GlobalBatchModel>(); });
static MetricModelRegistrar reg_gb_curve("global-batch-curve",
                                         "metric = Optimus curve in effective epochs of global batch b*r "
                                         "(noise-scale efficiency)",
                                         [] {
                                           GlobalBatchParams p;
                                           p.link = GlobalBatchParams::Link::kOptimus;
                                           return std::make_unique<GlobalBatchModel>(p, "global-batch-curve");
                                         });

}  // namespace trainplan::models
