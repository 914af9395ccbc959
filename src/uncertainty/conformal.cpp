#include "uncertainty/conformal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/cancel.h"
#include "core/error.h"
#include "models/time_config_key.h"
#include "models/pooled_samples.h"
#include "models/registry.h"
#include "numerics/normal_quantile.h"
#include "uncertainty/metric_run_pinned.h"

namespace trainplan::uncertainty {

namespace {

using Key = models::TimeConfigKey;  // batch, workers, nodes

// As the time models' points are told apart (models/time_config_key.h).
Key key_of(const Sample& s) { return models::time_config_key(s); }

std::string notes_text(const std::vector<std::string>& notes) {
  std::string s;
  for (const auto& n : notes) s += "\n  note: " + n;
  return s;
}

}  // namespace

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
    check_cancelled();
    auto m = make_();
    try {
      m->fit(fold_part(samples, fold, f, false));
    } catch (const std::exception& e) {
      notes_.push_back(fmt::format("fold {} could not be fitted ({}); its residuals are missing", f + 1, e.what()));
      continue;
    }
    // One residual per held-out configuration, at the point the models are fitted and scored on.
    for (const auto& s : models::distinct_time_configs(fold_part(samples, fold, f, true)).samples) {
      check_cancelled();
      r.push_back(signed_residual(s.epoch_time_s, m->predict(s.batch, s.workers, s.nodes)));
    }
  }
  folds_used_ = k;
  if (k < 2) notes_.push_back("fewer than 2 configurations: no interval");
  res_.set(std::move(r));
  measured_.clear();
  spread_.clear();
  std::vector<double> in;
  if (k >= 2)
    for (const auto& s : samples.samples) {
      check_cancelled();
      measured_.insert(key_of(s));
      if (s.time_spread) spread_[key_of(s)] = std::max(spread_[key_of(s)], *s.time_spread);
      in.push_back(signed_residual(s.epoch_time_s, model_->predict(s.batch, s.workers, s.nodes)));
    }
  res_in_.set(std::move(in));
}

bool ConformalTimeModel::measured(double batch, int workers, int nodes) const {
  return measured_.count(models::time_config_key(batch, workers, nodes)) > 0;
}

double ConformalTimeModel::predict(double batch, int workers, int nodes) const {
  return model_->predict(batch, workers, nodes);
}

double ConformalTimeModel::measured_floor(double batch, int workers, int nodes, double coverage, int sides) const {
  auto it = spread_.find(models::time_config_key(batch, workers, nodes));
  if (it == spread_.end() || !(coverage > 0 && coverage < 1)) return 0;
  const double z95 = numerics::normal_quantile(0.975);
  const double z = numerics::normal_quantile(sides == 2 ? 0.5 + coverage / 2 : coverage);
  return std::max(0.0, it->second * z / z95);
}

std::optional<models::Interval> ConformalTimeModel::predict_interval(double batch, int workers, int nodes,
                                                            double coverage) const {
  const bool at_measured = measured(batch, workers, nodes);
  auto q = (at_measured ? res_in_ : res_).quantile(coverage);
  if (!q) return std::nullopt;
  if (at_measured) q = std::max(*q, measured_floor(batch, workers, nodes, coverage, 2));
  models::Interval iv = interval_around(predict(batch, workers, nodes), *q, coverage);
  iv.lo = std::max(iv.lo, 0.0);  // relative residuals above 1 would reach below zero; no epoch takes negative time
  return iv;
}

IntervalBasis ConformalTimeModel::interval_basis(double batch, int workers, int nodes, double coverage) const {
  const bool at_measured = measured(batch, workers, nodes);
  const ConformalResiduals& r = at_measured ? res_in_ : res_;
  return {r.size(), at_measured, !r.too_few(coverage)};
}

std::optional<double> ConformalTimeModel::predict_bound(double batch, int workers, int nodes, double coverage,
                                                        models::BoundSide side) const {
  const bool at_measured = measured(batch, workers, nodes);
  auto q = (at_measured ? res_in_ : res_).one_sided(coverage, side);
  if (!q) return std::nullopt;
  // q is how far beyond the prediction the bound lies on its side (negative
  // where the model errs to the other side): the floor moves it outwards.
  if (at_measured) q = std::max(*q, measured_floor(batch, workers, nodes, coverage, 1));
  return std::max(bound_at(predict(batch, workers, nodes), *q, side), 0.0);
}

