#include "app/queries.h"
#include "app/planning_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "app/planning_model.h"
#include "plan/frontier.h"
#include "plan/launch_spec.h"
#include "plan/objective.h"
#include "plan/planner.h"

namespace trainplan::app {

namespace {

constexpr size_t kEvidenceTrials = 3;  // trials listed beside a plan

std::string conformal_key(const std::string& name, const uncertainty::ConformalParams& p) {
  return fmt::format("{}|{}|{}", name, p.folds, p.seed);
}

void note(const std::function<void(const std::string&)>& f, const std::string& s) {
  if (f) f(s);
}

nlohmann::json interval_json(const std::optional<models::Interval>& iv, int folds) {
  if (!iv) return nullptr;
  return {{"lo", iv->lo}, {"hi", iv->hi}, {"coverage", iv->coverage},
          {"method", fmt::format("{}-fold conformal, relative residuals", folds)}};
}

nlohmann::json bound_json(const std::optional<double>& b, const char* side, double coverage) {
  if (!b) return nullptr;
  return {{"side", side}, {"value", *b}, {"coverage", coverage}};
}

std::vector<int> sample_batches(const SampleSet& s) {
  std::set<int> b;
  for (const auto& x : s.samples) b.insert(static_cast<int>(std::lround(x.batch)));
  return {b.begin(), b.end()};
}

}  // namespace

const scoring::ModelChoice& ModelSource::choose(const std::string& time_name, const std::string& metric_name) {
  std::string key = time_name + "|" + metric_name;
  auto it = choices_.find(key);
  if (it == choices_.end()) it = choices_.emplace(key, scoring::choose_models(time_name, metric_name, samples_, 5, 1, params_)).first;
  return it->second;
}

std::shared_ptr<models::TimeModel> ModelSource::conformal_time(const std::string& name, uncertainty::ConformalParams p) {
  auto& m = times_[conformal_key(name, p)];
  if (!m) {
    std::shared_ptr<models::TimeModel> fresh = uncertainty::conformal_time_model(name, p, params_);
    fresh->fit(samples_);
    m = fresh;  // only once the fit succeeded
  }
  return m;
}

std::shared_ptr<models::MetricModel> ModelSource::conformal_metric(const std::string& name, uncertainty::ConformalParams p) {
  auto& m = metrics_[conformal_key(name, p)];
  if (!m) {
    std::shared_ptr<models::MetricModel> fresh = uncertainty::conformal_metric_model(name, p, params_);
    fresh->fit(samples_);
    m = fresh;
  }
  return m;
}

std::shared_ptr<const models::FittedPerformanceModel> ModelSource::performance(const std::string& time_name,
                                                                               const std::string& metric_name) {
  auto& m = performance_[time_name + "|" + metric_name];
  if (!m) m = models::fit_performance_model(time_name, metric_name, samples_, params_);
  return m;
}

// ---- predict ---------------------------------------------------------------

void check_predict_query(const PredictQuery& q) {
  if (!(q.batch > 0)) throw InputError("--batch must be > 0 (per-worker batch size)");
  if (q.workers < 1) throw InputError("--workers must be >= 1");
  if (!(q.confidence > 0 && q.confidence < 1)) throw InputError("--confidence must be strictly between 0 and 1");
  if (q.folds < 2) throw InputError("--folds must be >= 2");
  if (q.target && !std::isfinite(*q.target)) throw InputError("--target must be a finite number");
  if (q.max_epochs < 1) throw InputError("--max-epochs must be >= 1");
}

int derive_nodes(const SampleSet& s, int workers) { return s.packed_nodes(workers); }

bool Prediction::past_last_sampled_epoch() const {
  return last_sampled_epoch && query.epochs > *last_sampled_epoch;
}

const Config& PlanOutcome::run_config() const {
  return early_stop ? early_stop->best.expected.config : result.best.config;
}

bool PlanOutcome::past_longest_trial() const {
  return longest_trial_epochs > 0 && run_config().epochs > longest_trial_epochs;
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
  r.nodes = q.nodes >= 0 ? q.nodes : derive_nodes(s, q.workers);
  uncertainty::ConformalParams cp{q.folds, q.seed};

  note(progress.fitting, fmt::format("fitting {} and {} held-out copies...", r.time_model, q.folds));
  auto tm = src.conformal_time(r.time_model, cp);
  r.epoch_time_s = tm->predict(q.batch, q.workers, r.nodes);
  r.time_interval = tm->predict_interval(q.batch, q.workers, r.nodes, q.confidence);
  r.time_bound = tm->predict_bound(q.batch, q.workers, r.nodes, q.confidence, models::BoundSide::kUpper);
  if (want_metric) {
    note(progress.fitting, fmt::format("fitting {} and {} held-out copies...", r.metric_model, q.folds));
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
      r.metric = mm->predict(q.batch, q.workers, q.epochs);
      r.metric_interval = mm->predict_interval(q.batch, q.workers, q.epochs, q.confidence);
      r.metric_bound = mm->predict_bound(q.batch, q.workers, q.epochs, q.confidence,
                                         r.direction == MetricDirection::kMax ? models::BoundSide::kLower
                                                                              : models::BoundSide::kUpper);
    }
    if (q.target) {
      // A linear scan: the interval's ends need not be monotone in epochs
      // (their width follows the model's slope), and the first epoch that
      // meets the target is what is asked.
      const bool up = r.direction == MetricDirection::kMax;
      auto meets = [&](double v) { return trainplan::meets(v, *q.target, r.direction); };
      Prediction::ToTarget t;
      for (int e = 1; e <= q.max_epochs && !(t.epochs && t.epochs_lo && t.epochs_hi); ++e) {
        if (!t.epochs && meets(mm->predict(q.batch, q.workers, e))) t.epochs = e;
        if (auto iv = mm->predict_interval(q.batch, q.workers, e, q.confidence)) {
          // The favourable end meets the target first (fewest epochs), the unfavourable one last.
          if (!t.epochs_lo && meets(up ? iv->hi : iv->lo)) t.epochs_lo = e;
          if (!t.epochs_hi && meets(up ? iv->lo : iv->hi)) t.epochs_hi = e;
        }
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
  j["config"] = {{"batch", q.batch}, {"workers", q.workers}, {"nodes", p.nodes}};
  if (q.epochs >= 0) j["config"]["epochs"] = q.epochs;
  j["epoch_time_s"] = {{"model", p.time_model}, {"value", p.epoch_time_s}, {"interval", interval_json(p.time_interval, q.folds)},
                       {"one_sided_bound", bound_json(p.time_bound, "upper", q.confidence)}};
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
                       {{"value", or_null(t.time_s)}, {"lo", or_null(t.time_lo_s)}, {"hi", or_null(t.time_hi_s)}}}};
  }
  if (q.epochs >= 0) {
    j["metric"] = {{"model", p.metric_model}, {"value", p.metric}, {"direction", to_string(p.direction)},
                   {"interval", interval_json(p.metric_interval, q.folds)},
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
    j["total_time_s"] = p.epoch_time_s * q.epochs;
  } else {
    j["metric"] = nullptr;
  }
  if (p.best_sampled_metric) j["best_sampled_metric"] = *p.best_sampled_metric;
  if (!p.reason.empty()) j["choice"] = p.reason;
  return j;
}

// ---- plan ------------------------------------------------------------------

PlanOutcome make_plan(ModelSource& src, const PlanQuery& q, const Progress& progress) {
  const SampleSet& samples = src.samples();
  if (!samples.has_metric())
    throw InputError(samples.source, 0, "metric",
                     "planning needs a metric, but these samples are time-only (the metric column is empty); "
                     "profile with a validation metric so the planner can tell how many epochs reach the target");
  if (q.max_workers < 0) throw InputError("--max-workers must be >= 1 (or 0: the largest worker count in the samples)");
  if (!(q.deadline > 0)) throw InputError("--deadline must be > 0 seconds");
  if (q.confidence != 0 && !(q.confidence > 0 && q.confidence < 1))
    throw InputError("--confidence must be strictly between 0 and 1");
  const uncertainty::ConfidenceBounds bounds = uncertainty::parse_confidence_bounds(q.bounds);  // validates before any fit
  const plan::EarlyStopBudget budget_rule = plan::parse_early_stop_budget(q.early_stop_budget);
  if (q.early_stop && q.method != "coconfig")
    throw InputError("--early-stop plans with --method coconfig only (the baselines choose fixed epochs)");
  if (q.early_stop && q.frontier)
    throw InputError("--frontier lists fixed-epoch runs; it does not combine with --early-stop");

  PlanOutcome o;
  o.query = q;
  // By default the space reaches the largest worker count profiled: beyond
  // it every prediction is an extrapolation in workers.
  if (o.query.max_workers == 0)
    for (const auto& s : samples.samples) o.query.max_workers = std::max(o.query.max_workers, s.workers);
  o.direction = samples.direction;
  plan::PlanProblem& p = o.problem;
  p.target = q.target;
  p.deadline_s = q.deadline;
  p.space.max_workers = o.query.max_workers;
  p.space.max_epochs = q.max_epochs;
  std::vector<int> bs = q.batches.empty() ? sample_batches(samples) : q.batches;
  std::sort(bs.begin(), bs.end());
  bs.erase(std::unique(bs.begin(), bs.end()), bs.end());
  p.space.batches = bs;
  o.batches = bs;
  bool has_nodes =
      std::any_of(samples.samples.begin(), samples.samples.end(), [](const Sample& s) { return s.nodes > 0; });
  p.space.workers_per_node = q.gpus_per_node >= 0 ? q.gpus_per_node : (has_nodes ? 4 : 0);
  plan::validate(p);

  std::string tname = q.time_model.empty() ? q.model : q.time_model;
  std::string mname = q.metric_model.empty() ? q.model : q.metric_model;
  if (tname == "auto" || mname == "auto") note(progress.choosing, "choosing models by 5-fold cross-validation...");
  o.choice = src.choose(tname, mname);
  std::shared_ptr<const models::FittedPerformanceModel> fitted;
  if (q.conformal || q.confidence > 0) {
    // Both parts wrapped in K-fold conformal intervals (uncertainty/conformal.h);
    // a confidence needs intervals, and the registered models give none of their own.
    std::shared_ptr<const models::TimeModel> tm = src.conformal_time(o.choice.time_model, {});
    std::shared_ptr<const models::MetricModel> mm = src.conformal_metric(o.choice.metric_model, {});
    fitted = std::make_shared<models::FittedPerformanceModel>(tm, mm, samples.direction);
  } else {
    fitted = src.performance(o.choice.time_model, o.choice.metric_model);
  }
  std::shared_ptr<const models::PerformanceModel> model =
      app::planned_side(fitted, samples,
                         {.confidence = q.confidence, .probe_batch = bs.front(), .bounds = bounds});
  o.model_name = model->name();
  o.model = model;
  o.point_model = fitted;

  plan::PlannerOptions opts;
  opts.search = q.search;
  opts.seed = q.seed;
  opts.alternatives = q.alternatives;
  opts.manual_tries = q.manual_tries;
  opts.tabu.iterations = q.tabu_iterations;
  opts.tabu.tenure = q.tabu_tenure;
  auto planner = plan::make_planner(q.method, opts);
  if (q.frontier) o.frontier = plan::cost_time_frontier(*model, p);
  try {
    if (q.early_stop) {
      // Budget from the planned (pessimistic, with --confidence) model, expected cost from the point model.
      o.early_stop = plan::plan_early_stop(*fitted, *model, p, q.alternatives, budget_rule);
      o.result.method = "coconfig-early-stop";
      o.result.evaluations = o.early_stop->evaluations;
      o.result.best = o.early_stop->best.budget;
      for (const auto& c : o.early_stop->alternatives) o.result.alternatives.push_back(c.budget);
    } else {
      o.result = planner->plan(*model, p);
    }
  } catch (const InfeasibleError& e) {
    std::string msg = fmt::format("{}\n  model: {}", e.what(), model->name());
    if (q.frontier && !o.frontier.empty())
      msg += "\n  the cheapest run for each longer deadline:\n" + plan::frontier_table(o.frontier, q.deadline);
    throw InfeasibleError(msg);
  }
  {
    const auto& c = o.run_config();
    o.evidence = plan::nearest_trials(samples, double(c.batch) * c.workers, c.epochs, q.target, kEvidenceTrials);
    plan::add_model_metric(o.evidence, *fitted);
    o.longest_trial_epochs = samples.last_metric_epoch().value_or(0);
  }
  if (q.confidence > 0 && !q.early_stop) {
    // The planner's own epoch search for the chosen cell, on the point model.
    const auto& b = o.result.best;
    if (auto point = plan::evaluate_cell(*fitted, p, b.config.batch, b.config.workers);
        point && point->config.epochs < b.config.epochs) {
      const int extra = b.config.epochs - point->config.epochs;
      o.confidence_margin = PlanOutcome::ConfidenceMargin{point->config.epochs, extra, b.cost * extra / b.config.epochs};
    }
  }

  if (!q.emit.empty()) {
    plan::LaunchOptions lo;
    lo.train_cmd = q.train_cmd;
    lo.job_name = q.job_name;
    lo.gpus_per_node = p.space.workers_per_node;
    lo.time_limit_s = q.deadline;
    lo.image = q.image;
    if (q.early_stop) {
      lo.stop_at_target = q.target;
      lo.target_direction = to_string(o.direction);
    }
    o.launch = plan::launch_spec(q.emit, o.result.best.config, lo);
  }
  return o;
}

nlohmann::json to_json(const plan::Candidate& c) {
  return {{"batch", c.config.batch},       {"workers", c.config.workers},
          {"nodes", c.nodes},              {"epochs", c.config.epochs},
          {"epoch_time_s", c.epoch_time_s}, {"total_time_s", c.total_time_s},
          {"metric", c.metric},            {"cost_worker_s", c.cost},
          {"cost_worker_h", c.cost / 3600.0}};
}

nlohmann::json to_json(const PlanOutcome& o, const std::string& samples) {
  const auto& q = o.query;
  const auto& res = o.result;
  nlohmann::json j;
  j["method"] = res.method;
  j["samples"] = samples;
  j["model"] = {{"time", o.choice.time_model}, {"metric", o.choice.metric_model}, {"name", o.model_name},
                {"reason", o.choice.reason}};
  if (q.confidence > 0) j["confidence"] = q.confidence;
  j["target"] = q.target;
  j["direction"] = to_string(o.direction);
  j["deadline_s"] = q.deadline;
  j["space"] = {{"batches", o.batches}, {"max_workers", q.max_workers}, {"max_epochs", q.max_epochs},
                {"gpus_per_node", o.problem.space.workers_per_node}};
  j["choice"] = to_json(res.best);
  j["alternatives"] = nlohmann::json::array();
  for (const auto& c : res.alternatives) j["alternatives"].push_back(to_json(c));
  if (o.early_stop) {
    // "choice" is the budget (epochs to allow, on the planned side); "expected" what the point model expects.
    auto expected = [](const plan::EarlyStopCandidate& c) {
      return nlohmann::json{{"epochs", c.expected.config.epochs}, {"total_time_s", c.expected.total_time_s},
                            {"metric", c.expected.metric}, {"cost_worker_s", c.expected.cost},
                            {"cost_worker_h", c.expected.cost / 3600.0}};
    };
    j["early_stop"] = {{"budget_epochs", o.early_stop->best.budget.config.epochs},
                       {"budget_rule", q.early_stop_budget},
                       {"expected", expected(o.early_stop->best)}};
    for (size_t i = 0; i < o.early_stop->alternatives.size(); ++i)
      j["alternatives"][i]["expected"] = expected(o.early_stop->alternatives[i]);
  }
  j["nearest_trials"] = nlohmann::json::array();
  for (const auto& t : o.evidence)
    j["nearest_trials"].push_back({{"batch", t.sample.batch},
                                   {"workers", t.sample.workers},
                                   {"epochs", t.sample.epochs},
                                   {"metric", *t.sample.metric},
                                   {"model_metric", t.model_metric ? nlohmann::json(*t.model_metric) : nlohmann::json()},
                                   {"meets_target", t.meets_target},
                                   {"batch_octaves", t.batch_octaves},
                                   {"epoch_octaves", t.epoch_octaves}});
  j["longest_trial_epochs"] = o.longest_trial_epochs;
  j["past_longest_trial"] = o.past_longest_trial();
  if (const auto& m = o.confidence_margin)
    j["confidence_margin"] = {{"point_epochs_to_target", m->point_epochs},
                              {"margin_epochs", m->extra_epochs},
                              {"margin_cost_worker_s", m->cost_worker_s}};
  if (q.frontier) {
    j["frontier"] = nlohmann::json::array();
    for (const auto& c : o.frontier) j["frontier"].push_back(to_json(c));
  }
  j["evaluations"] = res.evaluations;
  if (!res.note.empty()) j["note"] = res.note;
  if (!o.launch.empty()) j["launch"] = {{"kind", q.emit}, {"spec", o.launch}};
  return j;
}

}  // namespace trainplan::app
