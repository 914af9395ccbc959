#include "uncertainty/conformal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <tuple>

#include "core/error.h"
#include "core/median.h"
#include "uncertainty/metric_run_pinned.h"
#include "models/registry.h"

namespace trainplan::uncertainty {

namespace {

using Key = std::tuple<double, int, int>;  // batch, workers, nodes

Key key_of(const Sample& s) { return {s.batch, s.workers, s.nodes}; }

// (y - pred) / |pred|; NaN when pred is not finite (ConformalResiduals::set).
double signed_residual(double y, double pred) {
  if (!std::isfinite(pred)) return std::numeric_limits<double>::quiet_NaN();
  double d = std::abs(pred) > 0 ? std::abs(pred) : std::max(std::abs(y), 1e-300);
  return (y - pred) / d;
}

// The ceil((n+1) c)-th smallest of `sorted` (clamped to the sample).
std::optional<double> conformal_rank(const std::vector<double>& sorted, double coverage) {
  if (sorted.empty()) return std::nullopt;
  if (!(coverage > 0 && coverage < 1)) throw InputError("coverage must lie in (0, 1), got " + fmt::format("{}", coverage));
  double rank = std::ceil((double(sorted.size()) + 1) * coverage);  // 1-based
  size_t i = static_cast<size_t>(std::clamp(rank, 1.0, double(sorted.size()))) - 1;
  return sorted[i];
}

models::Interval around(double y, double q, double coverage) {
  double a = y - q * std::abs(y), b = y + q * std::abs(y);
  return models::Interval{std::min(a, b), std::max(a, b), coverage};
}

double bound_of(double y, double q, models::BoundSide side) {
  return side == models::BoundSide::kLower ? y - q * std::abs(y) : y + q * std::abs(y);
}

// The samples of `s` with fold != k (train) or == k (test).
SampleSet part(const SampleSet& s, const std::vector<int>& fold, int k, bool test) {
  SampleSet out;
  out.direction = s.direction;
  out.dataset_size = s.dataset_size;
  out.source = s.source;
  for (size_t i = 0; i < s.size(); ++i)
    if ((fold[i] == k) == test) out.samples.push_back(s.samples[i]);
  return out;
}

std::string notes_text(const std::vector<std::string>& notes) {
  std::string s;
  for (const auto& n : notes) s += "\n  note: " + n;
  return s;
}

// Splits (key, residual) pairs into nb equal-count bins by key. A boundary
// that falls between equal keys moves to the nearest place between unequal
// ones after the previous boundary (gaps between whole epochs tie often), and
// is dropped where there is none, so that every key lies in exactly one bin
// (a model flat in epochs has slope 0 everywhere: one bin).
void equal_count_bins(std::vector<std::pair<double, double>> pr, int nb, std::vector<double>& edges,
                      std::vector<ConformalResiduals>& bins) {
  edges.clear();
  bins.clear();
  std::sort(pr.begin(), pr.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto splits_at = [&](size_t i) { return i > 0 && i < pr.size() && pr[i - 1].first < pr[i].first; };
  size_t lo = 0;
  for (int b = 0; b < nb && lo < pr.size(); ++b) {
    size_t hi = pr.size();
    if (b + 1 < nb) {
      const size_t want = pr.size() * (b + 1) / nb;
      size_t best = 0;  // 0: no boundary after lo
      for (size_t d = 0; d < pr.size() && best == 0; ++d) {
        if (want + d > lo && splits_at(want + d)) best = want + d;
        else if (want >= d && want - d > lo && splits_at(want - d)) best = want - d;
      }
      if (best == 0) continue;
      hi = best;
    }
    std::vector<double> rb;
    for (size_t i = lo; i < hi; ++i) rb.push_back(pr[i].second);
    ConformalResiduals c;
    c.set(std::move(rb));
    bins.push_back(std::move(c));
    if (hi < pr.size()) edges.push_back(0.5 * (pr[hi - 1].first + pr[hi].first));
    lo = hi;
  }
}

// The key range of bin b of those that `edges` (their upper edges) separate.
std::string bin_range(const std::vector<double>& edges, size_t b) {
  if (edges.empty()) return "any";
  if (b == 0) return fmt::format("< {:.4g}", edges[0]);
  if (b == edges.size()) return fmt::format(">= {:.4g}", edges[b - 1]);
  return fmt::format("{:.4g} .. {:.4g}", edges[b - 1], edges[b]);
}

}  // namespace

std::vector<int> config_folds(const SampleSet& s, int folds, uint64_t seed) {
  std::map<Key, int> index;
  for (const auto& x : s.samples) index.emplace(key_of(x), 0);
  std::vector<Key> keys;
  for (auto& [k, v] : index) keys.push_back(k);
  std::mt19937_64 rng(seed);
  std::shuffle(keys.begin(), keys.end(), rng);
  int k = std::max(1, std::min<int>(folds, static_cast<int>(keys.size())));
  for (size_t i = 0; i < keys.size(); ++i) index[keys[i]] = static_cast<int>(i % k);
  std::vector<int> out;
  for (const auto& x : s.samples) out.push_back(index[key_of(x)]);
  return out;
}

void ConformalResiduals::set(std::vector<double> r) {
  const double inf = std::numeric_limits<double>::infinity();
  abs_.clear(), shortfall_.clear(), excess_.clear();
  for (double x : r) {
    bool bad = std::isnan(x);
    abs_.push_back(bad ? inf : std::abs(x));
    shortfall_.push_back(bad ? inf : -x);
    excess_.push_back(bad ? inf : x);
  }
  std::sort(abs_.begin(), abs_.end());
  std::sort(shortfall_.begin(), shortfall_.end());
  std::sort(excess_.begin(), excess_.end());
}

std::optional<double> ConformalResiduals::quantile(double coverage) const { return conformal_rank(abs_, coverage); }

std::optional<double> ConformalResiduals::one_sided(double coverage, models::BoundSide side) const {
  return conformal_rank(side == models::BoundSide::kLower ? shortfall_ : excess_, coverage);
}

bool ConformalResiduals::too_few(double coverage) const {
  return std::ceil((double(abs_.size()) + 1) * coverage) > double(abs_.size());
}

std::string ConformalResiduals::describe(const std::string& kind) const {
  if (abs_.empty()) return "no " + kind + " residuals";
  auto q = [&](double c) { return quantile(c).value_or(0) * 100; };
  std::string s = fmt::format("{} {} relative residuals; half-width at 50%: {:.2f}%, 80%: {:.2f}%, 90%: {:.2f}%, "
                              "95%: {:.2f}%",
                              abs_.size(), kind, q(0.5), q(0.8), q(0.9), q(0.95));
  auto side = [&](models::BoundSide b) { return one_sided(0.9, b).value_or(0) * 100; };
  s += fmt::format("; one-sided at 90%: {:+.2f}% below, {:+.2f}% above", -side(models::BoundSide::kLower),
                   side(models::BoundSide::kUpper));
  if (too_few(0.95)) s += " (too few residuals to guarantee 95%)";
  return s;
}

// ---- time ----

ConformalTimeModel::ConformalTimeModel(TimeFactory make, ConformalParams p) : make_(std::move(make)), p_(p) {
  name_ = make_()->name();
}

void ConformalTimeModel::fit(const SampleSet& samples) {
  model_ = make_();
  model_->fit(samples);
  notes_.clear();
  auto fold = config_folds(samples, p_.folds, p_.seed);
  int k = fold.empty() ? 0 : *std::max_element(fold.begin(), fold.end()) + 1;
  std::vector<double> r;
  for (int f = 0; f < k && k >= 2; ++f) {
    auto m = make_();
    try {
      m->fit(part(samples, fold, f, false));
    } catch (const std::exception& e) {
      notes_.push_back(fmt::format("fold {} could not be fitted ({}); its residuals are missing", f + 1, e.what()));
      continue;
    }
    std::map<Key, bool> seen;  // one residual per held-out configuration
    for (const auto& s : part(samples, fold, f, true).samples)
      if (!seen[key_of(s)]) {
        seen[key_of(s)] = true;
        r.push_back(signed_residual(s.epoch_time_s, m->predict(s.batch, s.workers, s.nodes)));
      }
  }
  if (k < 2) notes_.push_back("fewer than 2 configurations: no interval");
  res_.set(std::move(r));
  measured_.clear();
  std::vector<double> in;
  if (k >= 2)
    for (const auto& s : samples.samples) {
      measured_.insert(key_of(s));
      in.push_back(signed_residual(s.epoch_time_s, model_->predict(s.batch, s.workers, s.nodes)));
    }
  res_in_.set(std::move(in));
}

bool ConformalTimeModel::measured(double batch, int workers, int nodes) const {
  return measured_.count({batch, workers, nodes}) > 0;
}

double ConformalTimeModel::predict(double batch, int workers, int nodes) const {
  return model_->predict(batch, workers, nodes);
}

std::optional<models::Interval> ConformalTimeModel::predict_interval(double batch, int workers, int nodes,
                                                            double coverage) const {
  auto q = (measured(batch, workers, nodes) ? res_in_ : res_).quantile(coverage);
  if (!q) return std::nullopt;
  models::Interval iv = around(predict(batch, workers, nodes), *q, coverage);
  iv.lo = std::max(iv.lo, 0.0);  // relative residuals above 1 would reach below zero; no epoch takes negative time
  return iv;
}

std::optional<double> ConformalTimeModel::predict_bound(double batch, int workers, int nodes, double coverage,
                                                        models::BoundSide side) const {
  auto q = (measured(batch, workers, nodes) ? res_in_ : res_).one_sided(coverage, side);
  if (!q) return std::nullopt;
  return std::max(bound_of(predict(batch, workers, nodes), *q, side), 0.0);
}

std::string ConformalTimeModel::describe() const {
  return (model_ ? model_->describe() : std::string("(not fitted)")) +
         fmt::format("\n  interval: {}-fold conformal, configurations held out together; {}", p_.folds,
                     res_.describe()) +
         fmt::format("\n  at the {} measured configurations: {}", measured_.size(), res_in_.describe("in-sample")) +
         notes_text(notes_);
}

// ---- metric ----

ConformalMetricModel::ConformalMetricModel(MetricFactory make, ConformalParams p) : make_(std::move(make)), p_(p) {
  name_ = make_()->name();
}

void ConformalMetricModel::fit(const SampleSet& samples) {
  model_ = make_();
  model_->fit(samples);
  notes_.clear();
  SampleSet with;
  with.direction = samples.direction;
  with.dataset_size = samples.dataset_size;
  with.source = samples.source;
  with.samples = samples.with_metric();
  direction_ = samples.direction;
  best_measured_ = samples.best_metric();
  auto fold = config_folds(with, p_.folds, p_.seed);
  int k = fold.empty() ? 0 : *std::max_element(fold.begin(), fold.end()) + 1;
  std::vector<double> r;
  std::vector<std::pair<double, double>> pr;  // (out-of-fold prediction, residual)
  for (int f = 0; f < k && k >= 2; ++f) {
    auto m = make_();
    try {
      m->fit(part(with, fold, f, false));
    } catch (const std::exception& e) {
      notes_.push_back(fmt::format("fold {} could not be fitted ({}); its residuals are missing", f + 1, e.what()));
      continue;
    }
    for (const auto& s : part(with, fold, f, true).samples) {
      double pred = m->predict(s.batch, s.workers, s.epochs);
      r.push_back(signed_residual(*s.metric, pred));
      const double key = bin_key(*m, pred, s.batch, s.workers, s.epochs);
      pr.push_back({std::isfinite(key) ? key : std::numeric_limits<double>::infinity(), r.back()});
    }
  }
  if (k < 2) notes_.push_back("fewer than 2 configurations: no interval");
  res_.set(std::move(r));
  // Mondrian bins: equal counts by the out-of-fold bin key.
  int nb = std::max(1, std::min(p_.metric_bins, static_cast<int>(pr.size()) / std::max(1, p_.min_per_bin)));
  equal_count_bins(std::move(pr), nb, edges_, bins_);
  fit_within_run(with);
  fit_beyond(with);
}

// The beyond rule (conformal.h): the model is fitted on the samples up to an
// epoch count and predicts the later ones, as a query past every sample asks
// it to; each residual is divided by its distance ln(e / the last training
// epoch) + beyond_gap_floor, and a query's half-width is the rank times its own.
void ConformalMetricModel::fit_beyond(const SampleSet& with) {
  beyond_.set({});
  last_sampled_epoch_ = with.last_metric_epoch().value_or(0);
  if (!p_.beyond_rule || with.size() == 0) return;
  std::vector<double> epochs;
  for (const auto& s : with.samples) epochs.push_back(s.epochs);
  std::sort(epochs.begin(), epochs.end());
  // The cut: the largest epoch count with at least 1 - beyond_holdout of the
  // samples at or below it. It is a sampled epoch, so it is also the last
  // epoch the forward fold's model is fitted on.
  const size_t keep = static_cast<size_t>(std::ceil((1 - p_.beyond_holdout) * double(epochs.size())));
  const double cut = epochs[std::clamp<size_t>(keep, 1, epochs.size()) - 1];
  std::vector<int> fold(with.size());
  int held = 0;
  for (size_t i = 0; i < with.size(); ++i) held += fold[i] = with.samples[i].epochs > cut ? 1 : 0;
  if (held < p_.min_per_bin) {
    notes_.push_back(fmt::format("{} samples past {:g} epochs (fewer than {}): no beyond rule, so past the last "
                                 "sampled epoch the interval uses the rules above",
                                 held, cut, p_.min_per_bin));
    return;
  }
  auto m = make_();
  try {
    m->fit(part(with, fold, 1, false));
  } catch (const std::exception& e) {
    notes_.push_back(fmt::format("the forward fold could not be fitted ({}): no beyond rule", e.what()));
    return;
  }
  std::vector<double> scaled;
  for (const auto& s : part(with, fold, 1, true).samples)
    scaled.push_back(signed_residual(*s.metric, m->predict(s.batch, s.workers, s.epochs)) /
                     (std::log(s.epochs / cut) + p_.beyond_gap_floor));
  beyond_.set(std::move(scaled));
}

std::optional<double> ConformalMetricModel::beyond_rank(
    double epochs, const std::function<std::optional<double>(const ConformalResiduals&)>& rank) const {
  if (beyond_.size() == 0 || !(epochs > last_sampled_epoch_)) return std::nullopt;
  auto q = rank(beyond_);
  if (!q) return std::nullopt;
  return *q * (std::log(epochs / last_sampled_epoch_) + p_.beyond_gap_floor);
}

// The within-run rule (conformal.h): each run's samples are shuffled and
// dealt round-robin into run_folds folds; a fold's samples are predicted by a
// model fitted without them but with the rest of their runs, and each
// residual is binned by the epoch gap to the nearest sample of its run that
// the fold kept. A run with one sample stays in every training set (it has no
// other epoch to be predicted from).
void ConformalMetricModel::fit_within_run(const SampleSet& with) {
  run_epochs_.clear();
  gap_edges_.clear();
  gap_bins_.clear();
  between_.set({});
  between_slope_floor_ = 0;
  if (p_.run_folds < 2) return;
  std::map<std::pair<double, int>, std::vector<size_t>> runs;
  for (size_t i = 0; i < with.size(); ++i) runs[{with.samples[i].batch, with.samples[i].workers}].push_back(i);
  std::vector<int> fold(with.size(), -1);
  std::mt19937_64 rng(p_.seed);
  for (auto& [key, idx] : runs) {
    auto& ep = run_epochs_[key];
    for (size_t i : idx) ep.push_back(with.samples[i].epochs);
    std::sort(ep.begin(), ep.end());
    if (idx.size() < 2) continue;
    std::shuffle(idx.begin(), idx.end(), rng);
    for (size_t j = 0; j < idx.size(); ++j) fold[idx[j]] = static_cast<int>(j % p_.run_folds);
  }
  std::vector<std::pair<double, double>> gr;
  struct Between {
    double residual, gap, slope;
  };
  std::vector<Between> between;  // held-out samples with kept samples of their run on both sides
  for (int f = 0; f < p_.run_folds; ++f) {
    std::vector<size_t> test;
    for (size_t i = 0; i < with.size(); ++i)
      if (fold[i] == f) test.push_back(i);
    if (test.empty()) continue;
    auto m = make_();
    try {
      m->fit(part(with, fold, f, false));
    } catch (const std::exception& e) {
      notes_.push_back(fmt::format("within-run fold {} could not be fitted ({}); its residuals are missing", f + 1,
                                   e.what()));
      continue;
    }
    for (size_t i : test) {
      const auto& s = with.samples[i];
      double gap = std::numeric_limits<double>::infinity();
      bool kept_below = false, kept_above = false;
      for (size_t j : runs[{s.batch, s.workers}])
        if (fold[j] != f) {
          gap = std::min(gap, std::abs(std::log(s.epochs / with.samples[j].epochs)));
          kept_below = kept_below || with.samples[j].epochs < s.epochs;
          kept_above = kept_above || with.samples[j].epochs > s.epochs;
        }
      const double pred = m->predict(s.batch, s.workers, s.epochs);
      gr.push_back({gap, signed_residual(*s.metric, pred)});
      if (kept_below && kept_above) {
        const double slope = bin_key(*m, pred, s.batch, s.workers, s.epochs);
        if (std::isfinite(slope)) between.push_back({gr.back().second, gap, slope});
      }
    }
  }
  if (p_.between_rule) {
    std::vector<double> slopes;
    for (const auto& b : between) slopes.push_back(b.slope);
    between_slope_floor_ = slopes.empty() ? 0 : median(slopes);
    if (static_cast<int>(between.size()) < p_.min_per_bin) {
      notes_.push_back(fmt::format("{} within-run residuals between samples (fewer than {}): no between rule",
                                   between.size(), p_.min_per_bin));
    } else if (!(between_slope_floor_ > 1e-12)) {
      // A model flat in epochs where it interpolates: no slope to scale by.
      notes_.push_back("the model is flat in epochs between samples (median slope 0): no between rule");
    } else {
      std::vector<double> scaled;
      for (const auto& b : between)
        scaled.push_back(b.residual / ((b.gap + p_.between_gap_floor) * (b.slope + between_slope_floor_)));
      between_.set(std::move(scaled));
    }
  }
  if (static_cast<int>(gr.size()) < p_.min_per_bin) {
    notes_.push_back(fmt::format("{} within-run residuals (fewer than {}): measured runs use the configuration rule",
                                 gr.size(), p_.min_per_bin));
    return;
  }
  const int nb = std::max(1, std::min(p_.metric_bins, static_cast<int>(gr.size()) / std::max(1, p_.min_per_bin)));
  equal_count_bins(std::move(gr), nb, gap_edges_, gap_bins_);
}

const std::vector<double>* ConformalMetricModel::measured_run(double batch, int workers) const {
  auto it = run_epochs_.find({batch, workers});
  return it == run_epochs_.end() || it->second.size() < 2 ? nullptr : &it->second;
}

double ConformalMetricModel::nearest_gap(const std::vector<double>& sampled, double epochs) {
  double gap = std::numeric_limits<double>::infinity();
  for (double e : sampled) gap = std::min(gap, std::abs(std::log(epochs / e)));
  return gap;
}

const ConformalResiduals* ConformalMetricModel::within_run_at(double batch, int workers, double epochs) const {
  if (gap_bins_.empty()) return nullptr;
  const auto* run = measured_run(batch, workers);
  if (!run) return nullptr;
  const double gap = nearest_gap(*run, epochs);
  size_t b = std::upper_bound(gap_edges_.begin(), gap_edges_.end(), gap) - gap_edges_.begin();
  return &gap_bins_[std::min(b, gap_bins_.size() - 1)];
}

std::optional<double> ConformalMetricModel::between_scale(double y, double batch, int workers, double epochs) const {
  if (between_.size() == 0) return std::nullopt;
  const auto* run = measured_run(batch, workers);
  if (!run || !(run->front() < epochs && epochs < run->back())) return std::nullopt;
  const double gap = nearest_gap(*run, epochs);
  const double slope = bin_key(*model_, y, batch, workers, epochs);
  if (!std::isfinite(slope)) return std::nullopt;
  return (gap + p_.between_gap_floor) * (slope + between_slope_floor_);
}

double ConformalMetricModel::predict(double batch, int workers, double epochs) const {
  return model_->predict(batch, workers, epochs);
}

double ConformalMetricModel::bin_key(double batch, int workers, double epochs) const {
  return bin_key(*model_, predict(batch, workers, epochs), batch, workers, epochs);
}

double ConformalMetricModel::bin_key(const models::MetricModel& m, double y, double batch, int workers, double epochs) const {
  if (p_.taxonomy == ConformalParams::Taxonomy::kPredicted) return y;
  return std::abs(m.predict(batch, workers, epochs * kSlopeStep) - m.predict(batch, workers, epochs / kSlopeStep)) /
         std::max(std::abs(y), 1e-12);
}

const ConformalResiduals& ConformalMetricModel::residuals_at(double key) const {
  if (bins_.empty()) return res_;
  size_t b = std::upper_bound(edges_.begin(), edges_.end(), key) - edges_.begin();
  return bins_[std::min(b, bins_.size() - 1)];
}

std::optional<double> ConformalMetricModel::rank_at(
    double y, double batch, int workers, double epochs,
    const std::function<std::optional<double>(const ConformalResiduals&)>& rank) const {
  if (auto scale = between_scale(y, batch, workers, epochs)) {
    auto q = rank(between_);
    return q ? std::optional<double>(*q * *scale) : std::nullopt;
  }
  auto q = rank(residuals_at(bin_key(*model_, y, batch, workers, epochs)));
  if (const ConformalResiduals* run = within_run_at(batch, workers, epochs)) {
    auto qr = rank(*run);
    if (q && qr) q = std::max(*q, *qr);
  }
  if (auto qb = beyond_rank(epochs, rank); q && qb) q = std::max(*q, *qb);
  return q;
}

std::optional<models::Interval> ConformalMetricModel::predict_interval(double batch, int workers, double epochs,
                                                              double coverage) const {
  const double y = predict(batch, workers, epochs);
  auto q = rank_at(y, batch, workers, epochs, [&](const ConformalResiduals& c) { return c.quantile(coverage); });
  if (!q) return std::nullopt;
  models::Interval iv = around(y, *q, coverage);
  double& worse = worse_side() == models::BoundSide::kLower ? iv.lo : iv.hi;
  worse = held(worse);
  return iv;
}

double ConformalMetricModel::held(double v) const {
  if (!p_.hold_to_best_measured || !best_measured_) return v;
  return worse_side() == models::BoundSide::kLower ? std::min(v, *best_measured_) : std::max(v, *best_measured_);
}

std::optional<double> ConformalMetricModel::predict_bound(double batch, int workers, double epochs,
                                                          double coverage, models::BoundSide side) const {
  const double y = predict(batch, workers, epochs);
  auto q = rank_at(y, batch, workers, epochs, [&](const ConformalResiduals& c) { return c.one_sided(coverage, side); });
  if (!q) return std::nullopt;
  const double b = bound_of(y, *q, side);
  return side == worse_side() ? held(b) : b;
}

std::string ConformalMetricModel::describe() const {
  return (model_ ? model_->describe() : std::string("(not fitted)")) +
         fmt::format("\n  interval: {}-fold conformal, configurations held out together; {}", p_.folds,
                     res_.describe()) +
         bins_text() + within_run_text() + between_text() + beyond_text() + hold_text() + notes_text(notes_);
}

std::string ConformalMetricModel::beyond_text() const {
  if (beyond_.size() == 0) return "";
  const double q90 = beyond_.quantile(0.9).value_or(0);
  return fmt::format(
      "\n  past the last sampled epoch of every run ({:g}), the half-width is at least: {} forward residuals "
      "(fitted on the earlier epochs, scored on the latest {:.0f}% of the samples), each divided by ln(e / last "
      "fitted epoch) + {:g}; at 90% the half-width is {:.3g} times ln(e / {:g}) + {:g}, e.g. {:.2f}% at twice the "
      "last sampled epoch",
      last_sampled_epoch_, beyond_.size(), 100 * p_.beyond_holdout, p_.beyond_gap_floor, q90, last_sampled_epoch_,
      p_.beyond_gap_floor, 100 * q90 * (std::log(2.0) + p_.beyond_gap_floor));
}

std::string ConformalMetricModel::hold_text() const {
  if (!p_.hold_to_best_measured || !best_measured_) return "";
  return fmt::format("\n  the {} end is held at the best sampled metric, {:.6g}, where it would promise better",
                     worse_side() == models::BoundSide::kLower ? "lower" : "upper", *best_measured_);
}

std::string ConformalMetricModel::between_text() const {
  if (between_.size() == 0) return "";
  const double q90 = between_.quantile(0.9).value_or(0);
  return fmt::format(
      "\n  between two sampled epochs of a measured run, instead: {} within-run residuals of samples with kept "
      "samples of their run on both sides, each divided by (gap + {:g}) * (slope + {:.3g}); at 90% the half-width "
      "is {:.3g} times a query's own (gap + {:g}) * (slope + {:.3g}), e.g. {:.2f}% at a sampled epoch where the "
      "slope is {:.3g}",
      between_.size(), p_.between_gap_floor, between_slope_floor_, q90, p_.between_gap_floor, between_slope_floor_,
      100 * q90 * p_.between_gap_floor * 2 * between_slope_floor_, between_slope_floor_);
}

std::string ConformalMetricModel::within_run_text() const {
  if (gap_bins_.empty()) return "";
  std::string s = fmt::format(
      "\n  at the {} measured runs (batch, workers): the wider of the above and {}-fold within-run conformal "
      "(each run's epochs held out in turn), {} bin(s) by the gap |ln(e / nearest sampled e)|",
      run_epochs_.size(), p_.run_folds, gap_bins_.size());
  for (size_t b = 0; b < gap_bins_.size(); ++b)
    s += fmt::format("\n    gap {}: {}", bin_range(gap_edges_, b), gap_bins_[b].describe("within-run"));
  return s;
}

std::string ConformalMetricModel::bins_text() const {
  if (bins_.size() < 2) return "; one bin (too few residuals for Mondrian bins)";
  const bool slope = p_.taxonomy == ConformalParams::Taxonomy::kSlope;
  std::string s = fmt::format("; used: {} Mondrian bins by {}", bins_.size(),
                              slope ? fmt::format("the model's slope in epochs, |m({0}e) - m(e/{0})| / |m(e)|", kSlopeStep)
                                    : std::string("predicted metric"));
  for (size_t b = 0; b < bins_.size(); ++b) {
    s += fmt::format("\n    {} {}: {}", slope ? "slope" : "predicted", bin_range(edges_, b), bins_[b].describe());
  }
  return s;
}

// ---- factories ----

std::unique_ptr<models::TimeModel> with_conformal(TimeFactory make, ConformalParams p) {
  return std::make_unique<ConformalTimeModel>(std::move(make), p);
}

std::unique_ptr<models::MetricModel> with_conformal_metric(MetricFactory make, ConformalParams p) {
  return std::make_unique<ConformalMetricModel>(std::move(make), p);
}

std::unique_ptr<models::TimeModel> conformal_time_model(const std::string& name, ConformalParams p,
                                                        const models::ModelParams& mp) {
  models::ModelRegistry::instance().make_time(name, mp);  // throws for an unknown name or part
  return with_conformal([name, mp] { return models::ModelRegistry::instance().make_time(name, mp); }, p);
}

std::unique_ptr<models::MetricModel> conformal_metric_model(const std::string& name, ConformalParams p,
                                                            const models::ModelParams& mp) {
  models::ModelRegistry::instance().make_metric(name, mp);  // throws for an unknown name or part
  MetricFactory make = [name, mp] { return models::ModelRegistry::instance().make_metric(name, mp); };
  if (!p.pin_runs) return with_conformal_metric(make, p);
  return with_conformal_metric([make] { return std::make_unique<RunPinnedMetricModel>(make()); }, p);
}

}  // namespace trainplan::uncertainty