std::string ConformalTimeModel::describe() const {
  return (model_ ? model_->describe() : std::string("(not fitted)")) +
         fmt::format("\n  interval: {}-fold conformal, configurations held out together; {}", folds_used_,
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
  // A row repeated exactly (the same configuration, epochs and metric: a file concatenated with
  // itself) is one measurement: counted twice it would narrow the interval and claim a coverage
  // the measurements do not give. Reruns that measured another metric each count.
  std::set<std::tuple<double, int, int, double, double>> seen;  // (batch, workers, nodes, epochs, metric)
  for (const auto& x : samples.with_metric())
    if (seen.insert({x.batch, x.workers, x.nodes, x.epochs, *x.metric}).second) with.samples.push_back(x);
  direction_ = samples.direction;
  best_measured_ = samples.best_metric();
  range_ = samples.metric_range();
  config_.fit(make_, with, p_, notes_);
  folds_used_ = config_fold_count(with, p_.folds);
  const auto within = within_run_residuals(make_, with, p_, runs_, notes_);
  between_.fit(within, p_, notes_);
  run_gap_.fit(within, p_, runs_.size(), notes_);
  beyond_.fit(make_, with, p_, notes_);
}

double ConformalMetricModel::predict(double batch, int workers, double epochs) const {
  // Within the metric's range, as the interval's ends are: a curve fitted far out (Optimus's at 0.01
  // epochs) can pass it, and an accuracy of -0.3 would sit outside its own interval [0, 0].
  return std::clamp(model_->predict(batch, workers, epochs), range_.lo, range_.hi);
}

double ConformalMetricModel::bin_key(double batch, int workers, double epochs) const {
  return metric_bin_key(*model_, predict(batch, workers, epochs), batch, workers, epochs, p_.taxonomy);
}

const ConformalResiduals& ConformalMetricModel::width_residuals(double y, double batch, int workers, double epochs,
                                                                std::optional<double>* between_scale) const {
  if ((*between_scale = between_.scale(runs_, *model_, y, batch, workers, epochs))) return between_.scaled();
  return config_.at(metric_bin_key(*model_, y, batch, workers, epochs, p_.taxonomy));
}

std::optional<double> ConformalMetricModel::rank_at(double y, double batch, int workers, double epochs,
                                                    const ResidualRank& rank) const {
  std::optional<double> scale;
  const ConformalResiduals& base = width_residuals(y, batch, workers, epochs, &scale);
  if (scale) {
    auto q = rank(base);
    return q ? std::optional<double>(*q * *scale) : std::nullopt;
  }
  auto q = rank(base);
  if (const ConformalResiduals* run = run_gap_.at(runs_, batch, workers, epochs)) {
    auto qr = rank(*run);
    if (q && qr) q = std::max(*q, *qr);
  }
  if (auto qb = beyond_.rank(epochs, rank); q && qb) q = std::max(*q, *qb);
  return q;
}

std::optional<models::Interval> ConformalMetricModel::predict_interval(double batch, int workers, double epochs,
                                                                       double coverage) const {
  const double y = predict(batch, workers, epochs);
  auto q = rank_at(y, batch, workers, epochs, [&](const ConformalResiduals& c) { return c.quantile(coverage); });
  if (!q) return std::nullopt;
  models::Interval iv = interval_around(y, *q, coverage);
  double& worse = worse_side() == models::BoundSide::kLower ? iv.lo : iv.hi;
  worse = held(worse);
  iv.lo = std::clamp(iv.lo, range_.lo, range_.hi);
  iv.hi = std::clamp(iv.hi, range_.lo, range_.hi);
  return iv;
}

IntervalBasis ConformalMetricModel::interval_basis(double batch, int workers, double epochs, double coverage) const {
  std::optional<double> scale;
  const ConformalResiduals& r = width_residuals(predict(batch, workers, epochs), batch, workers, epochs, &scale);
  return {r.size(), false, !r.too_few(coverage)};
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
  const double b = bound_at(y, *q, side);
  return std::clamp(side == worse_side() ? held(b) : b, range_.lo, range_.hi);
}

std::string ConformalMetricModel::describe() const {
  return (model_ ? model_->describe() : std::string("(not fitted)")) +
         fmt::format("\n  interval: {}-fold conformal, configurations held out together; {}", folds_used_,
                     config_.pooled().describe()) +
         config_.describe() + run_gap_.describe() + between_.describe() + beyond_.describe() + hold_text() +
         range_text() +
         notes_text(notes_);
}

std::string ConformalMetricModel::range_text() const {
  if (range_.lo <= -1e300 && range_.hi >= 1e300) return "";
  auto end = [](double v) { return std::abs(v) >= 1e300 ? std::string(v < 0 ? "-inf" : "inf") : fmt::format("{:g}", v); };
  return fmt::format("\n  ends clipped to the metric's range [{}, {}] ({})", end(range_.lo), end(range_.hi), range_.from);
}

std::string ConformalMetricModel::hold_text() const {
  if (!p_.hold_to_best_measured || !best_measured_) return "";
  return fmt::format("\n  the {} end is held at the best sampled metric, {:.6g}, where it would promise better",
                     worse_side() == models::BoundSide::kLower ? "lower" : "upper", *best_measured_);
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
  auto make = models::ModelRegistry::instance().with_time(name).make_time;
  return with_conformal([make, mp] { return make(mp); }, p);
}

std::unique_ptr<models::MetricModel> conformal_metric_model(const std::string& name, ConformalParams p,
                                                            const models::ModelParams& mp) {
  MetricFactory make = [part = models::ModelRegistry::instance().with_metric(name).make_metric, mp] {
    return part(mp);
  };
  if (!p.pin_runs) return with_conformal_metric(make, p);
  return with_conformal_metric([make] { return std::make_unique<RunPinnedMetricModel>(make()); }, p);
}

}  // namespace trainplan::uncertainty
