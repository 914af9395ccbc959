#include "app/predict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "app/search_space.h"
#include "core/cancel.h"
#include "core/error.h"
#include "core/nodes.h"
#include "core/sampled_range.h"
#include "models/pooled_samples.h"
#include "models/time_config_key.h"
#include "numerics/normal_quantile.h"
#include "uncertainty/conformal.h"
#include "uncertainty/pessimistic_model.h"

namespace trainplan::app {

namespace {

void note(const std::function<void(const std::string&)>& f, const std::string& s) {
  if (f) f(s);
}

nlohmann::json interval_json(const std::optional<models::Interval>& iv, int folds,
                             const std::optional<uncertainty::IntervalBasis>& basis) {
  if (!iv) return nullptr;
  nlohmann::json j = {{"lo", iv->lo}, {"hi", iv->hi}, {"coverage", iv->coverage},
                      {"method", fmt::format("{}-fold conformal, relative residuals", folds)}};
  if (basis)
    j["basis"] = {{"residuals", basis->residuals},
                  {"from", basis->in_sample ? "in-sample" : "out-of-fold"},
                  {"coverage_promised", basis->coverage_promised()}};
  return j;
}

nlohmann::json bound_json(const std::optional<double>& b, const char* side, double coverage) {
  if (!b) return nullptr;
  return {{"side", side}, {"value", *b}, {"coverage", coverage}};
}

}  // namespace

void check_predict_query(const PredictQuery& q) {
  // Bounds far past any training run, so that times and epochs stay finite.
  constexpr double kMostBatch = 1e9;
  if (!(q.batch >= 1 && q.batch <= kMostBatch) || q.batch != std::floor(q.batch))
    throw InputError("", 0, "--batch",
                     fmt::format("must be a whole number from 1 to {:g} (examples per worker), got {:g}", kMostBatch,
                                 q.batch));
  if (q.workers < 1) throw InputError("", 0, "--workers", "must be >= 1");
  if (!(q.epochs < 0) && !(q.epochs > 0 && q.epochs <= kMostEpochs))  // NaN too
    throw InputError("", 0, "--epochs", fmt::format("must be > 0 and at most {}", kMostEpochs));
  if (q.nodes == 0 || q.nodes > q.workers)
    throw InputError("", 0, "--nodes", fmt::format("must be from 1 to --workers ({}): each node runs a worker at least", q.workers));
  if (!(q.confidence > 0 && q.confidence < 1)) throw InputError("", 0, "--confidence", "must be strictly between 0 and 1");
  if (q.folds < 2) throw InputError("", 0, "--folds", "must be >= 2");
  if (q.target && !std::isfinite(*q.target)) throw InputError("", 0, "--target", "must be a finite number");
  // The target's scan walks every epoch: past this no training runs.
  if (q.max_epochs < 1 || q.max_epochs > kMostEpochs)
    throw InputError("", 0, "--max-epochs", fmt::format("must be from 1 to {}", kMostEpochs));
  if (q.gpus_per_node < 0) throw InputError("", 0, "--gpus-per-node", "must be >= 1 (0: from the samples)");
}

NodePacking node_packing(const SampleSet& s, int workers, int gpus_per_node, const structure::HardwareSpec* hardware) {
  NodePacking p;
  auto pack = [&](int per_node) { return nodes_for(workers, per_node); };
  if (gpus_per_node > 0) {
    p.gpus_per_node = gpus_per_node;
    p.from = fmt::format("packed at {} a node (--gpus-per-node)", gpus_per_node);
  } else if (hardware && hardware->gpus_per_node > 0) {
    p.gpus_per_node = hardware->gpus_per_node;
    p.from = fmt::format("packed at {} a node, the node of {} (--hardware)", p.gpus_per_node, hardware->source);
  } else {
    int most_on_one = 0;
    bool multi_node = false;
    p.gpus_per_node = gpus_per_node_seen(s);
    for (const auto& x : s.samples)
      if (x.nodes > 0) {
        multi_node = multi_node || x.nodes > 1;
        if (x.nodes == 1) most_on_one = std::max(most_on_one, x.workers);
      }
    if (p.gpus_per_node == 0) {
      p.from = "unknown: the samples record no nodes (give --gpus-per-node)";
      return p;
    }
    p.assumed = !multi_node && workers > most_on_one;
    p.from = p.assumed ? fmt::format("assumed: every sample ran on one node with at most {} worker{}, so a node is "
                                     "taken to hold {}; give --gpus-per-node if yours holds more",
                                     most_on_one, most_on_one == 1 ? "" : "s", p.gpus_per_node)
                       : fmt::format("packed at {} a node, the most any sample ran on one node", p.gpus_per_node);
  }
  p.nodes = pack(p.gpus_per_node);
  return p;
}

bool Prediction::past_last_sampled_epoch() const {
  return last_sampled_epoch && query.epochs > *last_sampled_epoch;
}

bool Prediction::past_every_sampled_epoch() const {
  return last_sampled_epoch_any && query.epochs > *last_sampled_epoch_any;
}

Prediction predict(ModelSource& src, const PredictQuery& q, const Progress& progress) {
  check_predict_query(q);
  const SampleSet& s = src.samples();
  Prediction r;
  r.query = q;
  r.direction = s.direction;
  r.times_predicted_from = s.times_predicted_from;
  const bool want_metric = q.epochs >= 0 || q.target.has_value();
  if (want_metric && !s.has_metric())
    throw InputError(s.source, 0, "metric",
                     fmt::format("{} asks for the metric, but the samples carry no metric",
                                 q.epochs >= 0 ? "--epochs" : "--target"));
  r.time_model = q.time_model.empty() ? q.model : q.time_model;
  r.metric_model = q.metric_model.empty() ? q.model : q.metric_model;
  if (r.time_model == "auto" || (want_metric && r.metric_model == "auto")) {
    note(progress.choosing, "choosing models by 5-fold cross-validation...");
    const auto& c = src.choose(r.time_model, want_metric ? r.metric_model : "auto");
    r.time_model = c.time_model;
    if (want_metric) r.metric_model = c.metric_model;
    r.reason = c.reason;
  }
  if (q.nodes >= 0) {
    r.nodes = q.nodes;
    r.nodes_from = "given (--nodes)";
  } else {
    const NodePacking np = node_packing(s, q.workers, q.gpus_per_node, src.params().hardware.get());
    r.nodes = np.nodes;
    r.nodes_from = np.from;
    r.nodes_assumed = np.assumed;
  }
  r.most_workers_sampled = most_workers_sampled(s);
  r.most_nodes_sampled = most_nodes_sampled(s);
  if (const auto range = batch_range_sampled(s)) std::tie(r.smallest_batch_sampled, r.largest_batch_sampled) = *range;
  r.dataset_size = s.dataset_size;
  uncertainty::ConformalParams cp{q.folds, q.seed};
  r.time_folds = uncertainty::config_fold_count(s, q.folds);
  if (want_metric) {
    SampleSet with;
    with.samples = s.with_metric();
    r.metric_folds = uncertainty::config_fold_count(with, q.folds);
  }

  note(progress.fitting, fmt::format("fitting {} and {} held-out copies...", r.time_model, r.time_folds));
  auto tm = src.conformal_time(r.time_model, cp);
  r.epoch_time_s = tm->predict(q.batch, q.workers, r.nodes);
  r.time_interval = tm->predict_interval(q.batch, q.workers, r.nodes, q.confidence);
  r.time_bound = tm->predict_bound(q.batch, q.workers, r.nodes, q.confidence, models::BoundSide::kUpper);
  // Times predicted on another GPU share the transfer's error, which the
  // intervals fitted on them cannot see (uncertainty/pessimistic_model.h).
  if (const double sd = s.times_predicted_log_sd.value_or(0); sd > 0) {
    const double two = numerics::normal_quantile((1 + q.confidence) / 2), one = numerics::normal_quantile(q.confidence);
    using uncertainty::IntervalEnd, uncertainty::widen_by_shared_error;
    if (r.time_interval) {
      r.time_interval->lo = widen_by_shared_error(r.epoch_time_s, r.time_interval->lo, IntervalEnd::kLower, two, sd);
      r.time_interval->hi = widen_by_shared_error(r.epoch_time_s, r.time_interval->hi, IntervalEnd::kUpper, two, sd);
    }
    if (r.time_bound) r.time_bound = widen_by_shared_error(r.epoch_time_s, *r.time_bound, IntervalEnd::kUpper, one, sd);
    r.times_predicted_log_sd = sd;
  }
  if (const auto* ct = dynamic_cast<const uncertainty::ConformalTimeModel*>(tm.get()))
    r.time_basis = ct->interval_basis(q.batch, q.workers, r.nodes, q.confidence);
  auto inside = [](const std::optional<models::Interval>& iv, double v) -> std::optional<bool> {
    if (!iv) return std::nullopt;
    return iv->lo <= v && v <= iv->hi;
  };
  Sample asked;
  asked.batch = q.batch, asked.workers = q.workers, asked.nodes = r.nodes;
  // Only this configuration's rows, pooled as the time models pool them.
  SampleSet here;
  for (const auto& x : s.samples)
    if (models::time_config_key(x) == models::time_config_key(asked)) here.samples.push_back(x);
  for (const auto& x : models::distinct_time_configs(here).samples) {
    r.measured.epoch_time_s = x.epoch_time_s;
    if (x.time_spread && *x.time_spread > 0) r.measured.time_spread = x.time_spread;
    r.measured.time_inside = inside(r.time_interval, x.epoch_time_s);
  }
  if (want_metric) {
    note(progress.fitting, fmt::format("fitting {} and {} held-out copies...", r.metric_model, r.metric_folds));
    auto mm = src.conformal_metric(r.metric_model, cp);
    r.best_sampled_metric = s.best_metric();
    if (q.epochs >= 0) {
      std::optional<double> last_of_run;
      for (const auto& x : s.with_metric())
        if (x.batch == q.batch && x.workers == q.workers) last_of_run = std::max(last_of_run.value_or(x.epochs), x.epochs);
      const std::optional<double> last_of_any = s.last_metric_epoch();
      r.last_sampled_run = last_of_run.has_value();
      r.last_sampled_epoch = last_of_run ? last_of_run : last_of_any;
      r.last_sampled_epoch_any = last_of_any;
      if (const auto* cm = dynamic_cast<const uncertainty::ConformalMetricModel*>(mm.get())) {
        r.forward_check = cm->beyond_rule().forward_check();
        if (last_of_any) r.trusted_through_epochs = cm->beyond_rule().trusted_through();
      }
      r.metric = mm->predict(q.batch, q.workers, q.epochs);
      r.metric_interval = mm->predict_interval(q.batch, q.workers, q.epochs, q.confidence);
      if (const auto* cm = dynamic_cast<const uncertainty::ConformalMetricModel*>(mm.get()))
        r.metric_basis = cm->interval_basis(q.batch, q.workers, q.epochs, q.confidence);
      r.metric_bound = mm->predict_bound(q.batch, q.workers, q.epochs, q.confidence,
                                         r.direction == MetricDirection::kMax ? models::BoundSide::kLower
                                                                              : models::BoundSide::kUpper);
      double sum = 0;
      for (const auto* rows : {&s.samples, &s.curve})  // trials, and points read off longer trials' curves
        for (const auto& x : *rows)
          if (x.metric && x.batch == q.batch && x.workers == q.workers && x.epochs == q.epochs)
            sum += *x.metric, ++r.measured.metric_rows;
      if (r.measured.metric_rows > 0) {
        r.measured.metric = sum / r.measured.metric_rows;
        r.measured.metric_inside = inside(r.metric_interval, *r.measured.metric);
      }
    }
    if (q.target) {
      // A linear scan: the interval's ends need not be monotone in epochs
      // (their width follows the model's slope), and the first epoch that
      // meets the target is what is asked.
      const bool up = r.direction == MetricDirection::kMax;
      auto meets = [&](double v) { return trainplan::meets(v, *q.target, r.direction); };
      // Held to the runs measured at this configuration (curve points included), as `plan` holds its
      // choices (uncertainty/measured_bounds.h): a run that met the target by e epochs makes e enough
      // whatever a model says; one that missed it at e or more epochs rules e out (where the two
      // disagree, the met one wins).
      const auto runs = s.metric_runs(/*with_curve=*/true);
      const auto here_runs = runs.find({q.batch, q.workers});
      auto held = [&](int e, bool model_meets) {
        if (here_runs == runs.end()) return model_meets;
        bool met = false, missed = false;
        for (const auto& [te, m] : here_runs->second) met |= te <= e && meets(m), missed |= te >= e && !meets(m);
        return met || (!missed && model_meets);
      };
      Prediction::ToTarget t;
      if (here_runs != runs.end()) t.held_to_runs = int(here_runs->second.size());
      for (int e = 1; e <= q.max_epochs && !(t.epochs && t.epochs_lo && t.epochs_hi); ++e) {
        if ((e & 1023) == 0) check_cancelled();  // a server request past its time limit stops here
        if (!t.epochs && held(e, meets(mm->predict(q.batch, q.workers, e)))) t.epochs = e;
        const auto iv = mm->predict_interval(q.batch, q.workers, e, q.confidence);
        // The favourable end meets the target first (fewest epochs), the unfavourable one last.
        if (!t.epochs_lo && held(e, iv && meets(up ? iv->hi : iv->lo))) t.epochs_lo = e;
        if (!t.epochs_hi && held(e, iv && meets(up ? iv->lo : iv->hi))) t.epochs_hi = e;
      }
      // Times from the epochs, at the point and at each end of the epoch-time interval.
      const double t_lo = r.time_interval ? r.time_interval->lo : r.epoch_time_s;
      const double t_hi = r.time_interval ? r.time_interval->hi : r.epoch_time_s;
      auto times = [](const std::optional<int>& e, double per_epoch) {
        return e ? std::optional<double>(*e * per_epoch) : std::nullopt;
      };
      t.time_s = times(t.epochs, r.epoch_time_s);
      t.time_lo_s = times(t.epochs_lo, t_lo);
      t.time_hi_s = times(t.epochs_hi, t_hi);
      r.to_target = t;
    }
  }
  return r;
}

nlohmann::json to_json(const Prediction& p) {
  const auto& q = p.query;
  nlohmann::json j;
  j["config"] = {{"batch", q.batch}, {"workers", q.workers}, {"nodes", p.nodes}, {"nodes_from", p.nodes_from},
                 {"nodes_assumed", p.nodes_assumed}};
  if (q.epochs >= 0) j["config"]["epochs"] = q.epochs;
  j["epoch_time_s"] = {{"model", p.time_model}, {"value", p.epoch_time_s}, {"interval", interval_json(p.time_interval, p.time_folds, p.time_basis)},
                       {"one_sided_bound", bound_json(p.time_bound, "upper", q.confidence)}};
  if (p.times_predicted_log_sd)
    j["epoch_time_s"]["transfer_log_sd"] = {
        {"value", *p.times_predicted_log_sd},
        {"note", "the samples' times were predicted on another GPU; the interval and bound include that error, "
                 "shared by every configuration, in quadrature"}};
  if (p.to_target) {
    const auto& t = *p.to_target;
    auto or_null = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    j["to_target"] = {{"target", *q.target},
                      {"direction", to_string(p.direction)},
                      {"model", p.metric_model},
                      {"max_epochs", q.max_epochs},
                      {"coverage", q.confidence},
                      {"epochs", {{"value", or_null(t.epochs)}, {"lo", or_null(t.epochs_lo)}, {"hi", or_null(t.epochs_hi)}}},
                      {"total_time_s",
                       {{"value", or_null(t.time_s)}, {"lo", or_null(t.time_lo_s)}, {"hi", or_null(t.time_hi_s)}}},
                      {"held_to_runs", t.held_to_runs}};
  }
  if (q.epochs >= 0) {
    j["metric"] = {{"model", p.metric_model}, {"value", p.metric}, {"direction", to_string(p.direction)},
                   {"interval", interval_json(p.metric_interval, p.metric_folds, p.metric_basis)},
                   {"one_sided_bound", bound_json(p.metric_bound, p.direction == MetricDirection::kMax ? "lower" : "upper",
                                                  q.confidence)}};
    if (p.last_sampled_epoch) {
      j["metric"]["last_sampled_epoch"] = {{"epochs", *p.last_sampled_epoch},
                                           {"of", p.last_sampled_run ? "this configuration" : "any configuration"},
                                           {"past_it", p.past_last_sampled_epoch()}};
      if (p.last_sampled_epoch_any)
        j["metric"]["last_sampled_epoch"]["of_any_configuration"] = {{"epochs", *p.last_sampled_epoch_any},
                                                                     {"past_it", p.past_every_sampled_epoch()}};
    }
    if (p.trusted_through_epochs) {
      nlohmann::json x = {{"trusted_through_epochs", *p.trusted_through_epochs},
                          {"past_it", p.past_trusted_epochs()},
                          {"forward_check", nullptr}};
      if (const auto& c = p.forward_check)
        x["forward_check"] = {{"fitted_through_epochs", c->cut}, {"scored_through_epochs", c->last},
                              {"samples", c->samples}, {"max_abs_rel_error", c->max_abs_residual},
                              {"median_abs_rel_error", c->median_abs_residual}};
      j["metric"]["extrapolation"] = std::move(x);
    }
    j["total_time_s"] = p.epoch_time_s * q.epochs;
    // The epoch time's interval times the epochs, as the text gives it.
    j["total_time_interval_s"] =
        p.time_interval ? nlohmann::json{{"lo", p.time_interval->lo * q.epochs}, {"hi", p.time_interval->hi * q.epochs},
                                          {"coverage", p.time_interval->coverage}}
                        : nlohmann::json(nullptr);
  } else {
    j["metric"] = nullptr;
  }
  if (p.best_sampled_metric) j["best_sampled_metric"] = *p.best_sampled_metric;
  {
    auto or_null = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    const auto& m = p.measured;
    j["measured"] = {{"epoch_time_s", or_null(m.epoch_time_s)},
                     {"time_spread", or_null(m.time_spread)},
                     {"time_inside_interval", or_null(m.time_inside)},
                     {"metric", or_null(m.metric)},
                     {"metric_rows", m.metric_rows},
                     {"metric_inside_interval", or_null(m.metric_inside)}};
  }
  if (!p.reason.empty()) j["choice"] = p.reason;
  j["sampled"] = {{"most_workers", p.most_workers_sampled},
                  {"most_nodes", p.most_nodes_sampled},
                  {"smallest_batch", p.smallest_batch_sampled},
                  {"largest_batch", p.largest_batch_sampled}};
  j["past_most_workers"] = p.past_most_workers();
  j["past_most_nodes"] = p.past_most_nodes();
  j["batch_outside_sampled"] = p.batch_outside_sampled();
  j["dataset_size"] = p.dataset_size ? nlohmann::json(*p.dataset_size) : nlohmann::json();
  j["batch_past_dataset"] = p.batch_past_dataset();
  if (!p.times_predicted_from.empty()) j["times_predicted_from"] = p.times_predicted_from;
  return j;
}

// ---- plan ------------------------------------------------------------------

}  // namespace trainplan::app
