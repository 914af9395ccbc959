#include "models/metric_anchored.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "numerics/banded_cholesky.h"
#include "models/pooled_samples.h"
#include "models/registry.h"

namespace trainplan::models {

// The base's residuals at pooled configurations (models/pooled_samples.h):
// the mean r, the weight w (samples), and for absolute errors the
// configuration's samples (a sample's residual is its metric minus `base`).
struct AnchoredResiduals {
  std::vector<double> r, w, base;
  const PooledMetricSamples* pooled = nullptr;
};

namespace {

constexpr double kTinyE = 1e-9;

// Hat weights over the anchors p0 + k*step, k = 0..count-1, clamped at the
// ends: the left index and the right one's weight.
void hat(double q, double p0, double step, int count, int& k0, double& t) {
  if (count == 1) { k0 = 0; t = 0; return; }
  double f = std::clamp((q - p0) / step, 0.0, double(count - 1));
  k0 = std::min(static_cast<int>(f), count - 2);
  t = f - k0;
}

// Hat weights over sorted knots, clamped at the ends.
void hat(double q, const std::vector<double>& knots, int& j0, double& t) {
  const int J = static_cast<int>(knots.size());
  if (J == 1 || q <= knots.front()) { j0 = 0; t = 0; return; }
  if (q >= knots.back()) { j0 = J - 2; t = 1; return; }
  j0 = static_cast<int>(std::upper_bound(knots.begin(), knots.end(), q) - knots.begin()) - 1;
  t = (q - knots[j0]) / (knots[j0 + 1] - knots[j0]);
}

// A first-difference penalty v (c_a - c_b)^2 on a pair of coefficients.
void add_difference(numerics::BandedCholesky& m, int a, int b, double v) {
  const auto i = static_cast<size_t>(a), j = static_cast<size_t>(b);
  m.add(i, i, v);
  m.add(j, j, v);
  m.add(i, j, -v);
}

// One design row per sample: its non-zero entries (column, weight).
using Design = std::vector<std::vector<std::pair<int, double>>>;

// The distinct epochs of e (within kTinyE), sorted; thinned to max_knots
// evenly spaced ranks, both ends included.
std::vector<double> epoch_knots(std::vector<double> e, size_t max_knots) {
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end(), [](double a, double b) { return b - a < kTinyE; }), e.end());
  if (e.size() > max_knots) {
    std::vector<double> kept;
    for (size_t j = 0; j < max_knots; ++j) kept.push_back(e[j * (e.size() - 1) / (max_knots - 1)]);
    e = std::move(kept);
  }
  return e;
}

// The base's residuals at pooled configurations (models/pooled_samples.h):
// the mean r, the weight w (samples), and for absolute errors the
// configuration's samples (a sample's residual is its metric minus `base`).

// X^T W X (the lower triangle, into gram) and X^T W r of the design X, W the weights.
void add_normal_equations(const Design& design, const AnchoredResiduals& res, numerics::BandedCholesky& gram,
                          std::vector<double>& xtr) {
  for (size_t i = 0; i < design.size(); ++i)
    for (auto [a, wa] : design[i]) {
      xtr[static_cast<size_t>(a)] += res.w[i] * wa * res.r[i];
      for (auto [b, wb] : design[i])
        if (b <= a) gram.add(static_cast<size_t>(a), static_cast<size_t>(b), res.w[i] * wa * wb);
    }
}

// gram plus the penalties on the K*J coefficients (knot-major): ridge lam on
// each, first differences mu along epochs within an anchor and nu across
// anchors at a knot.
numerics::BandedCholesky penalised(const numerics::BandedCholesky& gram, int K, int J, double lam, double mu,
                                   double nu) {
  numerics::BandedCholesky a = gram;
  for (size_t c = 0; c < a.size(); ++c) a.add(c, c, lam);
  for (int k = 0; k < K; ++k)  // along epochs within an anchor
    for (int j = 0; j + 1 < J; ++j) add_difference(a, j * K + k, (j + 1) * K + k, mu);
  if (nu > 0)
    for (int j = 0; j < J; ++j)  // across anchors at a knot
      for (int k = 0; k + 1 < K; ++k) add_difference(a, j * K + k, j * K + k + 1, nu);
  return a;
}

// Sum over the samples of |r - fit| with the fit's mean at each
// configuration: a lower bound of loo_abs_error's sum, term by term (a
// configuration's samples about a point beyond their mean, seen from the
// fit, err by at least w times the distance from the mean to the fit).
double in_sample_abs_error(const std::vector<double>& beta, const Design& design, const AnchoredResiduals& res) {
  double loss = 0;
  for (size_t i = 0; i < design.size(); ++i) {
    double fit = 0;
    for (auto [c, w] : design[i]) fit += w * beta[static_cast<size_t>(c)];
    loss += res.w[i] * std::abs(res.r[i] - fit);
  }
  return loss;
}

