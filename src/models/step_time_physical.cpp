#include "models/step_time_physical.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/nodes.h"
#include "core/error.h"
#include "structure/network_zoo.h"
#include "numerics/nnls.h"
#include "models/registry.h"
#include "numerics/levenberg_marquardt.h"

namespace trainplan::models {
namespace {

// Parameter vector layout for the fit.
enum Param { kAlpha, kBeta, kAIntra, kKIntra, kAInter, kKInter, kGamma, kParams };

double ring_factor(int workers) { return 2.0 * (workers - 1) / workers; }

StepTimeTerms terms_of(const Eigen::VectorXd& x) {
  return {x(kAlpha), x(kBeta), x(kAIntra), x(kKIntra), x(kAInter), x(kKInter), x(kGamma)};
}

// One configuration (batch, workers, nodes) and its samples' step times
// s_i (N absorbed when unknown) with weights w_i. The fit's weighted relative
// residuals w_i (p/s_i - 1) of its samples sum in squares to
// U2 (p - U1/U2)^2 plus a constant, with U1 = sum w_i^2/s_i and
// U2 = sum w_i^2/s_i^2: one residual per configuration, whatever the number
// of samples that measured it.
struct Point {
  double batch;
  int workers, nodes;
  double step;        // the first sample's step time (the only one's, for count 1)
  double weight = 1;  // the first sample's weight (the only one's, for count 1)
  double u1 = 0, u2 = 0, count = 0;
  // The configuration's residual at predicted step time p.
  double residual(double p) const {
    if (count == 1) return weight * (p / step - 1);
    const double r = std::sqrt(u2);
    return r * p - u1 / r;
  }
  // The configuration's row scale and target in the additive start's least squares.
  double row_scale() const { return count == 1 ? weight / step : std::sqrt(u2); }
  double row_target() const { return count == 1 ? weight : u1 / std::sqrt(u2); }
};

// Relative spreads below this are not trusted to rank samples: a +-0.3%
// interval from one quiet trial says little about the next process.
constexpr double kSpreadFloor = 0.01;

// Each sample's weight where the samples carry their measured spread
// (time_spread): 1 / max(spread, floor), scaled so that the weights average 1.
// Samples without a spread get the median spread of those with one; all
// weights are 1 when none has one.
std::vector<double> spread_weights(const SampleSet& set) {
  std::vector<double> known;
  for (const auto& s : set.samples)
    if (s.time_spread) known.push_back(std::max(*s.time_spread, kSpreadFloor));
  std::vector<double> w(set.samples.size(), 1.0);
  if (known.empty()) return w;
  std::nth_element(known.begin(), known.begin() + long(known.size() / 2), known.end());
  const double typical = known[known.size() / 2];
  double sum = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const auto& s = set.samples[i];
    w[i] = 1 / (s.time_spread ? std::max(*s.time_spread, kSpreadFloor) : typical);
    sum += w[i];
  }
  for (double& x : w) x *= double(w.size()) / sum;
  return w;
}

// The inter-node term's volume factor: the cluster's measured shape when known.
double inter_factor(int workers, int nodes, const structure::CommProfile* profile) {
  return profile && !profile->empty() ? profile->at(workers, nodes) : ring_factor(workers);
}

using Mask = Eigen::Array<bool, Eigen::Dynamic, 1>;

// The samples as fit points (step times, N absorbed when unknown), and the
// per-worker batches and multi-worker counts (within one node, across nodes)
// they cover: what decides which terms the fit can identify.
struct FitPoints {
  std::vector<Point> pts;
  std::set<double> batches;
  std::set<int> intra_r, inter_r;
};

// The samples pooled by configuration, in the order of each one's first
// sample, weighted by their measured spread.
FitPoints fit_points(const SampleSet& set, int gpus_per_node, double n) {
  FitPoints f;
  std::map<std::tuple<double, int, int>, size_t> index;
  const std::vector<double> weight = spread_weights(set);
  for (size_t k = 0; k < set.samples.size(); ++k) {
    const Sample& s = set.samples[k];
    if (!(s.batch > 0) || s.workers < 1 || !(s.epoch_time_s > 0) || !std::isfinite(s.epoch_time_s))
      throw InputError(set.source, 0, "", "allreduce-physical: samples need batch > 0, workers >= 1, epoch_time_s > 0");
    int nodes = s.nodes > 0 ? s.nodes : nodes_for(s.workers, gpus_per_node);
    const double step = s.epoch_time_s * s.batch * s.workers / n;
    auto [it, fresh] = index.try_emplace({s.batch, s.workers, nodes}, f.pts.size());
    if (fresh) f.pts.push_back({s.batch, s.workers, nodes, step, weight[k]});
    Point& p = f.pts[it->second];
    const double w2 = weight[k] * weight[k];
    p.u1 += w2 / step, p.u2 += w2 / (step * step), p.count += 1;
    f.batches.insert(s.batch);
    if (s.workers > 1) (nodes > 1 ? f.inter_r : f.intra_r).insert(s.workers);
  }
  return f;
}

// The terms the samples cannot identify (true: fixed during the fit, and set
// from priors after it); a note when beta is one of them.
Mask unidentified_terms(const FitPoints& f, std::vector<std::string>& notes) {
  Mask fixed = Mask::Constant(kParams, false);
  if (f.batches.size() < 2) {
    fixed(kBeta) = true;
    notes.push_back("one per-worker batch only: compute assumed independent of the batch (beta = 0)");
  }
  if (f.intra_r.empty()) fixed(kAIntra) = fixed(kKIntra) = true;
  else if (f.intra_r.size() < 2) fixed(kAIntra) = true;  // one ring factor: latency and volume are confounded
  if (f.inter_r.empty()) fixed(kAInter) = fixed(kKInter) = true;
  else if (f.inter_r.size() < 3) fixed(kAInter) = true;  // too few worker counts to separate latency from volume
  if (f.intra_r.empty() && f.inter_r.empty()) fixed(kGamma) = true;
  return fixed;
}

// The fit's start, g = 1: the additive model is linear in its parameters, so
// NNLS on relative errors gives its exact bounded optimum.
Eigen::VectorXd additive_start(const std::vector<Point>& pts, const Mask& fixed,
                               const structure::CommProfile* profile) {
  Eigen::VectorXd x0 = Eigen::VectorXd::Zero(kParams);
  x0(kGamma) = 1;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(pts.size(), kGamma);
  Eigen::VectorXd b(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) b(static_cast<Eigen::Index>(i)) = pts[i].row_target();
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto& p = pts[i];
    Eigen::Index row = static_cast<Eigen::Index>(i);
    double w = p.row_scale(), ring = p.workers > 1 ? ring_factor(p.workers) : 0;
    bool multi = p.workers > 1, inter = p.nodes > 1;
    double iring = multi && inter ? inter_factor(p.workers, p.nodes, profile) : 0.0;
    double f[kGamma] = {1, p.batch, multi && !inter ? 1.0 : 0.0, multi && !inter ? ring : 0.0,
                        multi && inter ? 1.0 : 0.0, iring};
    for (int j = 0; j < kGamma; ++j)
      if (!fixed(j)) A(row, j) = f[j] * w;
  }
  x0.head(kGamma) = numerics::nnls(A, b).x;
  return x0;
}

