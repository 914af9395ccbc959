#include "app/curves.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "core/cancel.h"
#include "core/even_subset.h"
#include "core/error.h"
#include "models/registry.h"
#include "scoring/evaluate.h"
#include "scoring/fit_plot.h"
#include "scoring/report.h"

namespace trainplan::app {
namespace {

using nlohmann::json;

// 1..rmax, every count when there are at most k, else k counts spread
// geometrically (the time curves are read on a log axis), 1 and rmax included.
std::vector<int> worker_grid(int rmax, int k) {
  std::vector<int> out;
  if (rmax <= k) {
    for (int r = 1; r <= rmax; ++r) out.push_back(r);
    return out;
  }
  for (int i = 0; i < k; ++i) {
    int r = static_cast<int>(std::lround(std::exp(std::log(double(rmax)) * i / (k - 1))));
    if (out.empty() || r > out.back()) out.push_back(r);
  }
  return out;
}

json number_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json time_part(const SampleSet& s, const models::TimeModel& m, const models::TimeModel* band, const CurvesQuery& q) {
  json points = json::array();
  std::set<double> batches;
  int rmax = 1;
  for (const auto& x : s.samples) {
    points.push_back({{"batch", x.batch}, {"workers", x.workers}, {"nodes", x.nodes}, {"epochs", x.epochs},
                      {"epoch_time_s", x.epoch_time_s}});
    batches.insert(x.batch);
    rmax = std::max(rmax, x.workers);
  }
  const auto grid = worker_grid(rmax, q.max_points);
  json curves = json::array();
  for (double b : even_subset(std::vector<double>(batches.begin(), batches.end()), q.curves)) {
    json workers = json::array(), t = json::array(), lo = json::array(), hi = json::array();
    for (int r : grid) {
      check_cancelled();
      const int nodes = s.packed_nodes(r);
      workers.push_back(r);
      t.push_back(number_or_null(m.predict(b, r, nodes)));
      auto iv = band ? band->predict_interval(b, r, nodes, q.confidence) : std::nullopt;
      lo.push_back(iv ? number_or_null(iv->lo) : json(nullptr));
      hi.push_back(iv ? number_or_null(iv->hi) : json(nullptr));
    }
    curves.push_back({{"batch", b}, {"workers", workers}, {"epoch_time_s", t}, {"lo", lo}, {"hi", hi}});
  }
  return {{"model", m.name()}, {"points", points}, {"curves", curves}};
}

json metric_part(const SampleSet& s, const models::MetricModel& m, const models::MetricModel* band,
                 const CurvesQuery& q) {
  json points = json::array();
  std::set<std::pair<double, std::pair<double, int>>> configs;  // by global batch
  for (const auto& x : s.with_metric()) {
    points.push_back({{"batch", x.batch}, {"workers", x.workers}, {"epochs", x.epochs}, {"metric", *x.metric}});
    configs.insert({x.global_batch(), {x.batch, x.workers}});
  }
  json curve_points = json::array();
  for (const auto& x : s.curve)
    if (x.metric)
      curve_points.push_back({{"batch", x.batch}, {"workers", x.workers}, {"epochs", x.epochs}, {"metric", *x.metric}});
  std::vector<std::pair<double, int>> ordered;
  for (const auto& c : configs) ordered.push_back(c.second);
  const std::vector<double> grid = scoring::metric_curve_epochs(s, q.steps);
  json curves = json::array();
  for (const auto& [b, r] : even_subset(ordered, q.curves)) {
    json epochs = json::array(), y = json::array(), lo = json::array(), hi = json::array();
    for (double e : grid) {
      check_cancelled();
      epochs.push_back(e);
      y.push_back(number_or_null(m.predict(b, r, e)));
      auto iv = band ? band->predict_interval(b, r, e, q.confidence) : std::nullopt;
      lo.push_back(iv ? number_or_null(iv->lo) : json(nullptr));
      hi.push_back(iv ? number_or_null(iv->hi) : json(nullptr));
    }
    curves.push_back({{"batch", b}, {"workers", r}, {"global_batch", b * r}, {"epochs", epochs}, {"metric", y},
                      {"lo", lo}, {"hi", hi}});
  }
  return {{"model", m.name()}, {"points", points}, {"curve_points", curve_points}, {"curves", curves}};
}

}  // namespace

void check_curves_query(const CurvesQuery& q) {
  if (!(q.confidence > 0 && q.confidence < 1)) throw InputError("", 0, "--confidence", "must be in (0, 1)");
  if (q.curves < 1 || q.curves > 32) throw InputError("", 0, "--curves", "must be in 1..32");
  if (q.steps < 2 || q.steps > 1000) throw InputError("", 0, "--steps", "must be in 2..1000");
  if (q.max_points < 2 || q.max_points > 1000) throw InputError("", 0, "--max-points", "must be in 2..1000");
  if (q.folds < 2) throw InputError("", 0, "--folds", "must be >= 2");
  for (const auto& name : q.evaluate) models::ModelRegistry::instance().get(name);  // unknown: InputError
}

json curves(ModelSource& src, const CurvesQuery& q, const std::string& label) {
  check_curves_query(q);
  const SampleSet& s = src.samples();
  if (s.empty()) throw InputError("", 0, "", "no samples");
  const std::string tname = q.time_model.empty() ? q.model : q.time_model;
  const std::string mname = q.metric_model.empty() ? q.model : q.metric_model;
  const scoring::ModelChoice choice = src.choose(tname, s.has_metric() ? mname : tname);
  auto perf = src.performance(choice.time_model, choice.metric_model);
  json notes = json::array();
  // The band is the conformal interval /predict reports; without it the curves stand alone.
  uncertainty::ConformalParams cp;
  cp.folds = q.folds;
  cp.seed = q.seed;
  std::shared_ptr<models::TimeModel> time_band;
  try {
    time_band = src.conformal_time(choice.time_model, cp);
  } catch (const std::exception& e) {
    notes.push_back(fmt::format("no band on the epoch time: {}", e.what()));
  }
  json j = {{"samples", label},
            {"n_samples", s.size()},
            {"direction", to_string(s.direction)},
            {"time_model", choice.time_model},
            {"metric_model", s.has_metric() ? json(choice.metric_model) : json(nullptr)},
            {"choice", choice.reason},
            {"confidence", q.confidence}};
  j["time"] = time_part(s, *perf->time_model(), time_band.get(), q);
  j["metric"] = nullptr;
  if (s.has_metric() && perf->metric_model()) {
    std::shared_ptr<models::MetricModel> metric_band;
    try {
      metric_band = src.conformal_metric(choice.metric_model, cp);
    } catch (const std::exception& e) {
      notes.push_back(fmt::format("no band on the metric: {}", e.what()));
    }
    j["metric"] = metric_part(s, *perf->metric_model(), metric_band.get(), q);
  }
  j["evaluation"] = nullptr;
  if (!q.evaluate.empty()) {
    scoring::EvalOptions opts;
    opts.cv_folds = q.folds;
    opts.seed = q.seed;
    scoring::EvalData data;
    data.name = label;
    data.samples = s;
    data.model_params = src.params();
    scoring::DatasetScores ds{label, label, {}};
    auto& reg = models::ModelRegistry::instance();
    for (const auto& name : q.evaluate) ds.models.push_back(scoring::evaluate_model(reg.get(name), data, opts));
    j["evaluation"] = scoring::to_json(std::vector<scoring::DatasetScores>{ds}, opts);
  }
  j["notes"] = notes;
  return j;
}

}  // namespace trainplan::app