// Sum of the exact leave-one-out absolute residuals of the linear smoother
// with coefficients beta, res_i / (1 - h_ii); `a` holds the inverse's band.
// A pooled configuration of w samples is left out whole: its mean's
// residual becomes (r - fit) / (1 - w h), and each of its samples is scored
// against the fit without it.
double loo_abs_error(const numerics::BandedCholesky& a, const std::vector<double>& beta, const Design& design,
                     const AnchoredResiduals& res) {
  double loss = 0;
  for (size_t i = 0; i < design.size(); ++i) {
    double fit = 0;
    for (auto [c, w] : design[i]) fit += w * beta[static_cast<size_t>(c)];
    const double h = a.inverse_quadratic_banded(design[i]);
    if (res.w[i] == 1) {
      loss += std::abs(res.r[i] - fit) / std::max(1 - h, 1e-6);
    } else {
      const double held_out = res.r[i] - (res.r[i] - fit) / std::max(1 - res.w[i] * h, 1e-6);
      loss += res.pooled->abs_dev(i, res.base[i] + held_out);
    }
  }
  return loss;
}

}  // namespace

AnchoredCurvesModel::AnchoredCurvesModel(AnchoredCurvesParams p, std::string name)
    : p_(std::move(p)), name_(std::move(name)), base_(p_.base, name_ + " base") {}

void AnchoredCurvesModel::design_row(const Grid& g, double lb, double e,
                                     std::vector<std::pair<int, double>>& row) const {
  row.clear();
  int k0, j0;
  double tk, tj;
  hat(lb, g.a0, g.step, g.count, k0, tk);
  hat(e, knots_, j0, tj);
  const int J = static_cast<int>(knots_.size());
  for (int dk = 0; dk < 2; ++dk) {
    const double wk = dk ? tk : 1 - tk;
    if (wk == 0 || k0 + dk >= g.count) continue;
    for (int dj = 0; dj < 2; ++dj) {
      const double wj = dj ? tj : 1 - tj;
      if (wj == 0 || j0 + dj >= J) continue;
      row.push_back({(j0 + dj) * g.count + k0 + dk, wk * wj});
    }
  }
}

void AnchoredCurvesModel::fit(const SampleSet& samples) {
  base_ = GlobalBatchModel(p_.base, name_ + " base");
  grid_ = Grid{};
  base_.fit(samples);  // throws InputError without metric samples
  dir_ = samples.direction;
  // Samples of one configuration pooled: one design row, weighted by their count.
  const PooledMetricSamples pooled(samples.samples);
  const auto& rows = pooled.points();
  n_ = pooled.samples();
  const size_t m = rows.size();
  corrected_ = false;
  coef_.clear();

  // The base's residuals r at (log2 B, e).
  std::vector<double> lb(m), e(m);
  AnchoredResiduals res;
  res.pooled = &pooled;
  double lb_lo = std::numeric_limits<double>::infinity(), lb_hi = -lb_lo;
  for (size_t i = 0; i < m; ++i) {
    lb[i] = std::log2(rows[i].global_batch());
    e[i] = rows[i].epochs;
    const double base = base_.predict(rows[i].batch, rows[i].workers, e[i]);
    res.r.push_back(rows[i].y - base);
    res.w.push_back(rows[i].w);
    res.base.push_back(base);
    lb_lo = std::min(lb_lo, lb[i]);
    lb_hi = std::max(lb_hi, lb[i]);
  }
  knots_ = epoch_knots(e, p_.max_knots);
  if (n_ < p_.min_samples) {
    tabulate(lb_lo, lb_hi);
    return;
  }

  double best = std::numeric_limits<double>::infinity();
  Design design(m);
  for (double step : p_.anchor_step) {
    for (int o = 0; o < p_.offsets; ++o) {
      const Grid g = anchor_grid(step, o, lb_lo, lb_hi);
      for (size_t i = 0; i < m; ++i) design_row(g, lb[i], e[i], design[i]);
      choose_penalties(g, design, res, best);
    }
  }
  corrected_ = !coef_.empty();
  loo_mae_ = best / double(n_);
  tabulate(std::min(lb_lo, grid_.a0), std::max(lb_hi, grid_.a0 + (grid_.count - 1) * grid_.step));
}

// Anchors at off + k*step (mod step) covering [lb_lo, lb_hi], off the
// offset-th of p_.offsets shifts within a step.
AnchoredCurvesModel::Grid AnchoredCurvesModel::anchor_grid(double step, int offset, double lb_lo, double lb_hi) const {
  const double off = step * offset / p_.offsets;
  Grid g;
  g.step = step;
  g.a0 = std::floor((lb_lo - off) / step) * step + off;
  g.count = std::max(1, static_cast<int>(std::ceil((lb_hi - g.a0) / step - 1e-9)) + 1);
  return g;
}