// Bounded least squares of the relative residuals from x0, every parameter
// >= 0 and g in [1, gamma_max]. The overlap exponent makes the cost
// non-convex: try a grid of g with the other parameters free, then refine
// everything from the best.
numerics::LmResult fit_terms(const numerics::ResidualFn& residuals, const Eigen::VectorXd& x0, const Mask& fixed,
                             double gamma_max) {
  Eigen::VectorXd lo = Eigen::VectorXd::Zero(kParams), hi = Eigen::VectorXd::Constant(kParams, 1e300);
  lo(kGamma) = 1;
  hi(kGamma) = std::max(1.0, gamma_max);
  numerics::LmResult best;
  best.cost = INFINITY;
  Mask fixed_g = fixed;
  fixed_g(kGamma) = true;
  std::vector<double> grid = fixed(kGamma) ? std::vector<double>{1.0} : std::vector<double>{1, 1.5, 2, 3, 4, 6, 10};
  for (double g : grid) {
    if (g > hi(kGamma)) continue;
    for (int start = 0; start < 2; ++start) {
      Eigen::VectorXd x = (start == 0 || !std::isfinite(best.cost)) ? x0 : best.x;
      x(kGamma) = g;
      numerics::LmResult r = numerics::bounded_lm(residuals, x, lo, hi, fixed_g);
      if (r.cost < best.cost) best = r;
    }
  }
  if (!fixed(kGamma)) {
    numerics::LmResult r = numerics::bounded_lm(residuals, best.x, lo, hi, fixed);
    if (r.cost < best.cost) best = r;
  }
  return best;
}

