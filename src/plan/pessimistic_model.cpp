#include "plan/pessimistic_model.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"

namespace trainplan::plan {

PessimisticModel::PessimisticModel(std::shared_ptr<const models::FittedPerformanceModel> m, double coverage,
                                   int probe_batch)
    : m_(std::move(m)), coverage_(coverage) {
  if (!(coverage > 0 && coverage < 1)) throw InputError("--confidence must be strictly between 0 and 1");
  if (!m_->time_model()->predict_interval(probe_batch, 1, 1, coverage))
    throw InputError(fmt::format("--confidence needs prediction intervals, but time model '{}' gives none; "
                                 "add --conformal, choose a model with intervals, or drop --confidence",
                                 m_->time_model()->name()));
  if (!m_->metric_model() || !m_->metric_model()->predict_interval(probe_batch, 1, 1.0, coverage))
    throw InputError(fmt::format("--confidence needs prediction intervals, but metric model '{}' gives none; "
                                 "add --conformal, choose a model with intervals, or drop --confidence",
                                 m_->metric_model() ? m_->metric_model()->name() : "none"));
}

std::optional<double> PessimisticModel::epoch_time(int batch, int workers, int nodes) const {
  auto iv = m_->time_model()->predict_interval(batch, workers, nodes, coverage_);
  if (!iv || !std::isfinite(iv->hi) || iv->hi <= 0) return std::nullopt;
  return iv->hi;
}

std::optional<double> PessimisticModel::metric(int batch, int workers, double epochs) const {
  auto iv = m_->metric_model()->predict_interval(batch, workers, epochs, coverage_);
  if (!iv) return std::nullopt;
  double v = direction() == MetricDirection::kMax ? iv->lo : iv->hi;
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string PessimisticModel::name() const { return fmt::format("{} (pessimistic at {:g})", m_->name(), coverage_); }

}  // namespace trainplan::plan