// Fits the correction on anchor grid g (its design rows given) under each
// ridge and smoothing penalty, and keeps the fit whose leave-one-out absolute
// error beats `best` (updating it).
void AnchoredCurvesModel::choose_penalties(const Grid& g, const Design& design, const AnchoredResiduals& r,
                                           double& best) {
  const int J = static_cast<int>(knots_.size());
  const int K = g.count;
  const auto P = static_cast<size_t>(K * J);
  // Coefficients are knot-major (j*K + k), so X^T X and both difference
  // penalties sit within K + 1 of the diagonal.
  numerics::BandedCholesky gram(P, static_cast<size_t>(K) + 1);
  std::vector<double> xtr(P, 0.0);
  add_normal_equations(design, r, gram, xtr);
  for (double lam : p_.ridge)
    for (double mu : p_.smooth_e)
      for (double nu : p_.smooth_b) {
        if (nu > 0 && K == 1) continue;
        numerics::BandedCholesky a = penalised(gram, K, J, lam, mu, nu);
        if (!a.factor()) continue;
        const std::vector<double> beta = a.solve(xtr);
        // Each leave-one-out term is at least the in-sample one (leverages
        // lie in [0, 1), and a configuration left out moves its prediction
        // further from its mean): a fit whose in-sample error already
        // reaches `best` cannot win, and needs no inverse.
        if (in_sample_abs_error(beta, design, r) >= best) continue;
        a.invert_band();  // a sample's design entries lie within the band
        const double loss = loo_abs_error(a, beta, design, r);
        if (loss < best) {
          best = loss;
          grid_ = g;
          ridge_ = lam;
          smooth_e_ = mu;
          smooth_b_ = nu;
          coef_ = beta;
        }
      }
}

double AnchoredCurvesModel::correction(double global_batch, double epochs) const {
  std::vector<std::pair<int, double>> drow;
  return correction(global_batch, epochs, drow);
}

double AnchoredCurvesModel::correction(double global_batch, double epochs,
                                       std::vector<std::pair<int, double>>& drow) const {
  if (!corrected_) return 0;
  design_row(grid_, std::log2(global_batch), epochs, drow);
  double v = 0;
  for (auto [c, w] : drow) v += w * coef_[static_cast<size_t>(c)];
  return v;
}

void AnchoredCurvesModel::tabulate(double lb_lo, double lb_hi) {
  // Rows start on an anchor, so that every anchor is a row; all rows share
  // their columns: every grid_e_step in ln e, plus the knots.
  surface_.db = p_.grid_batch_step;
  surface_.lb0 = grid_.a0 - std::ceil((grid_.a0 - (lb_lo - 1)) / surface_.db) * surface_.db;
  const int nrows = static_cast<int>(std::ceil((lb_hi + 1 - surface_.lb0) / surface_.db)) + 1;
  const double u_lo = std::log(std::max(knots_.front(), kTinyE)) - 1;
  const double u_hi = std::log(std::max(knots_.back(), kTinyE)) + 1;
  std::vector<double> cols;
  for (double u = u_lo; u < u_hi; u += p_.grid_e_step) cols.push_back(u);
  cols.push_back(u_hi);
  for (double k : knots_) cols.push_back(std::log(std::max(k, kTinyE)));
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end(), [](double a, double b) { return b - a < 1e-12; }), cols.end());
  surface_.rows.assign(static_cast<size_t>(nrows), {cols, std::vector<double>(cols.size())});
  std::vector<std::pair<int, double>> drow;
  for (int i = 0; i < nrows; ++i) {
    const double B = std::exp2(surface_.lb0 + i * surface_.db);
    auto& row = surface_.rows[static_cast<size_t>(i)];
    for (size_t j = 0; j < cols.size(); ++j) {
      const double ep = std::exp(cols[j]);
      row.v[j] = base_.predict(B, 1, ep) + correction(B, ep, drow);
    }
    row.make_monotone(dir_);
  }
}

double AnchoredCurvesModel::predict(double batch, int workers, double epochs) const {
  return surface_.at(std::log2(batch * workers), std::log(std::max(epochs, kTinyE)));
}

std::string AnchoredCurvesModel::describe() const {
  std::string s = base_.describe();
  if (!corrected_)
    return s + fmt::format("\n  {}: no anchored correction ({} samples with a metric, fewer than {})", name_, n_,
                           p_.min_samples);
  s += fmt::format(
      "\n  {}: plus curves in data epochs at {} anchor batches, every {:g} octaves from B = {:.4g} "
      "({} epoch knots); ridge {:g}, smoothing {:g} along epochs and {:g} across anchors "
      "(leave-one-out mean absolute error {:.4g}); monotone in epochs",
      name_, grid_.count, grid_.step, std::exp2(grid_.a0), knots_.size(), ridge_, smooth_e_, smooth_b_, loo_mae_);
  return s;
}

static MetricModelRegistrar reg_anchored(
    "global-batch-anchored",
    "metric = global-batch's G(effective epochs) plus curves in data epochs held at anchor global batches "
    "(linear in log2 B between them)",
    [] { return std::make_unique<AnchoredCurvesModel>(); });

}  // namespace trainplan::models