// Gradient bytes all-reduced per step, in the parameters' units (bytes * N
// when N is absorbed), for the priors of unidentified sync terms, and where
// they come from: model_bytes, a fitted sync term, or a known network's
// layer graph (none: no prior).
struct GradientBytes {
  std::optional<double> bytes;
  std::string from;
};

GradientBytes gradient_bytes(const AllreducePhysicalParams& p, const StepTimeTerms& t, const FitPoints& f,
                             bool n_known, const SampleSet& set, std::vector<std::string>& notes) {
  const structure::HardwareSpec& hw = p.hardware;
  GradientBytes gb;
  if (p.model_bytes && n_known) {
    gb.bytes = *p.model_bytes;
    gb.from = "model_bytes";
  } else if (!f.intra_r.empty() && t.k_intra > 0) {
    gb.bytes = t.k_intra * hw.intra_node_bytes_per_s;
    gb.from = "the fitted intra-node term";
  } else if (!f.inter_r.empty() && t.k_inter > 0) {
    gb.bytes = t.k_inter * hw.inter_node_bytes_per_s;
    gb.from = "the fitted inter-node term";
  } else if (p.model_bytes) {
    notes.push_back("model_bytes ignored: the dataset size is unknown, so seconds per step cannot be placed on the fit's scale");
  } else if (const structure::LayerGraph* g = n_known ? structure::find_network(set) : nullptr) {
    gb.bytes = 4 * g->params();  // fp32 gradients
    gb.from = fmt::format("the layer graph of {} ({:.4g} M parameters)", g->name, g->params() / 1e6);
  }
  if (gb.bytes && !n_known) gb.from += ", times the absorbed N";
  return gb;
}

// Where a prior's links come from, for the notes: a default names itself as
// one and says how to set it, and the samples' own hardware when recorded.
std::string prior_source(const structure::HardwareSpec& hw, const SampleSet& set) {
  if (!hw.source.empty()) return hw.name + ", from " + hw.source;
  std::set<std::string> ran_on;
  for (const auto& s : set.samples)
    if (!s.hardware.empty()) ran_on.insert(s.hardware);
  std::string on;
  for (const auto& h : ran_on) on += (on.empty() ? "" : ", ") + ("'" + h + "'");
  return fmt::format("{}: the default prior, not the samples' hardware{}; set yours with --hardware NAME|FILE "
                     "(docs/HARDWARE.md)",
                     hw.name, on.empty() ? "" : " (they ran on " + on + ")");
}

// Sets the sync terms the samples could not identify from the hardware's
// priors (free without gradient bytes), with a note for each.
void set_prior_sync_terms(const structure::HardwareSpec& hw, const std::string& source, const GradientBytes& gb,
                          const FitPoints& f, bool n_known, StepTimeTerms& t, std::vector<std::string>& notes) {
  // Latencies are in seconds, usable only when the parameters are (N known).
  auto latency = [&](double seconds, double fitted) { return n_known ? seconds : fitted; };
  if (f.intra_r.empty()) {
    if (gb.bytes) {
      t.k_intra = *gb.bytes / hw.intra_node_bytes_per_s;
      t.a_intra = latency(2 * hw.intra_node_latency_s, 0);
      notes.push_back(fmt::format("intra-node term not identifiable from the samples (no multi-GPU single-node sample); "
                                  "using prior: {:.3g} bytes from {} over {:.3g} B/s ({})",
                                  *gb.bytes, gb.from, hw.intra_node_bytes_per_s, source));
    } else {
      notes.push_back("intra-node term not identifiable, and no model_bytes given or known network named: sync within a node assumed free");
    }
  }
  if (f.inter_r.empty()) {
    if (gb.bytes) {
      t.k_inter = *gb.bytes / hw.inter_node_bytes_per_s;
      t.a_inter = std::max(t.a_intra, latency(2 * hw.inter_node_latency_s, 0));
      notes.push_back(fmt::format("inter-node term not identifiable from the samples (all on one node); "
                                  "using prior: {:.3g} bytes from {} over {:.3g} B/s ({})",
                                  *gb.bytes, gb.from, hw.inter_node_bytes_per_s, source));
    } else {
      notes.push_back("inter-node term not identifiable, and no model_bytes given or known network named: sync across nodes assumed free");
    }
  }
}

