#include "models/isotonic_mi.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "models/registry.h"

namespace trainplan::models {

void AdditiveIsotonic::fit(const std::vector<std::string>& names, const std::vector<std::vector<double>>& columns,
                           const std::vector<double>& y, const std::vector<bool>& unimodal, const numerics::MiBinning& binning) {
  numerics::MiWeights mw = numerics::mi_weights(columns, y, binning);
  dims_.clear();
  for (size_t s = 0; s < columns.size(); ++s) {
    Dimension d;
    d.name = names[s];
    d.mi = mw.mi[s];
    d.weight = mw.weight[s];
    // The direction is the one that fits the data better (ties: increasing).
    numerics::PooledPoints pts = numerics::pool_points(columns[s], y, {});
    numerics::IsotonicCurve inc = numerics::fit_isotonic(pts, numerics::Shape::kIncreasing);
    numerics::IsotonicCurve dec = numerics::fit_isotonic(pts, numerics::Shape::kDecreasing);
    d.curve = dec.sse < inc.sse ? dec : inc;
    if (unimodal[s]) {
      numerics::IsotonicCurve peak = numerics::fit_isotonic(pts, numerics::Shape::kPeak);
      numerics::IsotonicCurve valley = numerics::fit_isotonic(pts, numerics::Shape::kValley);
      numerics::IsotonicCurve& uni = valley.sse < peak.sse ? valley : peak;
      // A unimodal fit is never worse than a monotone one; call it unimodal only
      // when it is strictly better, so that describe() says what was found.
      if (uni.sse < d.curve.sse * (1 - 1e-12) - 1e-300) d.curve = uni;
    }
    dims_.push_back(std::move(d));
  }
}

double AdditiveIsotonic::predict(const std::vector<double>& x) const {
  double f = 0;
  for (size_t s = 0; s < dims_.size(); ++s) f += dims_[s].weight * dims_[s].curve.predict(x[s]);
  return f;
}

std::string AdditiveIsotonic::describe() const {
  std::string out;
  for (const auto& d : dims_)
    out += fmt::format("  {:<8} weight {:.4f} (MI {:.4f} nats), {}, {} knots on [{:g}, {:g}]\n", d.name, d.weight, d.mi,
                       to_string(d.curve.shape), d.curve.x.size(), d.curve.x.front(), d.curve.x.back());
  return out;
}

namespace {

std::string where(const SampleSet& s) { return s.source.empty() ? std::string("samples") : s.source; }

}  // namespace

void IsotonicMiTimeModel::fit(const SampleSet& samples) {
  if (samples.empty()) throw InputError(samples.source, 0, "", name_ + ": no samples to fit the epoch-time model on");
  std::vector<double> b, r, t;
  for (const auto& s : samples.samples) {
    b.push_back(s.batch);
    r.push_back(s.workers);
    t.push_back(s.epoch_time_s);
  }
  f1_.fit({"batch", "workers"}, {b, r}, t, {false, false}, params_.binning);
}

double IsotonicMiTimeModel::predict(double batch, int workers, int) const { return f1_.predict({batch, double(workers)}); }

std::string IsotonicMiTimeModel::describe() const {
  return name_ + " f1(batch, workers) -> epoch seconds = sum of weight x isotonic(parameter):\n" + f1_.describe();
}

void IsotonicMiMetricModel::fit(const SampleSet& samples) {
  std::vector<double> b, e, m;
  for (const auto& s : samples.samples) {
    if (!s.metric) continue;
    b.push_back(s.batch);
    e.push_back(s.epochs);
    m.push_back(*s.metric);
  }
  if (m.empty())
    throw InputError(samples.source, 0, "metric",
                     name_ + ": no sample in " + where(samples) + " carries a metric, so the metric model cannot be fitted");
  f2_.fit({"batch", "epochs"}, {b, e}, m, {params_.unimodal_metric_batch, false}, params_.binning);
}

double IsotonicMiMetricModel::predict(double batch, int, double epochs) const { return f2_.predict({batch, epochs}); }

std::string IsotonicMiMetricModel::describe() const {
  return name_ + " f2(batch, epochs) -> metric = sum of weight x isotonic(parameter) (workers ignored, as in the paper):\n" +
         f2_.describe();
}

namespace {

const char* const kSummary = "Liang et al. 2022: weighted sum of 1-D isotonic fits, weights from mutual information";
const char* const kUnimodalSummary =
    "isotonic-mi with metric vs batch fitted rise-then-fall or fall-then-rise (time part as isotonic-mi)";

IsotonicMiParams unimodal_params() {
  IsotonicMiParams p;
  p.unimodal_metric_batch = true;
  return p;
}

TimeModelRegistrar reg_time("isotonic-mi", kSummary, [] { return std::make_unique<IsotonicMiTimeModel>(); });
MetricModelRegistrar reg_metric("isotonic-mi", kSummary, [] { return std::make_unique<IsotonicMiMetricModel>(); });
TimeModelRegistrar reg_time_uni("isotonic-mi-unimodal", kUnimodalSummary, [] {
  return std::make_unique<IsotonicMiTimeModel>(unimodal_params(), "isotonic-mi-unimodal");
});
MetricModelRegistrar reg_metric_uni("isotonic-mi-unimodal", kUnimodalSummary, [] {
  return std::make_unique<IsotonicMiMetricModel>(unimodal_params(), "isotonic-mi-unimodal");
});

}  // namespace

}  // namespace trainplan::models
