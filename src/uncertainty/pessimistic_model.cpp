#include "uncertainty/pessimistic_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "core/error.h"
#include "core/sample.h"
#include "numerics/normal_quantile.h"

namespace trainplan::uncertainty {

double widen_by_shared_error(double point, double end, IntervalEnd side, double z, double log_sd) {
  if (!(log_sd > 0) || !(point > 0) || !(end > 0)) return end;
  const double wider = std::hypot(std::log(end / point), z * log_sd);
  return point * std::exp(side == IntervalEnd::kLower ? -wider : wider);
}

std::string to_string(ConfidenceBounds b) { return b == ConfidenceBounds::kOneSided ? "one-sided" : "two-sided"; }

ConfidenceBounds parse_confidence_bounds(const std::string& s) {
  if (s == "one-sided") return ConfidenceBounds::kOneSided;
  if (s == "two-sided") return ConfidenceBounds::kTwoSided;
  throw InputError("", 0, "--bounds", fmt::format("must be one-sided or two-sided, got '{}'", s));
}

PessimisticModel::PessimisticModel(std::shared_ptr<const models::FittedPerformanceModel> m, double coverage,
                                   int probe_batch, ConfidenceBounds bounds, double shared_time_log_sd)
    : m_(std::move(m)), coverage_(coverage), bounds_(bounds), shared_time_log_sd_(shared_time_log_sd) {
  if (!(shared_time_log_sd >= 0) || !std::isfinite(shared_time_log_sd))
    throw InputError("", 0, "times_predicted_log_sd", "must be a finite number >= 0");
  if (!(coverage > 0 && coverage < 1))
    throw InputError("", 0, "--confidence", "must be strictly between 0 and 1");
  shared_time_z_ = numerics::normal_quantile(bounds == ConfidenceBounds::kOneSided ? coverage : (1 + coverage) / 2);
  if (!m_->time_model()->predict_interval(probe_batch, 1, 1, coverage))
    throw InputError("", 0, "--confidence",
                     fmt::format("needs prediction intervals, but time model '{}' gives none; "
                                 "add --conformal, choose a model with intervals, or drop --confidence",
                                 m_->time_model()->name()));
  if (!m_->metric_model() || !m_->metric_model()->predict_interval(probe_batch, 1, 1.0, coverage))
    throw InputError("", 0, "--confidence",
                     fmt::format("needs prediction intervals, but metric model '{}' gives none; "
                                 "add --conformal, choose a model with intervals, or drop --confidence",
                                 m_->metric_model() ? m_->metric_model()->name() : "none"));
}

std::optional<double> PessimisticModel::epoch_time(int batch, int workers, int nodes) const {
  std::optional<double> hi;
  if (bounds_ == ConfidenceBounds::kOneSided) {
    hi = m_->time_model()->predict_bound(batch, workers, nodes, coverage_, models::BoundSide::kUpper);
  } else if (auto iv = m_->time_model()->predict_interval(batch, workers, nodes, coverage_)) {
    hi = iv->hi;
  }
  if (!hi || !std::isfinite(*hi) || *hi <= 0) return std::nullopt;
  if (shared_time_log_sd_ > 0) {
    const double point = m_->time_model()->predict(batch, workers, nodes);
    if (!(point > 0) || !std::isfinite(point)) return std::nullopt;
    hi = widen_by_shared_error(point, std::max(*hi, point), IntervalEnd::kUpper, shared_time_z_, shared_time_log_sd_);
  }
  return hi;
}

std::optional<double> PessimisticModel::metric(int batch, int workers, double epochs) const {
  if (std::isnan(epochs)) return std::nullopt;
  epochs = std::min(epochs, double(kMostEpochs));  // no plan runs longer; the best there stands past it
  const MetricDirection d = direction();
  auto better = [d](double a, double b) { return metric_better(a, b, d) ? a : b; };
  auto worse = [d](double a, double b) { return metric_better(a, b, d) ? b : a; };
  std::lock_guard<std::mutex> lock(best_so_far_mutex_);
  if (cell_ != std::pair{batch, workers}) cell_ = {batch, workers}, best_so_far_.clear();
  auto& seen = best_so_far_;
  auto next_epoch = [](double e) { return e < kEveryEpochUpTo ? e + 1 : std::ceil(e * kEpochStep); };
  // Every count looked at up to the first at or past `epochs`.
  while (seen.empty() || seen.back().first < epochs) {
    const double e = seen.empty() ? 1 : next_epoch(seen.back().first);
    const double before = seen.empty() ? std::nan("") : seen.back().second;
    const auto v = bound(batch, workers, e);
    seen.emplace_back(e, !v ? before : std::isnan(before) ? *v : better(before, *v));
  }
  auto at_or_past = std::lower_bound(seen.begin(), seen.end(), epochs,
                                     [](const std::pair<double, double>& s, double e) { return s.first < e; });
  const double next = at_or_past->second;  // the best up to the first count at or past `epochs`
  auto known = [](double v) { return std::isnan(v) ? std::nullopt : std::optional<double>(v); };
  if (at_or_past->first == epochs) return known(next);
  // Between two counts looked at (or under 1 epoch): its own bound, but
  // never better than the next count's answer nor worse than the last's, so
  // that the answers never turn back across a count looked at.
  const double last = at_or_past == seen.begin() ? std::nan("") : std::prev(at_or_past)->second;
  std::optional<double> v = known(last);
  if (auto own = bound(batch, workers, epochs)) {
    const double capped = std::isnan(next) ? *own : worse(*own, next);
    v = v ? better(*v, capped) : capped;
  }
  return v;
}

std::optional<double> PessimisticModel::bound(int batch, int workers, double epochs) const {
  const bool max = direction() == MetricDirection::kMax;
  std::optional<double> v;
  if (bounds_ == ConfidenceBounds::kOneSided) {
    v = m_->metric_model()->predict_bound(batch, workers, epochs, coverage_,
                                          max ? models::BoundSide::kLower : models::BoundSide::kUpper);
  } else if (auto iv = m_->metric_model()->predict_interval(batch, workers, epochs, coverage_)) {
    v = max ? iv->lo : iv->hi;
  }
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::string PessimisticModel::name() const {
  return fmt::format("{} (pessimistic at {:g}, {})", m_->name(), coverage_, to_string(bounds_));
}

}  // namespace trainplan::uncertainty