// How well a configuration's time is known, for the prior on g: the samples'
// measured spread where they carry one (the median, at least kSpreadFloor),
// else the misfit the fit without the prior leaves (its root mean square over
// the degrees of freedom; a fit closer than kExactFit is taken as exact data,
// which then keep their g), else, with no degree of freedom left, `fallback`.
double prior_noise_of(const SampleSet& set, double cost, long dof, double fallback) {
  constexpr double kExactFit = 1e-3;
  std::vector<double> spreads;
  for (const auto& s : set.samples)
    if (s.time_spread && *s.time_spread > 0) spreads.push_back(std::max(*s.time_spread, kSpreadFloor));
  if (!spreads.empty()) {
    std::nth_element(spreads.begin(), spreads.begin() + long(spreads.size() / 2), spreads.end());
    return std::min(spreads[spreads.size() / 2], 1.0);
  }
  if (dof > 0) return std::clamp(std::sqrt(cost / double(dof)), kExactFit, 1.0);
  return fallback;
}

}  // namespace

double step_time_of(const StepTimeTerms& t, double batch, int workers, int nodes, const structure::CommProfile* profile,
                    double compute_scale) {
  double c = (t.alpha + t.beta * batch) * compute_scale;
  double s = 0;
  if (workers > 1)
    s = nodes > 1 ? t.a_inter + t.k_inter * inter_factor(workers, nodes, profile)
                  : t.a_intra + t.k_intra * ring_factor(workers);
  double hi = std::max(c, s), lo = std::min(c, s);
  if (hi <= 0) return 0;
  // (c^g + s^g)^(1/g), written to stay finite for large g.
  return hi * std::pow(1 + std::pow(lo / hi, t.gamma), 1 / t.gamma);
}

void AllreducePhysicalModel::fit(const SampleSet& set) {
  compute_corr_.clear();
  gamma_prior_used_ = false;
  if (set.empty()) throw InputError(set.source, 0, "", "allreduce-physical: no samples to fit");
  notes_.clear();
  auto ds = p_.dataset_size ? p_.dataset_size : set.dataset_size;
  n_known_ = ds.has_value() && *ds > 0;
  n_ = n_known_ ? double(*ds) : 1.0;
  if (!n_known_) notes_.push_back("dataset size unknown: N absorbed into the parameters (fit of epoch_time*b*r)");

  const FitPoints f = fit_points(set, p_.gpus_per_node, n_);
  const std::vector<Point>& pts = f.pts;
  const Mask fixed = unidentified_terms(f, notes_);
  const structure::CommProfile* profile = p_.comm_profile.get();
  const Eigen::Index n_pts = static_cast<Eigen::Index>(pts.size());
  double prior_weight = 0;  // of g - 1 among the residuals; 0: no prior
  const numerics::ResidualFn residuals = [&](const Eigen::VectorXd& x) {
    StepTimeTerms t = terms_of(x);
    Eigen::VectorXd r(n_pts + (prior_weight > 0 ? 1 : 0));
    for (Eigen::Index i = 0; i < n_pts; ++i) {
      const Point& q = pts[size_t(i)];
      r(i) = q.residual(step_time_of(t, q.batch, q.workers, q.nodes, profile));
    }
    if (prior_weight > 0) r(n_pts) = prior_weight * (t.gamma - 1);
    return r;
  };
  const Eigen::VectorXd start = additive_start(pts, fixed, profile);
  numerics::LmResult best = fit_terms(residuals, start, fixed, p_.gamma_max);
  if (!fixed(kGamma) && p_.gamma_prior_sd > 0) {
    const long dof = long(n_pts) - long((!fixed).count());
    prior_weight = prior_noise_of(set, best.cost, dof, p_.gamma_prior_noise) / p_.gamma_prior_sd;
    best = fit_terms(residuals, start, fixed, p_.gamma_max);
    gamma_prior_used_ = true;
  }
  t_ = terms_of(best.x);

  // Priors for terms the samples could not identify.
  const GradientBytes gb = gradient_bytes(p_, t_, f, n_known_, set, notes_);
  set_prior_sync_terms(p_.hardware, prior_source(p_.hardware, set), gb, f, n_known_, t_, notes_);
  if (fixed(kGamma) && (!f.intra_r.empty() || !f.inter_r.empty() || gb.bytes))
    notes_.push_back("overlap not identifiable (no multi-worker samples): gamma = 1, no overlap");

  // Every sample's relative residual (one per configuration would understate the spread).
  rel_residuals_.clear();
  const StepTimeTerms fitted = terms_of(best.x);  // before the priors above
  for (const auto& s : set.samples) {
    int nodes = s.nodes > 0 ? s.nodes : nodes_for(s.workers, p_.gpus_per_node);
    rel_residuals_.push_back(step_time_of(fitted, s.batch, s.workers, nodes, profile) / (s.epoch_time_s * s.batch * s.workers / n_) - 1);
  }
  std::sort(rel_residuals_.begin(), rel_residuals_.end());
  fitted_ = true;
}

