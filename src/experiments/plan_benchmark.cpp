#include "experiments/plan_benchmark.h"
#include "app/model_source.h"
#include "app/search_space.h"
#include "app/transfer_samples.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "core/error.h"
#include "core/median.h"
#include "io/pollux_trace.h"
#include "structure/network_zoo.h"
#include "scoring/evaluate.h"
#include "scoring/in_sample.h"
#include "scoring/mre.h"
#include "uncertainty/conformal.h"
#include "models/performance_model.h"
#include "models/registry.h"
#include "plan/early_stop.h"
#include "plan/exhaustive.h"
#include "experiments/scenario.h"
#include "scoring/model_choice.h"
#include "plan/planner.h"
#include "plan/tabu.h"
#include "replay/oracle_performance_model.h"
#include "replay/sampler.h"

namespace trainplan::experiments {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A --models entry: "oracle", "auto", "NAME" (both parts) or "TIME+METRIC".
struct Fitted {
  std::shared_ptr<const models::PerformanceModel> model;  // point predictions (MRE is measured on these)
  std::shared_ptr<const models::PerformanceModel> planned;  // what the methods plan on (pessimistic or = model)
  std::string time_name, metric_name;  // empty for the oracle
};

// Fits a --models entry as `plan` does (app::ModelSource::planning_model)
// under `po`: with po.conformal both chosen parts are wrapped in K-fold
// conformal intervals (the point predictions are unchanged), and with
// po.confidence > 0 the methods plan on the pessimistic side of those
// intervals. The oracle is the truth itself and has no intervals: it is
// planned on as is.
Fitted fit_spec(const std::string& spec, app::ModelSource& source,
                const std::shared_ptr<const models::PerformanceModel>& truth, const app::PlanningModelOptions& po) {
  if (spec == "oracle") return {truth, truth, "", ""};
  std::string t = spec, m = spec;
  if (auto plus = spec.find('+'); plus != std::string::npos) t = spec.substr(0, plus), m = spec.substr(plus + 1);
  const auto choice = source.choose(t, m);
  auto pm = source.planning_model(choice.time_model, choice.metric_model, po);
  return {pm.fitted, pm.planned, choice.time_model, choice.metric_model};
}

std::optional<double> in_sample_mre(const Fitted& f, const SampleSet& s, bool time) {
  auto fp = std::dynamic_pointer_cast<const models::FittedPerformanceModel>(f.model);
  if (!fp) return std::nullopt;
  try {
    return time ? scoring::in_sample_time(*fp->time_model(), s).mre : scoring::in_sample_metric(*fp->metric_model(), s).mre;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// 5-fold CV MRE of one part of a registered model, cached per (trace, part, name).
std::optional<double> cv_mre(const std::string& name, bool time, const SampleSet& s,
                             std::map<std::string, std::optional<double>>& cache, uint64_t seed) {
  if (name.empty()) return std::nullopt;
  std::string key = (time ? "t:" : "m:") + name;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  scoring::EvalOptions o;
  o.seed = seed;
  return cache[key] = scoring::part_cv_mre(name, time ? scoring::ModelPart::kTime : scoring::ModelPart::kMetric, s, o);
}

json cand_json(const plan::Candidate& c) {
  return {{"batch", c.config.batch}, {"workers", c.config.workers}, {"epochs", c.config.epochs},
          {"total_time_s", c.total_time_s}, {"metric", c.metric}, {"cost_worker_s", c.cost}};
}

json opt(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

std::string pct(double v) { return std::isnan(v) ? "—" : fmt::format("{:+.1f}%", 100 * v); }

// Judgements of one method, counted.
struct Count {
  std::vector<double> regrets;  // runnable plans
  int runs = 0, planned = 0, runnable = 0, target_ok = 0, deadline_ok = 0, ok = 0;
  void add(const experiments::Judgement& j) {
    ++runs;
    if (!j.planned) return;
    ++planned;
    if (!j.runnable) return;
    ++runnable;
    regrets.push_back(j.regret);
    target_ok += j.target_ok;
    deadline_ok += j.deadline_ok;
    ok += j.target_ok && j.deadline_ok;
  }
};
struct Tally {
  Count all;
  std::map<std::string, std::vector<double>> by_trace;  // regrets of the runnable plans
  std::map<int, Count> by_scenario;
};
struct Agreement {
  int runs = 0, agree = 0;
  std::vector<double> gaps;  // predicted cost gap when tabu and exhaustive disagree
};

}  // namespace

const std::vector<std::string>& plan_benchmark_methods() {
  static const std::vector<std::string> m = {"coconfig-tabu", "coconfig-exhaustive", "lb-bsp", "cynthia", "bo", "manual"};
  return m;
}

std::vector<std::string> plan_benchmark_default_models() {
  // One column per registered model: a model with both parts as it is; a
  // part-only model with the other part chosen by CV, so that each model's
  // own effect on the regret shows.
  std::vector<std::string> both, time_only, metric_only;
  for (const auto* e : models::ModelRegistry::instance().all()) {
    if (e->make_time && e->make_metric) both.push_back(e->name);
    else if (e->make_time) time_only.push_back(e->name + "+auto");
    else if (e->make_metric) metric_only.push_back("auto+" + e->name);
  }
  std::vector<std::string> out = both;
  out.insert(out.end(), time_only.begin(), time_only.end());
  out.insert(out.end(), metric_only.begin(), metric_only.end());
  out.push_back("auto");
  return out;
}

namespace {

// The run's settings, as the report's header.
// The samples as a user without the judged GPU would plan on them: moved by
// split-transfer fitted on them alone (no step measured on the target).
SampleSet moved_to_judged_gpu(const SampleSet& samples, const CrossGpuOptions& og, const replay::ReplayOracle& judged,
                              uint64_t seed) {
  // Trials on the judged GPU: target_trials of the samples' configurations,
  // drawn by the seed among those the judged trace measured, as a user would
  // time a few on the GPU before planning there (no sync measured).
  std::vector<std::pair<double, int>> configs;
  for (const auto& s : samples.samples)
    if (std::find(configs.begin(), configs.end(), std::make_pair(s.batch, s.workers)) == configs.end() &&
        judged.epoch_time(s.batch, s.workers))
      configs.emplace_back(s.batch, s.workers);
  std::mt19937_64 rng(seed);
  std::shuffle(configs.begin(), configs.end(), rng);
  configs.resize(std::min<size_t>(configs.size(), std::max(0, og.target_trials)));
  SampleSet timed;  // the trials as the judged trace times them, packed as it packs them
  timed.dataset_size = judged.dataset_size();
  for (const auto& [b, r] : configs) {
    Sample t;
    t.batch = b, t.workers = r, t.nodes = judged.default_nodes(r);
    t.epoch_time_s = *judged.epoch_time(b, r, t.nodes);
    timed.samples.push_back(t);
  }
  std::vector<models::StepSample> trials;
  if (!timed.empty()) trials = app::sample_steps(timed, judged.gpus_per_node());
  return app::transfer_samples(samples, og.sample_hw, og.judged_hw, std::move(trials),
                               structure::find_network(judged.name()))
      .moved;
}

json options_json(const PlanBenchmarkOptions& a, bool conformal, const std::vector<std::string>& specs,
                  const std::vector<std::string>& methods) {
  json doc;
  doc["seed"] = a.seed;
  doc["sampling_plan"] = a.sampling;
  doc["max_workers"] = a.max_workers;
  doc["confidence"] = a.confidence > 0 ? json(a.confidence) : json(nullptr);
  doc["conformal"] = conformal;
  doc["early_stop"] = a.early_stop;
  doc["early_stop_budget"] = a.early_stop ? json(a.early_stop_budget) : json(nullptr);
  doc["bounds"] = a.confidence > 0 ? json(a.bounds) : json(nullptr);
  // The point plans are held to the trials too (app/planning_model.cpp); the misfit shift is the intervals' alone.
  doc["measured_bounds"] = a.measured_bounds;
  doc["pin_runs"] = conformal && a.pin_runs;
  doc["misfit_shift"] = a.confidence > 0 && a.measured_bounds && a.misfit_shift;
  doc["curves"] = a.curves;
  doc["scenarios_per_trace"] = a.scenarios;
  doc["tabu_seeds"] = a.tabu_seeds;
  doc["models"] = specs;
  doc["methods"] = methods;
  if (const auto& x = a.cross_gpu)
    doc["cross_gpu"] = {{"judged_hw", x->judged_hw.name},
                        {"curves_from", x->curves_from},
                        {"sample_from", x->sample_from},
                        {"sample_hw", x->sample_from.empty() ? "" : x->sample_hw.name},
                        {"samples", x->sample_from.empty() ? "the judged traces'"
                                    : x->as_measured       ? "their times taken as they are"
                                                           : "moved to the judged GPU by split-transfer"},
                        {"target_trials", x->target_trials}};
  doc["gpus_per_node"] = a.cross_gpu ? std::max(1, a.cross_gpu->judged_hw.node.gpus_per_node) : 4;
  doc["scenario_rule"] =
      "target = lo + q(hi - lo), lo = worst true metric at 1 epoch, hi = best at the epoch cap, q = 0.80 + 0.18 f; "
      "deadline = 4^(1-f) 1.25^f x fastest true time to the target; f = i/(n-1)";
  return doc;
}

// The planner behind a benchmark column: coconfig-tabu and coconfig-exhaustive
// are the joint search with that search; every other column is a registered
// planner's own name.
std::unique_ptr<plan::Planner> benchmark_planner(const std::string& method, plan::PlannerOptions o) {
  if (method == "coconfig-tabu" || method == "coconfig-exhaustive") {
    o.search = method.substr(std::string("coconfig-").size());
    return plan::make_planner("coconfig", o);
  }
  return plan::make_planner(method, o);
}

// One method's plan on the masked planned model, judged by the truth: for
// its epochs, or (a.early_stop) until it meets the target. Early stop takes
// its budget from the planned (pessimistic) side and its cost from the point
// predictions.
experiments::Judgement plan_and_judge(const std::string& method, const PlanBenchmarkOptions& a,
                                      plan::EarlyStopBudget budget_rule, const models::PerformanceModel& masked,
                                      const std::shared_ptr<const models::PerformanceModel>& masked_point,
                                      const models::PerformanceModel& truth, const plan::PlanProblem& p,
                                      double optimal_cost) {
  plan::PlannerOptions o;
  o.seed = a.seed;
  o.alternatives = 0;
  o.point_model = masked_point;
  o.early_stop_budget = budget_rule;
  experiments::Judgement j;
  try {
    auto planned = benchmark_planner(method, o)->plan(masked, p);
    if (method == "coconfig-early-stop")
      j = experiments::judge_early_stop(truth, p, planned.best.config, planned.expected.at(0).cost, optimal_cost);
    else if (a.early_stop)
      j = experiments::judge_early_stop(truth, p, planned.best.config, planned.best.cost, optimal_cost);
    else
      j = experiments::judge(truth, p, planned, optimal_cost);
  } catch (const InfeasibleError& e) {
    j.planned = false;
    j.error = e.what();
  }
  return j;
}

json judgement_json(const experiments::Judgement& j) {
  if (!j.planned) return {{"planned", false}, {"error", j.error.substr(0, j.error.find('\n'))}};
  json jr = {{"planned", true}, {"batch", j.config.batch}, {"workers", j.config.workers},
             {"epochs", j.config.epochs}, {"runnable", j.runnable}, {"predicted_cost", j.predicted_cost}};
  if (j.runnable)
    jr.update({{"true_cost", j.true_cost}, {"true_metric", j.true_metric},
               {"true_total_time_s", j.true_total_time_s}, {"target_ok", j.target_ok},
               {"deadline_ok", j.deadline_ok}, {"regret", j.regret}, {"true_epochs", j.true_epochs}});
  return jr;
}

// Tabu against exhaustive search on the same predictions, a.tabu_seeds seeds.
void add_tabu_agreement(const models::PerformanceModel& masked, const plan::PlanProblem& p,
                        const PlanBenchmarkOptions& a, Agreement& ag) {
  try {
    plan::ExhaustiveParams ep;
    ep.alternatives = 0;
    auto ex = plan::exhaustive_search(masked, p, ep);
    for (int sd = 1; sd <= a.tabu_seeds; ++sd) {
      plan::TabuParams tp;
      tp.seed = a.seed * 1000 + sd;
      tp.alternatives = 0;
      auto tb = plan::tabu_search(masked, p, tp);
      ++ag.runs;
      if (tb.best.config == ex.best.config || plan::same_cost(tb.best.cost, ex.best.cost)) ++ag.agree;
      else ag.gaps.push_back(tb.best.cost / ex.best.cost - 1.0);
    }
  } catch (const InfeasibleError&) {
  }
}

json median_or_null(const std::vector<double>& v) { return v.empty() ? json(nullptr) : json(median(v)); }

// Per model and method: the counts and median regrets, by trace and by
// scenario; and how often tabu search agreed with exhaustive search.
void add_summary(json& doc, const std::vector<std::string>& specs, const std::vector<std::string>& methods,
                 std::map<std::string, std::map<std::string, Tally>>& tally,
                 std::map<std::string, Agreement>& agreement) {
  for (const auto& spec : specs) {
    for (const auto& method : methods) {
      const Tally& t = tally[spec][method];
      const Count& c = t.all;
      json js = {{"median_regret", median_or_null(c.regrets)}, {"runs", c.runs}, {"ok", c.ok},
                 {"target_miss", c.runnable - c.target_ok}, {"deadline_miss", c.runnable - c.deadline_ok},
                 {"no_plan", c.runs - c.planned}, {"unrunnable", c.planned - c.runnable}};
      for (const auto& [tn, v] : t.by_trace) js["median_regret_by_trace"][tn] = median(v);
      for (const auto& [si, sc] : t.by_scenario)
        js["by_scenario"].push_back({{"scenario", si}, {"runs", sc.runs}, {"planned", sc.planned},
                                     {"runnable", sc.runnable}, {"target_ok", sc.target_ok},
                                     {"deadline_ok", sc.deadline_ok}, {"ok", sc.ok},
                                     {"median_regret", median_or_null(sc.regrets)}});
      doc["summary"][spec][method] = js;
    }
    const auto& ag = agreement[spec];
    doc["tabu_vs_exhaustive"][spec] = {
        {"runs", ag.runs}, {"agree", ag.agree}, {"median_gap", median_or_null(ag.gaps)},
        {"max_gap", ag.gaps.empty() ? json(nullptr) : json(*std::max_element(ag.gaps.begin(), ag.gaps.end()))}};
  }
}

}  // namespace

json run_plan_benchmark(const std::vector<std::string>& traces, const PlanBenchmarkOptions& a,
                        const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  if (!(a.confidence >= 0 && a.confidence < 1)) throw InputError("--confidence must be strictly between 0 and 1");
  const bool conformal = a.conformal || a.confidence > 0;  // --confidence implies --conformal
  // How every model is fitted and read; the probe batch is set per trace.
  app::PlanningModelOptions po;
  po.conformal = conformal;
  po.confidence = a.confidence;
  po.seed = a.seed;
  po.bounds = uncertainty::parse_confidence_bounds(a.bounds);
  po.measured_bounds = a.measured_bounds;
  po.pin_runs = a.pin_runs;
  po.misfit_shift = a.misfit_shift;
  const plan::EarlyStopBudget budget_rule = plan::parse_early_stop_budget(a.early_stop_budget);
  if (a.scenarios < 1) throw InputError("--scenarios must be >= 1");
  // The traces' clusters hold 64 GPUs; a space of millions of worker counts
  // would run for hours without a word.
  if (a.max_workers < 1 || a.max_workers > 4096) throw InputError("", 0, "--max-workers", "must be from 1 to 4096");
  std::vector<std::string> specs = a.models.empty() ? plan_benchmark_default_models() : a.models;
  for (auto& spec : specs) {  // "auto, oracle": each name without the spaces around it
    const size_t first = spec.find_first_not_of(" \t"), last = spec.find_last_not_of(" \t");
    spec = first == std::string::npos ? "" : spec.substr(first, last - first + 1);
    if (spec.empty()) throw InputError("", 0, "--models", "an empty name in the list");
  }
  for (size_t i = 0; i < specs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (specs[i] == specs[j])
        throw InputError("", 0, "--models", "'" + specs[i] + "' is named twice (its runs would be counted twice)");
  std::vector<std::string> methods = plan_benchmark_methods();
  if (a.early_stop) methods.push_back("coconfig-early-stop");

  json doc = options_json(a, conformal, specs, methods);
  std::map<std::string, std::map<std::string, Tally>> tally;  // model spec -> method -> tally
  std::map<std::string, Agreement> agreement;
  doc["trace_names"] = json::array();

  int k = 0;
  for (const auto& dir : traces) {
    ++k;
    io::PolluxTrace judged = io::read_pollux_trace(dir);
    std::optional<replay::ReplayOracle> sampled;  // another GPU's trace, when the samples come from it
    replay::OracleOptions judged_options;
    if (const auto& x = a.cross_gpu) {
      judged_options.gpus_per_node = std::max(1, x->judged_hw.node.gpus_per_node);
      if (!x->sample_from.empty()) {
        replay::OracleOptions sampled_options;
        sampled_options.gpus_per_node = std::max(1, x->sample_hw.node.gpus_per_node);
        sampled.emplace(replay::ReplayOracle::from_dir((fs::path(x->sample_from) / judged.name).string(), sampled_options));
      }
      if (!x->curves_from.empty() && judged.time_only())
        judged.curves = io::read_pollux_trace((fs::path(x->curves_from) / judged.name).string()).curves;
    }
    auto oracle = std::make_shared<replay::ReplayOracle>(std::move(judged), judged_options);
    if (oracle->time_only()) {
      say(fmt::format("[{}/{}] {}: time-only trace, skipped (planning needs a metric)", k, traces.size(), oracle->name()));
      continue;
    }
    doc["trace_names"].push_back(oracle->name());
    auto truth = std::make_shared<replay::OraclePerformanceModel>(oracle);
    replay::SamplingPlan sp = replay::named_plan(a.sampling, a.seed);
    sp.record_curves = a.curves;
    SampleSet samples = replay::draw_samples(sampled ? *sampled : *oracle, sp).samples;
    if (sampled && !a.cross_gpu->as_measured) samples = moved_to_judged_gpu(samples, *a.cross_gpu, *oracle, a.seed);
    plan::PlanProblem space;
    space.space = app::search_space(samples, {.batches = {},
                                              .max_workers = a.max_workers,
                                              .max_epochs = oracle->epoch_limit_or(100),
                                              .gpus_per_node = oracle->gpus_per_node()});
    const auto& bs = space.space.batches;
    auto scen = experiments::derive_scenarios(*truth, space, a.scenarios);
    say(fmt::format("[{}/{}] {}: {} samples, {} batches x 1..{} workers x 1..{} epochs, {} scenarios", k,
                    traces.size(), oracle->name(), samples.size(), bs.size(), a.max_workers, space.space.max_epochs,
                    scen.size()));
    json jt;
    jt["samples"] = samples.size();
    jt["curve_points"] = samples.curve.size();
    jt["space"] = {{"batches", space.space.batches}, {"max_workers", a.max_workers},
                   {"max_epochs", space.space.max_epochs}, {"gpus_per_node", space.space.workers_per_node}};
    jt["direction"] = to_string(oracle->direction());
    std::map<std::string, std::optional<double>> cv_cache;
    app::ModelSource source(samples);
    po.probe_batch = space.space.batches.front();
    std::vector<json> jscen(scen.size());
    for (size_t i = 0; i < scen.size(); ++i)
      jscen[i] = {{"target", scen[i].target}, {"deadline_s", scen[i].deadline_s}, {"quantile", scen[i].quantile},
                  {"deadline_mult", scen[i].deadline_mult}, {"optimum", cand_json(scen[i].optimum)},
                  {"fastest", cand_json(scen[i].fastest)}};
    for (const auto& spec : specs) {
      say(fmt::format("  fitting {}...", spec));
      Fitted f = fit_spec(spec, source, truth, po);
      const std::array<std::optional<double>, 4> mr = {in_sample_mre(f, samples, true), cv_mre(f.time_name, true, samples, cv_cache, a.seed),
            in_sample_mre(f, samples, false), cv_mre(f.metric_name, false, samples, cv_cache, a.seed)};
      jt["mre"][spec] = {{"time_model", f.time_name}, {"metric_model", f.metric_name},
                         {"time_in_sample", opt(mr[0])}, {"time_cv5", opt(mr[1])},
                         {"metric_in_sample", opt(mr[2])}, {"metric_cv5", opt(mr[3])}};
      auto masked = std::make_shared<experiments::DomainMaskedModel>(f.planned, truth);
      auto masked_point = std::make_shared<experiments::DomainMaskedModel>(f.model, truth);
      for (size_t i = 0; i < scen.size(); ++i) {
        plan::PlanProblem p = space;
        p.target = scen[i].target;
        p.deadline_s = scen[i].deadline_s;
        for (const auto& method : methods) {
          const experiments::Judgement j =
              plan_and_judge(method, a, budget_rule, *masked, masked_point, *truth, p, scen[i].optimum.cost);
          Tally& t = tally[spec][method];
          t.all.add(j);
          t.by_scenario[static_cast<int>(i)].add(j);
          if (j.planned && j.runnable) t.by_trace[oracle->name()].push_back(j.regret);
          jscen[i]["results"][spec][method] = judgement_json(j);
        }
        add_tabu_agreement(*masked, p, a, agreement[spec]);
      }
    }
    jt["scenarios"] = jscen;
    doc["traces"][oracle->name()] = jt;
  }

  add_summary(doc, specs, methods, tally, agreement);
  return doc;
}

namespace {

// A fraction as an unsigned percentage; null (no number) as a dash.
std::string pct0_or_dash(const json& v) { return v.is_number() ? fmt::format("{:.1f}%", 100 * v.get<double>()) : "—"; }

}  // namespace

std::string format_regret(const json& v) { return v.is_number() ? pct(v.get<double>()) : "—"; }

std::string format_plan_benchmark(const json& doc) {
  std::string out;
  const auto specs = doc.at("models").get<std::vector<std::string>>();
  const auto methods = doc.at("methods").get<std::vector<std::string>>();
  const auto trace_names = doc.at("trace_names").get<std::vector<std::string>>();
  const bool confident = doc.at("confidence").is_number();
  out += fmt::format(
      "co-configuration benchmark: {} traces x {} scenarios, sampling plan '{}' (seed {}), workers 1..{}, {} GPUs per node\n",
      trace_names.size(), doc.at("scenarios_per_trace").get<int>(), doc.at("sampling_plan").get<std::string>(),
      doc.at("seed").get<uint64_t>(), doc.at("max_workers").get<int>(), doc.value("gpus_per_node", 4));
  if (doc.contains("cross_gpu")) {
    const auto& x = doc.at("cross_gpu");
    out += fmt::format("judged on traces measured on {}{}", x.at("judged_hw").get<std::string>(),
                       x.at("curves_from").get<std::string>().empty()
                           ? ""
                           : ", learning curves from " + x.at("curves_from").get<std::string>());
    if (!x.at("sample_from").get<std::string>().empty())
      out += fmt::format("; samples drawn from {} (measured on {}), {}{}",
                         x.at("sample_from").get<std::string>(), x.at("sample_hw").get<std::string>(),
                         x.at("samples").get<std::string>(),
                         x.value("target_trials", 0) > 0
                             ? fmt::format(", corrected by {} configurations measured on the judged GPU",
                                           x.at("target_trials").get<int>())
                             : "");
    out += "\n";
  }
  if (confident) {
    out += fmt::format("every method plans on the pessimistic side of {}-fold conformal intervals at confidence {:g} "
                       "({} bounds: upper epoch time, metric bound on the wrong side of the target); the oracle model "
                       "is planned on as is\n",
                       uncertainty::ConformalParams{}.folds, doc.at("confidence").get<double>(),
                       doc.at("bounds").get<std::string>());
    if (doc.value("measured_bounds", false))
      out += std::string("the pessimistic side is held to the sampled trials of each configuration (never worse than a "
                         "trial reached within the epochs, never better than a longer trial reached") +
             (doc.value("misfit_shift", false) ? ", and short of a longer trial by as much as the point model overshot it)\n"
                                                : ")\n");
  } else {
    out += doc.at("conformal").get<bool>() ? "models wrapped in conformal intervals; methods plan on the point predictions"
                                           : "methods plan on the point predictions";
    out += doc.value("measured_bounds", false)
               ? ", held to the sampled trials of each configuration (never worse than a trial reached within the "
                 "epochs, never better than a longer trial reached)\n"
               : "\n";
  }
  out += doc.value("curves", false)
             ? "each configuration's learning curve is recorded up to its longest trial (the best metric after every "
               "epoch); the models are fitted on the trials alone\n"
             : "only each trial's final metric is recorded (--no-curves: the paper's samples)\n";
  if (doc.value("pin_runs", false))
    out += "the metric models are pinned to each sampled run's own trials (--pin-runs, uncertainty/metric_run_pinned.h)\n";
  if (doc.at("early_stop").get<bool>())
    out += fmt::format("every plan is judged as a run that stops when the true metric meets the target (planned epochs "
                       "= budget); coconfig-early-stop's budget rule: {}\n",
                       doc.at("early_stop_budget").get<std::string>());
  out += "regret = true cost / true optimal cost - 1; median over the runnable plans (those that miss a true constraint "
         "included; the oracle judges every choice)\n";
  const json& summary = doc.at("summary");
  // One line per model first: how the planner's own method does on each.
  out += "\ncoconfig-exhaustive by model (median regret, runs meeting both true constraints, target misses, no plan)\n";
  for (const auto& spec : specs) {
    const json& t = summary.at(spec).at("coconfig-exhaustive");
    out += fmt::format("  {:<30} {:>8} {:>3}/{:<2} {:>3} {:>3}\n", spec, format_regret(t.at("median_regret")),
                       t.at("ok").get<int>(), t.at("runs").get<int>(), t.at("target_miss").get<int>(),
                       t.at("no_plan").get<int>() + t.at("unrunnable").get<int>());
  }
  for (const auto& spec : specs) {
    out += fmt::format("\nmodel: {}\n", spec);
    out += fmt::format("  {:<20}", "method");
    for (const auto& tn : trace_names) out += fmt::format(" {:>11}", tn);
    out += fmt::format(" {:>8} {:>6} {:>7} {:>7} {:>7}\n", "median", "ok", "tgt-miss", "dl-miss", "no-plan");
    for (const auto& method : methods) {
      const json& t = summary.at(spec).at(method);
      out += fmt::format("  {:<20}", method);
      for (const auto& tn : trace_names) {
        const bool has = t.contains("median_regret_by_trace") && t["median_regret_by_trace"].contains(tn);
        out += fmt::format(" {:>11}", has ? format_regret(t["median_regret_by_trace"][tn]) : std::string("—"));
      }
      out += fmt::format(" {:>8} {:>3}/{:<2} {:>7} {:>7} {:>7}\n", format_regret(t.at("median_regret")),
                         t.at("ok").get<int>(), t.at("runs").get<int>(), t.at("target_miss").get<int>(),
                         t.at("deadline_miss").get<int>(), t.at("no_plan").get<int>() + t.at("unrunnable").get<int>());
    }
  }
  out += "\nby scenario (0 = easy .. n-1 = tight): planned / runnable / meets true target / meets true deadline / both, "
         "of the runs; median regret over the runnable plans\n";
  for (const auto& spec : specs) {
    out += fmt::format("  {}\n", spec);
    for (const auto& method : methods) {
      const json& t = summary.at(spec).at(method);
      out += fmt::format("    {:<20}", method);
      if (t.contains("by_scenario"))
        for (const auto& c : t["by_scenario"])
          out += fmt::format("  s{}: {}/{}/{}/{}/{} of {} {:>7}", c.at("scenario").get<int>(), c.at("planned").get<int>(),
                             c.at("runnable").get<int>(), c.at("target_ok").get<int>(), c.at("deadline_ok").get<int>(),
                             c.at("ok").get<int>(), c.at("runs").get<int>(), format_regret(c.at("median_regret")));
      out += "\n";
    }
  }
  out += "\nmodel MRE (equation 12), in-sample / 5-fold CV, time | metric\n";
  for (const auto& spec : specs) {
    out += fmt::format("  {}\n", spec);
    for (const auto& tn : trace_names) {
      const json& m = doc.at("traces").at(tn).at("mre").at(spec);
      out += fmt::format("    {:<12} time {:>6} / {:>6} | metric {:>6} / {:>6}\n", tn, pct0_or_dash(m.at("time_in_sample")),
                         pct0_or_dash(m.at("time_cv5")), pct0_or_dash(m.at("metric_in_sample")),
                         pct0_or_dash(m.at("metric_cv5")));
    }
  }
  out += fmt::format("\ntabu vs exhaustive on the same predictions ({} tabu seeds per scenario, NG = 50, tenure 10)\n",
                     doc.at("tabu_seeds").get<int>());
  for (const auto& spec : specs) {
    const json& ag = doc.at("tabu_vs_exhaustive").at(spec);
    out += fmt::format("  {:<28} agree {}/{}", spec, ag.at("agree").get<int>(), ag.at("runs").get<int>());
    if (ag.at("median_gap").is_number())
      out += fmt::format("; when not: median cost gap {}, max {}", format_regret(ag["median_gap"]), format_regret(ag["max_gap"]));
    out += "\n";
  }
  return out;
}

}  // namespace trainplan::experiments
