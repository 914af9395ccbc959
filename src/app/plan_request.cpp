#include "app/plan_request.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "core/sampled_range.h"
#include "app/planning_model.h"
#include "app/predict.h"
#include "app/search_space.h"
#include "plan/frontier.h"
#include "plan/launch_spec.h"
#include "plan/objective.h"
#include "plan/planner.h"
#include "uncertainty/conformal.h"

namespace trainplan::app {

// What a plan at `confidence` cannot promise at its choice `c`: each part's
// interval there as `predict` reads it (IntervalBasis: in-sample at a
// measured configuration, or too few held-out residuals); "" when both can.
static std::string confidence_caveat(const models::FittedPerformanceModel& m, double confidence,
                                     const plan::Candidate& c) {
  std::vector<std::string> parts;
  auto say = [&](const char* what, const uncertainty::IntervalBasis& b) {
    if (b.in_sample)
      parts.push_back(fmt::format("the {} rests on its measurement there (the model's in-sample misses), not on "
                                  "held-out ones",
                                  what));
    else if (!b.enough)
      parts.push_back(fmt::format("the {}'s {} held-out residuals are too few for {:g}%", what, b.residuals,
                                  100 * confidence));
  };
  if (const auto* t = dynamic_cast<const uncertainty::ConformalTimeModel*>(m.time_model()))
    say("epoch time", t->interval_basis(c.config.batch, c.config.workers, c.nodes, confidence));
  if (const auto* mm = dynamic_cast<const uncertainty::ConformalMetricModel*>(m.metric_model()))
    say("metric", mm->interval_basis(c.config.batch, c.config.workers, c.config.epochs, confidence));
  if (parts.empty()) return "";
  return fmt::format("at the choice, {}: split conformal promises no {:g}% there", fmt::join(parts, "; "),
                     100 * confidence);
}


namespace {

constexpr size_t kEvidenceTrials = 3;  // trials listed beside a plan

void note(const std::function<void(const std::string&)>& f, const std::string& s) {
  if (f) f(s);
}

}  // namespace

const Config& PlanOutcome::run_config() const {
  return stops_at_target() ? result.expected.front().config : result.best.config;
}

bool PlanOutcome::past_longest_trial() const {
  return longest_trial_epochs > 0 && run_config().epochs > longest_trial_epochs;
}

bool PlanOutcome::before_shortest_trial() const {
  return shortest_trial_epochs > 0 && run_config().epochs < shortest_trial_epochs;
}

bool PlanOutcome::past_most_workers() const {
  return most_workers_sampled > 0 && run_config().workers > most_workers_sampled;
}

bool PlanOutcome::batch_past_dataset() const {
  return dataset_size && double(run_config().batch) * run_config().workers > double(*dataset_size);
}

void check_plan_options_read(const PlanQuery& q, const std::function<bool(const std::string&)>& given) {
  struct Needs {
    const char* option;
    bool read;
    const char* why;
  };
  const bool coconfig = q.method == "coconfig" && !q.early_stop;
  const bool tabu = coconfig && q.search != "exhaustive";
  const bool seeded = tabu || q.method == "bo" || q.method == "manual" || q.confidence > 0;
  for (const Needs& n :
       {Needs{"--bounds", q.confidence > 0, "reads --confidence's intervals: give --confidence P, 0 < P < 1 (0 means none)"},
        Needs{"--early-stop-budget", q.early_stop, "is the budget of --early-stop: give it"},
        Needs{"--manual-tries", q.method == "manual", "are the manual baseline's: give --method manual"},
        Needs{"--tabu-iterations", tabu, "steer coconfig's tabu search (not a baseline's, --early-stop's or --search exhaustive)"},
        Needs{"--tabu-tenure", tabu, "steers coconfig's tabu search (not a baseline's, --early-stop's or --search exhaustive)"},
        Needs{"--search", q.search != "tabu" || tabu,
              "tabu is coconfig's search: a baseline chooses its own way, and --early-stop searches exhaustively"},
        Needs{"--seed", seeded,
              "deals tabu search, bo's and manual's draws and --confidence's conformal folds; this plan has none of them"},
        Needs{"--conformal", q.confidence > 0,
              "wraps the models in intervals that only --confidence plans on: give --confidence (which implies it)"},
        Needs{"--train-cmd", !q.emit.empty(), "goes into the launch --emit writes: give --emit"},
        Needs{"--job-name", q.emit == "slurm" || q.emit == "k8s",
              "names the job --emit slurm or k8s writes (torchrun has no job name): give one of them"},
        Needs{"--image", q.emit == "k8s", "is the container of --emit k8s: give it"},
        Needs{"--no-gpus", !q.emit.empty(), "shapes the launch --emit writes: give --emit"}})
    if (given(n.option) && !n.read) throw InputError("", 0, n.option, n.why);
}

void check_plan_query(const SampleSet& samples, const PlanQuery& q) {
  if (!samples.has_metric() && !samples.diverged.empty())
    throw InputError(samples.source, 0, "metric",
                     "every trial's metric went NaN or infinite: the training diverged in all of them; lower the "
                     "learning rate (or check the loss) and profile again");
  if (!samples.has_metric())
    throw InputError(samples.source, 0, "metric",
                     "planning needs a metric, but these samples are time-only (the metric column is empty); "
                     "profile with a validation metric so the planner can tell how many epochs reach the target");
  if (q.max_workers < 0)
    throw InputError("", 0, "--max-workers", "must be >= 1 (or 0: the largest worker count in the samples)");
  if (!(q.deadline > 0)) throw InputError("", 0, "--deadline", "must be > 0 seconds");
  // Every planner walks the epochs.
  if (q.max_epochs < 1 || q.max_epochs > kMostEpochs)
    throw InputError("", 0, "--max-epochs", fmt::format("must be from 1 to {}", kMostEpochs));
  // Counts of search steps: a billion would hold a core for as long as the caller lets it run.
  constexpr int kMostSearchSteps = 1'000'000;
  for (auto [option, value] : {std::pair{"--tabu-iterations", q.tabu_iterations}, {"--tabu-tenure", q.tabu_tenure},
                                {"--manual-tries", q.manual_tries}})
    if (value < 1 || value > kMostSearchSteps)
      throw InputError("", 0, option, fmt::format("must be from 1 to {}", kMostSearchSteps));
  if (q.gpus_per_node < -1)
    throw InputError("", 0, "--gpus-per-node", "must be >= 0 (0: unknown; not given: the hardware's, else the samples')");
  // Each is kept in order while the search runs and printed whole: past a thousand, a list no one reads
  // that costs memory and time (two billion took 1.4 GB and a 138 MB answer).
  constexpr int kMostAlternatives = 1000;
  if (q.alternatives < 0 || q.alternatives > kMostAlternatives)
    throw InputError("", 0, "--alternatives", fmt::format("must be from 0 to {}", kMostAlternatives));
  if (q.confidence != 0 && !(q.confidence > 0 && q.confidence < 1))
    throw InputError("", 0, "--confidence", "must be strictly between 0 and 1");
  if (q.early_stop && q.method != "coconfig")
    throw InputError("", 0, "--early-stop", "plans with --method coconfig only (the baselines choose fixed epochs)");
  if (q.early_stop && q.frontier)
    throw InputError("", 0, "--frontier", "lists fixed-epoch runs; it does not combine with --early-stop");
}

namespace {

plan::PlannerOptions planner_options(const PlanQuery& q, const PlanOutcome& o) {
  plan::PlannerOptions opts;
  opts.point_model = o.point_model;
  opts.early_stop_budget = q.early_stop_budget;
  opts.search = q.search;
  opts.seed = q.seed;
  opts.alternatives = q.alternatives;
  opts.manual_tries = q.manual_tries;
  opts.tabu.iterations = q.tabu_iterations;
  opts.tabu.tenure = q.tabu_tenure;
  return opts;
}

// Runs the method (with early_stop, coconfig-early-stop: budget from the
// planned model, expected cost from the point model) into o.result. An
// infeasible problem is reported with the model's name and, with a frontier,
// what each longer deadline would cost.
void search(PlanOutcome& o, const PlanQuery& q, const SampleSet& samples) {
  const auto planner = plan::make_planner(q.early_stop ? "coconfig-early-stop" : q.method, planner_options(q, o));
  if (q.frontier) o.frontier = plan::cost_time_frontier(*o.model, o.problem);
  try {
    o.result = planner->plan(*o.model, o.problem);
  } catch (const InfeasibleError& e) {
    std::string msg = fmt::format("{}\n  model: {}", e.what(), o.model->name());
    const Sample* best = nullptr;
    for (const auto& x : samples.samples)
      if (x.metric && (!best || samples.better(*x.metric, *best->metric))) best = &x;
    if (q.confidence > 0 && best && !samples.meets(*best->metric, q.target))
      msg += fmt::format(
          "\n  no trial reached the target: the best sampled metric is {:.4g} (batch {:g}, {} worker{}, {:g} epochs), "
          "and at a confidence the pessimistic side is held there (no confidence is claimed for a metric no run has "
          "reached), so no configuration can meet {:g}. A longer trial there (more epochs) that reaches the target "
          "would let a plan claim it; without --confidence the plan uses the point predictions",
          *best->metric, best->batch, best->workers, best->workers == 1 ? "" : "s", best->epochs, q.target);
    if (q.frontier && !o.frontier.empty())
      msg += "\n  the cheapest run for each longer deadline:\n" + plan::frontier_table(o.frontier, q.deadline);
    throw InfeasibleError(msg, e.shortfall());
  }
}

// With a confidence and fixed epochs: the epochs the point model needs at the
// chosen cell (the planner's own epoch search), when fewer than chosen.
std::optional<PlanOutcome::ConfidenceMargin> confidence_margin(const PlanOutcome& o) {
  const auto& b = o.result.best;
  auto point = plan::evaluate_cell(*o.point_model, o.problem, b.config.batch, b.config.workers);
  if (!point || point->config.epochs >= b.config.epochs) return std::nullopt;
  const int extra = b.config.epochs - point->config.epochs;
  return PlanOutcome::ConfidenceMargin{point->config.epochs, extra, b.cost * extra / b.config.epochs};
}

std::string launch_spec(const PlanOutcome& o, const PlanQuery& q, const structure::HardwareSpec* hw) {
  plan::LaunchOptions lo;
  lo.train_cmd = q.train_cmd;
  lo.job_name = q.job_name;
  lo.gpus_per_node = o.problem.space.workers_per_node;
  // A launcher's node is one operating system: a GB200 NVL72's tray of 4, not its NVLink domain.
  if (hw && hw->gpus_per_host > 0 && hw->gpus_per_host < lo.gpus_per_node) lo.gpus_per_node = hw->gpus_per_host;
  lo.time_limit_s = q.deadline;
  lo.image = q.image;
  lo.gpus = !q.no_gpus;
  if (q.early_stop) {
    lo.stop_at_target = q.target;
    lo.target_direction = to_string(o.direction);
  }
  return plan::launch_spec(q.emit, o.result.best.config, lo);
}

}  // namespace

PlanOutcome make_plan(ModelSource& src, const PlanQuery& q, const Progress& progress) {
  const SampleSet& samples = src.samples();
  check_plan_query(samples, q);
  PlanOutcome o;
  o.query = q;
  o.direction = samples.direction;
  plan::PlanProblem& p = o.problem;
  p.target = q.target;
  p.deadline_s = q.deadline;
  // Given GPUs per node first, then the node of the hardware named (--hardware).
  const structure::HardwareSpec* hw = src.params().hardware.get();
  const int gpus_per_node = q.gpus_per_node >= 0 ? q.gpus_per_node : hw && hw->gpus_per_node > 0 ? hw->gpus_per_node : -1;
  p.space = search_space(samples, {.batches = q.batches,
                                   .max_workers = q.max_workers,
                                   .max_epochs = q.max_epochs,
                                   .gpus_per_node = gpus_per_node});
  o.query.max_workers = p.space.max_workers;
  o.batches = p.space.batches;
  if (q.gpus_per_node == 0) {
    o.nodes_from = "unknown (--gpus-per-node 0)";
  } else {
    const NodePacking packing = node_packing(samples, p.space.max_workers, std::max(0, q.gpus_per_node), hw);
    o.nodes_from = packing.from, o.nodes_assumed = packing.assumed;
  }
  // Every planner walks the (batch, workers) cells and tabu search lists them:
  // past this many the memory and time grow with a typo (--max-workers 100000000).
  constexpr double kMostCells = 1 << 22;  // 2^24 took 90 s and 1.9 GB on the 2-core host
  const double cells = double(p.space.batches.size()) * double(std::max(p.space.max_workers, 0));
  if (cells > kMostCells)
    throw InputError("", 0, q.max_workers > 0 ? "--max-workers" : "--batches",
                     fmt::format("the search space has {:.0f} (batch, workers) cells ({} batches x {} worker counts), "
                                 "more than {:.0f}: lower --max-workers or give fewer --batches",
                                 cells, p.space.batches.size(), p.space.max_workers, kMostCells));
  plan::validate(p);
  if (!p.space.diverged.empty()) {
    std::string cells;
    for (const auto& [b, r] : p.space.diverged) cells += fmt::format("{}batch {} on {} worker(s)", cells.empty() ? "" : ", ", b, r);
    note(progress.choosing, fmt::format("left out of the plan: {} (their trials' metric went NaN or infinite: the "
                                        "training diverged there)",
                                        cells));
  }

  const std::string tname = q.time_model.empty() ? q.model : q.time_model;
  const std::string mname = q.metric_model.empty() ? q.model : q.metric_model;
  if (tname == "auto" || mname == "auto") note(progress.choosing, "choosing models by 5-fold cross-validation...");
  o.choice = src.choose(tname, mname);
  // A confidence needs intervals, and the registered models give none of
  // their own: both parts are then wrapped in K-fold conformal intervals.
  PlanningModelOptions po;
  po.conformal = q.conformal || q.confidence > 0;
  po.seed = q.seed;  // the folds predict --seed deals: the same intervals in both
  po.confidence = q.confidence;
  po.probe_batch = p.space.batches.front();
  po.bounds = q.bounds;
  const PlanningModel pm = src.planning_model(o.choice.time_model, o.choice.metric_model, po);
  // The expected run (early stopping's cost, the confidence's margin) is the point side held to
  // the trials, as a plan without a confidence is made on: a measured run that missed the target
  // at some epochs rules them out of the expectation too.
  PlanningModelOptions point_side = po;
  point_side.confidence = 0;
  o.point_model = planned_side(pm.fitted, samples, point_side);
  o.model = pm.planned;
  o.model_name = o.model->name();

  search(o, q, samples);
  if (q.confidence > 0) o.confidence_caveat = confidence_caveat(*pm.fitted, q.confidence, o.result.best);
  const auto& c = o.run_config();
  o.evidence = plan::nearest_trials(samples, double(c.batch) * c.workers, c.epochs, q.target, kEvidenceTrials);
  plan::add_model_metric(o.evidence, *pm.fitted);
  o.longest_trial_epochs = samples.last_metric_epoch().value_or(0);
  for (const auto* part : {&samples.samples, &samples.curve})
    for (const auto& x : *part)
      if (x.metric && x.epochs > 0 && (o.shortest_trial_epochs == 0 || x.epochs < o.shortest_trial_epochs))
        o.shortest_trial_epochs = x.epochs;
  o.most_workers_sampled = most_workers_sampled(samples);
  o.dataset_size = samples.dataset_size;
  o.times_predicted_from = samples.times_predicted_from;
  o.times_predicted_log_sd = samples.times_predicted_log_sd;
  if (q.confidence > 0 && !q.early_stop) o.confidence_margin = confidence_margin(o);
  if (!q.emit.empty()) o.launch = launch_spec(o, q, hw);
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
  if (!o.confidence_caveat.empty()) j["confidence_caveat"] = o.confidence_caveat;
  j["target"] = q.target;
  j["direction"] = to_string(o.direction);
  j["deadline_s"] = q.deadline;
  j["space"] = {{"batches", o.batches}, {"max_workers", q.max_workers}, {"max_epochs", q.max_epochs},
                {"gpus_per_node", o.problem.space.workers_per_node}, {"nodes_from", o.nodes_from},
                {"nodes_assumed", o.nodes_assumed}};
  nlohmann::json diverged = nlohmann::json::array();
  for (const auto& [b, r] : o.problem.space.diverged) diverged.push_back({{"batch", b}, {"workers", r}});
  j["space"]["diverged"] = diverged;
  j["choice"] = to_json(res.best);
  j["alternatives"] = nlohmann::json::array();
  for (const auto& c : res.alternatives) j["alternatives"].push_back(to_json(c));
  if (o.stops_at_target()) {
    // "choice" is the budget (epochs to allow, on the planned side); "expected" what the point model expects.
    auto expected = [](const plan::Candidate& c) {
      return nlohmann::json{{"epochs", c.config.epochs}, {"total_time_s", c.total_time_s},
                            {"metric", c.metric}, {"cost_worker_s", c.cost},
                            {"cost_worker_h", c.cost / 3600.0}};
    };
    j["early_stop"] = {{"budget_epochs", res.best.config.epochs},
                       {"budget_rule", plan::to_string(q.early_stop_budget)},
                       {"expected", expected(res.expected.front())}};
    for (size_t i = 0; i < res.alternatives.size(); ++i)
      j["alternatives"][i]["expected"] = expected(res.expected.at(i + 1));
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
  j["shortest_trial_epochs"] = o.shortest_trial_epochs;
  j["before_shortest_trial"] = o.before_shortest_trial();
  j["most_workers_sampled"] = o.most_workers_sampled;
  j["past_most_workers"] = o.past_most_workers();
  j["dataset_size"] = o.dataset_size ? nlohmann::json(*o.dataset_size) : nlohmann::json();
  j["batch_past_dataset"] = o.batch_past_dataset();
  // Machine readers see what the CLI's stderr note says: the times were predicted, not measured.
  if (!o.times_predicted_from.empty()) {
    j["times_predicted_from"] = o.times_predicted_from;
    if (o.times_predicted_log_sd) j["times_predicted_log_sd"] = *o.times_predicted_log_sd;
  }
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