double AllreducePhysicalModel::step_time(double batch, int workers, int nodes) const {
  if (nodes <= 0) nodes = nodes_for(workers, p_.gpus_per_node);
  double scale = 1;
  if (!compute_corr_.empty()) {
    const auto& f = compute_corr_;
    double e;
    if (batch <= f.front().first) e = f.front().second;
    else if (batch >= f.back().first) e = f.back().second;
    else {
      size_t i = 1;
      while (f[i].first < batch) ++i;
      double w = (batch - f[i - 1].first) / (f[i].first - f[i - 1].first);
      e = (1 - w) * f[i - 1].second + w * f[i].second;
    }
    scale = std::exp(e);
  }
  return step_time_of(t_, batch, workers, nodes, p_.comm_profile.get(), scale);
}

double AllreducePhysicalModel::predict(double batch, int workers, int nodes) const {
  return n_ / (batch * workers) * step_time(batch, workers, nodes);
}

std::optional<Interval> AllreducePhysicalModel::predict_interval(double batch, int workers, int nodes,
                                                                 double coverage) const {
  if (!fitted_ || rel_residuals_.size() < 10) return std::nullopt;
  auto q = [&](double p) {
    double k = std::clamp(p, 0.0, 1.0) * (rel_residuals_.size() - 1);
    size_t i = static_cast<size_t>(std::floor(k));
    size_t j = std::min(i + 1, rel_residuals_.size() - 1);
    return rel_residuals_[i] + (k - i) * (rel_residuals_[j] - rel_residuals_[i]);
  };
  // pred = y (1 + e), so y = pred / (1 + e): the high residual bounds y from below.
  double pred = predict(batch, workers, nodes);
  Interval iv;
  iv.coverage = coverage;
  iv.lo = pred / (1 + q((1 + coverage) / 2));
  iv.hi = pred / std::max(1e-6, 1 + q((1 - coverage) / 2));
  return iv;
}

std::string AllreducePhysicalModel::describe() const {
  const double u = 1e3;  // seconds -> ms
  std::string unit = n_known_ ? "ms" : "ms*N";
  std::string s = "t_epoch = N/(b r) * ((alpha + beta b)^g + s^g)^(1/g), s = a + k*2(r-1)/r (intra or inter node)\n";
  s += fmt::format("  compute: alpha = {:.4g} {}, beta = {:.4g} {}/sample\n", t_.alpha * u, unit, t_.beta * u, unit);
  s += fmt::format("  intra-node sync: a = {:.4g} {}, k = {:.4g} {}\n", t_.a_intra * u, unit, t_.k_intra * u, unit);
  s += fmt::format("  inter-node sync: a = {:.4g} {}, k = {:.4g} {}\n", t_.a_inter * u, unit, t_.k_inter * u, unit);
  s += fmt::format("  overlap gamma = {:.3g}{}; N = {}", t_.gamma,
                   gamma_prior_used_ ? fmt::format(" (prior 1 +- {:g})", p_.gamma_prior_sd) : std::string(),
                   n_known_ ? fmt::format("{:.0f}", n_) : std::string("unknown (absorbed)"));
  if (p_.comm_profile && !p_.comm_profile->empty())
    s += "\n  inter-node volume factor: the communication profile rho(r, n) (" + p_.comm_profile->source +
         ") instead of 2(r-1)/r";
  for (const auto& n : notes_) s += "\n  note: " + n;
  return s;
}

static TimeModelRegistrar reg_physical(
    "allreduce-physical",
    "N/(b r) * ((alpha+beta b)^g + ring all-reduce sync^g)^(1/g), intra/inter-node terms, NNLS + bounded LM",
    [](const ModelParams& mp) {
      AllreducePhysicalParams p;
      p.comm_profile = mp.comm_profile;
      if (mp.hardware) p.hardware = *mp.hardware;
      return std::make_unique<AllreducePhysicalModel>(p);
    });

}  // namespace trainplan::models
