// trainplan plan: choose batch, workers and epochs for one job (equation 11)
// from profiling samples, with the co-configuration method or a baseline.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>
#include <utility>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/number_text.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "io/gnuplot.h"
#include "io/json_text.h"
#include "profile/samples_file.h"
#include "plan/planner.h"
#include "app/gpu_frontier_plot.h"
#include "plan/frontier.h"
#include "scoring/model_choice.h"
#include "scoring/transfer_eval.h"
#include "plan/plan_plot.h"
#include "app/plan_on_gpus.h"
#include "app/plan_request.h"
#include "io/hardware_file.h"

namespace trainplan::cli {
namespace {

struct PlanArgs {
  // The question, its defaults app::PlanQuery's; the options below are the
  // command line's own, or text it parses into the query.
  app::PlanQuery query;
  std::string samples;
  bool json = false;
  std::string bounds = "two-sided";
  std::string early_stop_budget = "deadline";
  long dataset_size = 0;
  std::string comm_profile;
  std::string metric_range;  // --metric-range LO:HI; empty: SampleSet::metric_range()
  std::string hardware;  // --hardware: catalog name or hardware file; empty: the default prior
  std::string plot;
  std::string from_gpu;  // --from-gpu: the GPU the samples were measured on
  std::string gpu;       // --gpu A,B,...: plan on each (samples moved from --from-gpu)
  std::string price;     // --price: one number, or NAME=PRICE per --gpu
  std::string trials;    // --trials GPU=FILE,...: samples timed on a GPU of --gpu
  bool tf32 = false;     // --tf32, with --gpu
  models::TrainingPrecision precision;  // --precision, --target-precision, with --gpu
};

// Seconds with four significant digits below 100 s (an epoch of a few
// milliseconds reads 0.003456, not 0.00), one decimal above.
std::string seconds_text(double s) { return std::abs(s) >= 100 ? fmt::format("{:.1f}", s) : fmt::format("{:.4g}", s); }

// How the metric target reads: ">=" for a metric to maximise, "<=" for one to minimise.
const char* comparison(MetricDirection d) { return d == MetricDirection::kMax ? ">=" : "<="; }

// The method, the model, the constraints and the choice.
void print_choice(std::ostream& out, const PlanArgs& a, const app::PlanOutcome& o) {
  const auto& res = o.result;
  const auto& b = res.best;
  out << fmt::format("plan: {} ({} (batch, workers) cells evaluated)\n", res.method, res.evaluations);
  out << fmt::format("model: {}\n  {}\n", o.model_name, o.choice.reason);
  if (!res.note.empty()) out << fmt::format("note: {}\n", res.note);
  out << fmt::format("constraints: metric {} {} ({}), deadline {:.1f} s; space: {} batches x 1..{} workers x 1..{} epochs{}\n",
                     comparison(o.direction), a.query.target, to_string(o.direction), a.query.deadline, o.batches.size(),
                     o.query.max_workers, a.query.max_epochs,
                     o.problem.space.workers_per_node > 0
                         ? fmt::format(", {} GPUs per node", o.problem.space.workers_per_node)
                         : "");
  // Only where the assumption prices the choice: a choice on one node needs none.
  if (o.nodes_assumed && b.nodes > 1) out << fmt::format("nodes: {}\n", o.nodes_from);
  out << fmt::format("choice: batch {} per worker, {} worker{}{}, {} epoch{}\n", b.config.batch, b.config.workers,
                     b.config.workers == 1 ? "" : "s", b.nodes > 0 ? fmt::format(" on {} node{}", b.nodes, b.nodes == 1 ? "" : "s") : "",
                     b.config.epochs, b.config.epochs == 1 ? "" : "s");
}

// With --early-stop: the epoch budget, the run the point model expects, and the budget's bound.
void print_early_stop_run(std::ostream& out, const PlanArgs& a, const app::PlanOutcome& o) {
  const auto& b = o.result.best;
  const auto& x = o.result.expected.front();
  out << fmt::format("  run with a budget of {} epochs ({}); stop as soon as the validation metric is {} {}\n",
                     b.config.epochs,
                     a.early_stop_budget == "deadline" ? "as many as the deadline allows" : "enough to reach the target",
                     comparison(o.direction), a.query.target);
  out << fmt::format("  expected (point model): {} epoch{}, {} s, metric {:.6g}, cost {:.1f} worker-seconds "
                     "({:.3f} worker-hours)\n",
                     x.config.epochs, x.config.epochs == 1 ? "" : "s", seconds_text(x.total_time_s), x.metric, x.cost,
                     x.cost / 3600.0);
  out << fmt::format("  budget ({}): {} s per epoch, {} s in all (deadline {:.1f} s), metric {:.6g}, "
                     "cost {:.1f} worker-seconds at most\n",
                     o.model_name, seconds_text(b.epoch_time_s), seconds_text(b.total_time_s), a.query.deadline, b.metric,
                     b.cost);
}

// Without --early-stop: the choice's predictions and cost, and with a
// confidence the margin it buys.
void print_predictions(std::ostream& out, const PlanArgs& a, const app::PlanOutcome& o) {
  const auto& b = o.result.best;
  out << fmt::format("  predicted epoch time  {} s\n", seconds_text(b.epoch_time_s));
  out << fmt::format("  predicted total time  {} s (deadline {:.1f} s)\n", seconds_text(b.total_time_s), a.query.deadline);
  out << fmt::format("  predicted metric      {:.6g} (target {} {})\n", b.metric, comparison(o.direction), a.query.target);
  out << fmt::format("  cost                  {} worker-seconds ({:.4g} worker-hours)\n", seconds_text(b.cost), b.cost / 3600.0);
  if (!o.confidence_caveat.empty()) out << "  note: " << o.confidence_caveat << "\n";
  if (const auto& m = o.confidence_margin) {
    // The price of the confidence: epochs the point prediction does not need.
    const bool one = m->extra_epochs == 1;
    out << fmt::format("  margin for {:g}% confidence: the point prediction meets the target after {} epoch{}; {} "
                       "more epoch{} cost{} {:.1f} worker-seconds ({:+.1f}%). A run that stops at the target "
                       "(--early-stop) pays for {} only if it needs {}\n",
                       100 * a.query.confidence, m->point_epochs, m->point_epochs == 1 ? "" : "s", m->extra_epochs,
                       one ? "" : "s", one ? "s" : "", m->cost_worker_s, 100.0 * m->extra_epochs / m->point_epochs,
                       one ? "it" : "them", one ? "it" : "them");
  }
}

// What the choice rests on: a trial beside it that missed the target, or
// none near, says the prediction is the model's alone; a model more
// optimistic than the trials beside the choice is likely so at the choice.
void print_evidence(std::ostream& out, const app::PlanOutcome& o) {
  out << fmt::format("nearest trials (distance from the {} in octaves of global batch and of epochs; model: the "
                     "point model's metric at the trial):\n",
                     o.stops_at_target() ? "expected run" : "choice");
  out << fmt::format("  {:>6} {:>7} {:>7} {:>10} {:>10} {:>7} {:>8} {:>9}\n", "batch", "workers", "epochs", "metric",
                     "model", "target", "d_batch", "d_epochs");
  for (const auto& t : o.evidence)
    out << fmt::format("  {:>6} {:>7} {:>7g} {:>10.5g} {:>10} {:>7} {:>+8.2f} {:>+9.2f}\n", number_text(t.sample.batch),
                       t.sample.workers, t.sample.epochs, *t.sample.metric,
                       t.model_metric ? fmt::format("{:.5g}", *t.model_metric) : std::string("-"),
                       t.meets_target ? "met" : "missed", t.batch_octaves, t.epoch_octaves);
}

// The warning for a run past the longest trial: its metric is the model's extrapolation in epochs.
void print_past_longest_trial(std::ostream& out, const PlanArgs& a, const app::PlanOutcome& o) {
  out << fmt::format("  the {} runs {} epochs, past the longest trial ({:g}): its metric is the model's extrapolation "
                     "in epochs, where runs often keep improving after the model levels off{}; profile longer "
                     "trials to plan on measurements (docs/lab/MODELS-METRIC.md, \"Past the last sampled epoch\")\n",
                     o.stops_at_target() ? "expected run" : "choice",
                     o.run_config().epochs, o.longest_trial_epochs,
                     a.query.confidence > 0 ? ", and the interval there is as wide as the model's misses on its latest "
                                        "samples when fitted without them"
                                      : "");
}

// The warning for a run shorter than every trial: its metric is the model's extrapolation back in epochs.
void print_before_shortest_trial(std::ostream& out, const app::PlanOutcome& o) {
  out << fmt::format("  the {} runs {} epoch{}, fewer than any trial or learning-curve point measured ({:g}): its "
                     "metric is the model's extrapolation back in epochs, where a learning curve is steepest; "
                     "profile shorter trials, or keep each trial's learning curve, to plan on measurements\n",
                     o.stops_at_target() ? "expected run" : "choice", o.run_config().epochs,
                     o.run_config().epochs == 1 ? "" : "s", o.shortest_trial_epochs);
}

// The next-best runs: by expected cost with --early-stop, else by cost.
void print_alternatives(std::ostream& out, const app::PlanOutcome& o) {
  if (o.stops_at_target() && !o.result.alternatives.empty()) {
    out << "alternatives (by expected cost):\n";
    out << fmt::format("  {:>4} {:>6} {:>7} {:>7} {:>9} {:>12} {:>13} {:>8}\n", "rank", "batch", "workers", "budget",
                       "expected", "expected_s", "expected_w_s", "vs_best");
    int rank = 2;
    const double best = o.result.expected.front().cost;
    for (size_t i = 0; i < o.result.alternatives.size(); ++i) {
      const auto& budget = o.result.alternatives[i];
      const auto& expected = o.result.expected.at(i + 1);
      out << fmt::format("  {:>4} {:>6} {:>7} {:>7} {:>9} {:>12.1f} {:>13.1f} {:>+7.1f}%\n", rank++,
                         budget.config.batch, budget.config.workers, budget.config.epochs, expected.config.epochs,
                         expected.total_time_s, expected.cost, 100.0 * (expected.cost / best - 1.0));
    }
  } else if (!o.result.alternatives.empty()) {
    const auto& b = o.result.best;
    out << "alternatives:\n";
    out << fmt::format("  {:>4} {:>6} {:>7} {:>6} {:>10} {:>10} {:>10} {:>12} {:>8}\n", "rank", "batch", "workers",
                       "epochs", "epoch_s", "total_s", "metric", "cost_w_s", "vs_best");
    int rank = 2;
    for (const auto& c : o.result.alternatives)
      out << fmt::format("  {:>4} {:>6} {:>7} {:>6} {:>10} {:>10} {:>10.5g} {:>12} {:>+7.1f}%\n", rank++,
                         c.config.batch, c.config.workers, c.config.epochs, seconds_text(c.epoch_time_s),
                         seconds_text(c.total_time_s), c.metric, seconds_text(c.cost), 100.0 * (c.cost / b.cost - 1.0));
  }
}

// The text report of the plan, in the order a reader checks it.
void print_report(std::ostream& out, const PlanArgs& a, const app::PlanOutcome& o) {
  print_choice(out, a, o);
  if (o.stops_at_target()) print_early_stop_run(out, a, o);
  else print_predictions(out, a, o);
  if (!o.evidence.empty()) print_evidence(out, o);
  if (o.past_longest_trial()) print_past_longest_trial(out, a, o);
  if (o.before_shortest_trial()) print_before_shortest_trial(out, o);
  if (o.past_most_workers())
    out << fmt::format("  the {} runs {} workers, past the most any sample ran ({}): its epoch time is the time model's "
                       "extrapolation in workers, which cross-validation over the sampled counts does not test{}; "
                       "profile with --workers up to {} to plan on measurements\n",
                       o.stops_at_target() ? "expected run" : "choice", o.run_config().workers, o.most_workers_sampled,
                       a.query.confidence > 0 ? ", and the interval does not widen for it" : "", o.run_config().workers);
  if (o.batch_past_dataset())
    out << fmt::format("  the {} has a global batch of {} (batch {} x {} workers), more than the {} examples an epoch "
                       "passes over: each epoch is one short step, which no trial measured; lower --batches or "
                       "--max-workers\n",
                       o.stops_at_target() ? "expected run" : "choice",
                       long(o.run_config().batch) * o.run_config().workers, o.run_config().batch,
                       o.run_config().workers, *o.dataset_size);
  print_alternatives(out, o);
  if (a.query.frontier) {
    // How the cost moves with the deadline: a little more time may buy a much
    // cheaper run, and a tighter deadline shows its price.
    out << fmt::format("cost against deadline (the cheapest run for each deadline, all {} cells, on {}):\n",
                       o.batches.size() * o.query.max_workers, o.model_name);
    out << plan::frontier_table(o.frontier, a.query.deadline);
  }
}

app::PlanQuery plan_query(const PlanArgs& a);

// --gpu --frontier: with prices, for each deadline the cheapest GPU and run
// over every GPU (money is comparable across GPUs); without, each GPU's own
// frontier in GPU-seconds.
void print_gpu_frontier(std::ostream& out, const app::GpuComparison& c, double deadline) {
  if (c.frontier.empty()) {
    out << "cost against deadline on each GPU (the cheapest run there for each deadline; cost_w_s is GPU-seconds, "
           "--price compares GPUs):\n";
    for (const auto& g : c.plans) {
      out << fmt::format("{}{}:\n", g.gpu, g.frontier.empty() ? ": no run reaches the target within the epochs" : "");
      if (!g.frontier.empty()) out << plan::frontier_table(g.frontier, deadline);
    }
    return;
  }
  // The point in effect at the deadline: the last one that finishes by it.
  const app::GpuFrontierPoint* at = nullptr;
  for (const auto& p : c.frontier)
    if (p.run.total_time_s <= deadline) at = &p;
  size_t width = 3;
  for (const auto& g : c.plans) width = std::max(width, g.gpu.size());
  out << "cost against deadline, every GPU (for each deadline the cheapest GPU and run):\n";
  out << fmt::format("  {:>12} {:<{}} {:>6} {:>7} {:>6} {:>10} {:>10} {:>10}{}\n", "deadline_s>=", "gpu", width, "batch",
                     "workers", "epochs", "metric", "GPU-hours", "cost", at ? fmt::format(" {:>10}", "vs_deadline") : "");
  for (const auto& p : c.frontier) {
    const auto& r = p.run;
    out << fmt::format("  {:>12.4g} {:<{}} {:>6} {:>7} {:>6} {:>10.5g} {:>10.4g} {:>10.4g}", plan::ceil_significant(r.total_time_s),
                       c.plans[p.plan].gpu, width, r.config.batch, r.config.workers, r.config.epochs, r.metric,
                       r.cost / 3600.0, p.cost);
    if (at) out << fmt::format(" {:>+9.1f}%", 100.0 * (p.cost / at->cost - 1.0));
    if (&p == at) out << "  <- deadline";
    out << "\n";
  }
}

// --gpu: the same job planned on each GPU, one line each; the JSON holds every
// GPU's whole plan. Exit 3 only when no GPU has a plan.
void run_on_gpus(const PlanArgs& a) {
  if (a.from_gpu.empty())
    throw InputError("", 0, "--from-gpu", "--gpu plans on other GPUs than the samples were measured on: say which "
                                          "GPU measured them (--from-gpu NAME, the GPU of the samples' hardware column)");
  for (const auto& [given, name] : {std::pair{!a.hardware.empty(), "--hardware"}, {!a.query.emit.empty(), "--emit"},
                                    {a.query.early_stop, "--early-stop"}})
    if (given)
      throw InputError("", 0, name,
                       "plans one GPU's samples: with --gpu, plan on the moved samples instead (trainplan transfer "
                       "--samples ... -o OUT.csv, then plan --samples OUT.csv --hardware GPU), or drop it");
  auto from = io::resolve_hardware(a.from_gpu, "--from-gpu");
  from.gpu.fp32_matmul_tf32 = a.tf32;
  const auto names = comma_list(a.gpu, "--gpu");
  std::vector<structure::HardwareProfile> gpus;
  for (const auto& n : names) {
    gpus.push_back(io::resolve_hardware(n, "--gpu"));
    gpus.back().gpu.fp32_matmul_tf32 = a.tf32;
    for (size_t i = 0; i + 1 < gpus.size(); ++i)
      if (gpus[i].name == gpus.back().name)
        throw InputError("", 0, "--gpu", fmt::format("'{}' and '{}' are the same GPU ({})", names[i], n, gpus[i].name));
  }
  std::vector<double> prices = prices_for(a.price, names, gpus);
  if (a.price.empty()) prices.clear();
  if (!a.plot.empty()) io::check_plot_path(a.plot, {{a.samples, "--samples"}}), io::require_gnuplot();
  SampleSet samples = read_samples_noted(a.samples);
  apply_dataset_size(samples, a.dataset_size, a.samples);
  if (!a.metric_range.empty()) samples.declared_metric_range = parse_metric_range(a.metric_range, "--metric-range");
  samples.check_declared_metric_range(a.metric_range.empty() ? "metric_range" : "--metric-range", a.query.target);
  // GPU=FILE: the samples timed there, read as any samples are; the GPU as --gpu names it.
  std::map<std::string, SampleSet> trials;
  if (!a.trials.empty())
    for (const auto& item : comma_list(a.trials, "--trials")) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
        throw InputError("", 0, "--trials", fmt::format("'{}' is not GPU=FILE (samples timed on that GPU)", item));
      const auto hw = io::resolve_hardware(item.substr(0, eq), "--trials");
      if (trials.count(hw.name)) throw InputError("", 0, "--trials", fmt::format("{} is given twice", hw.name));
      SampleSet timed = profile::read_samples(item.substr(eq + 1));
      apply_dataset_size(timed, a.dataset_size, item.substr(eq + 1));
      trials.emplace(hw.name, std::move(timed));
    }
  app::PlanQuery q = plan_query(a);
  q.frontier = a.query.frontier || !a.plot.empty();  // the picture is the GPUs' frontiers
  const auto c =
      app::plan_on_gpus(samples, from, gpus, prices, q, model_params(a.comm_profile), trials, a.precision);
  // Drawn after the answer is printed, so that a chart that fails loses no answer; with no run
  // meeting the target on any GPU there is no frontier to draw.
  const bool draw = !a.plot.empty() && std::any_of(c.plans.begin(), c.plans.end(),
                                                   [](const app::GpuPlan& g) { return !g.frontier.empty(); });
  if (!a.plot.empty() && !draw)
    std::cerr << "note: no chart: no GPU has a run that meets the target, so there is no frontier to draw\n";
  auto draw_chart = [&] {
    if (!draw) return;
    std::cout.flush();
    io::render_plot(a.plot, {app::gpu_frontier_panel(c, a.query.deadline)});
    std::cerr << fmt::format("plot of each GPU's cost against the deadline -> {}\n", a.plot);
  };
  const std::string none_qualifies = "no GPU in --gpu has a configuration that meets both constraints";
  if (a.json) {
    nlohmann::json j = app::to_json(c, a.samples);
    // The whole answer, each GPU's reason in it, with the failure's fields a script reads on any verb.
    if (!c.fastest)
      j["error"] = none_qualifies + " (each GPU's reason is its entry's \"infeasible\")", j["exit_code"] = kExitInfeasible,
      j["infeasible"] = true;
    std::cout << io::json_text(j) << "\n";
    note_json_answer_printed();
  } else {
    std::cout << fmt::format("{}: measured on {}; on every other GPU the epoch times are predicted from them "
                             "(trainplan transfer --samples{}){}; target {} {}, deadline {:.4g} s{}\n",
                             a.samples, c.from, trials.empty() ? ", no trial there" : ", corrected by the --trials given",
                             a.query.confidence > 0 ? ", and the confidence adds that error to the bounds" : "",
                             comparison(samples.direction), a.query.target, a.query.deadline,
                             a.query.confidence > 0 ? fmt::format(", confidence {}", a.query.confidence) : "");
    // What each move says, once for the GPUs that say the same.
    std::map<std::string, std::vector<std::string>> said;
    for (const auto& g : c.plans)
      for (const auto& n : g.notes) said[n].push_back(g.gpu);
    for (const auto& [n, on] : said) std::cerr << fmt::format("note ({}): {}\n", fmt::join(on, ", "), n);
    for (const auto& g : c.plans)
      if (g.outcome && g.outcome->past_longest_trial())
        std::cerr << fmt::format("note ({}): the run goes past the longest trial ({:g} epochs): the metric there is the "
                                 "model's extrapolation\n",
                                 g.gpu, g.outcome->longest_trial_epochs);
    for (const auto& g : c.plans)
      if (g.outcome && g.outcome->before_shortest_trial())
        std::cerr << fmt::format("note ({}): the run is shorter than any trial ({:g} epochs): the metric there is the "
                                 "model's extrapolation back in epochs\n",
                                 g.gpu, g.outcome->shortest_trial_epochs);
    for (const auto& g : c.plans)
      if (g.outcome && !g.outcome->confidence_caveat.empty()) {
        std::cerr << "note: " << g.outcome->confidence_caveat << "\n";
        break;  // the samples' metric, the same on every GPU
      }
    size_t width = 14;
    for (const auto& g : c.plans) width = std::max(width, g.gpu.size());
    const bool priced = !prices.empty();
    std::cout << fmt::format("{:<{}} {:>7} {:>7} {:>5} {:>7} {:>10} {:>10} {:>9} {:>16}{}\n", "gpu", width, "batch", "workers",
                             "nodes", "epochs", "time_s", "GPU-hours", "metric", "epoch times",
                             priced ? fmt::format(" {:>9} {:>10}", "price", "cost") : "");
    for (const auto& g : c.plans) {
      if (!g.outcome) {
        // The reason and the constraint that fails: the first two lines of plan's own diagnosis.
        std::istringstream why(g.infeasible);
        std::string reason, constraint;
        std::getline(why, reason), std::getline(why, constraint);
        std::cout << fmt::format("{:<{}} no plan{}: {}{}\n", g.gpu, width,
                                 g.trials ? fmt::format(" ({} timed)", g.trials) : "", reason,
                                 constraint.empty() ? "" : "; " + constraint);
        continue;
      }
      const auto& b = g.outcome->result.best;
      std::cout << fmt::format("{:<{}} {:>7} {:>7} {:>5} {:>7} {:>10.4g} {:>10.4g} {:>9.4g} {:>16}{}\n", g.gpu, width,
                               b.config.batch, b.config.workers, b.nodes, b.config.epochs, b.total_time_s, g.gpu_hours(),
                               b.metric,
                               g.measured ? std::string("measured")
                                          : fmt::format("{}x/{:.2f}", g.trials ? fmt::format("{} timed, ", g.trials) : "",
                                                        std::exp(scoring::kZ80 * g.times_log_sd.value_or(0))),
                               priced ? fmt::format(" {:>9.4g} {:>10.4g}", g.price_per_gpu_hour, g.cost()) : "");
    }
    std::cout << "epoch times: measured, or predicted with 80% of such errors within x/F (one error shared by every "
                 "configuration on that GPU)\n";
    std::vector<std::string> names_planned;
    std::vector<std::optional<double>> costs, times;
    for (const auto& g : c.plans) {
      names_planned.push_back(g.gpu);
      costs.push_back(g.outcome ? std::optional(g.cost()) : std::nullopt);
      times.push_back(g.outcome ? std::optional(g.outcome->result.best.total_time_s) : std::nullopt);
    }
    if (c.cheapest)
      std::cout << "cheapest: "
                << best_and_gaps(names_planned, costs, *c.cheapest, fmt::format("cost {:.4g}", *costs[*c.cheapest])) << "\n";
    if (c.fastest)
      std::cout << "fastest: "
                << best_and_gaps(names_planned, times, *c.fastest, fmt::format("{:.4g} s", *times[*c.fastest])) << "\n";
    const auto planned = std::count_if(c.plans.begin(), c.plans.end(), [](const auto& g) { return bool(g.outcome); });
    const bool moved = std::any_of(c.plans.begin(), c.plans.end(), [](const auto& g) { return g.outcome && !g.measured; });
    if (planned > 1 && moved)
      std::cout << "(a gap smaller than a moved GPU's x/F is within the move's error: a configuration timed there "
                   "(--trials) tells)\n";
    if (!priced && planned > 1)
      std::cout << "(GPU-hours of different GPUs cost differently: --price t4=P,a100-40gb=Q adds each plan's cost and "
                   "names the cheapest)\n";
    if (a.query.frontier) print_gpu_frontier(std::cout, c, a.query.deadline);
  }
  draw_chart();
  if (!c.fastest)
    throw InfeasibleError(none_qualifies + (a.json ? " (each GPU's reason is in the JSON answer)" : " (each GPU's reason is above)"));
}

app::PlanQuery plan_query(const PlanArgs& a) {
  app::PlanQuery q = a.query;
  q.bounds = uncertainty::parse_confidence_bounds(a.bounds);
  q.early_stop_budget = plan::parse_early_stop_budget(a.early_stop_budget);
  return q;
}

void run_plan(const PlanArgs& a) {
  if (!a.gpu.empty()) return run_on_gpus(a);
  if (!a.price.empty()) throw InputError("", 0, "--price", "prices the plans of --gpu: give --gpu (and --from-gpu)");
  if (!a.trials.empty())
    throw InputError("", 0, "--trials", "corrects the move to a GPU of --gpu: give --gpu (and --from-gpu)");
  if (a.tf32) throw InputError("", 0, "--tf32", "says how the GPUs of --gpu run fp32 dense layers: give --gpu");
  if (a.precision.profiled != models::Precision::kAuto)
    throw InputError("", 0, "--precision", "says what the training ran in, for moving it to the GPUs of --gpu: give --gpu");
  if (a.precision.target != models::Precision::kAuto)
    throw InputError("", 0, "--target-precision",
                     "says what the training will run in on the GPUs of --gpu it is moved to: give --gpu");
  if (!a.from_gpu.empty())
    throw InputError("", 0, "--from-gpu", "says where the samples were measured for --gpu: give --gpu too");
  const models::ModelParams params = model_params(a.comm_profile, a.hardware);
  if (!a.plot.empty()) io::check_plot_path(a.plot, {{a.samples, "--samples"}}), io::require_gnuplot();
  SampleSet samples = read_samples_noted(a.samples);
  apply_dataset_size(samples, a.dataset_size, a.samples);
  if (!a.metric_range.empty()) samples.declared_metric_range = parse_metric_range(a.metric_range, "--metric-range");
  samples.check_declared_metric_range(a.metric_range.empty() ? "metric_range" : "--metric-range", a.query.target);
  app::ModelSource src(std::move(samples), params);
  const app::PlanQuery q = plan_query(a);
  app::Progress progress;
  progress.choosing = [](const std::string& m) { std::cerr << m << "\n"; };
  const app::PlanOutcome o = app::make_plan(src, q, progress);
  // Drawn after the answer is printed, so that a chart that fails loses no answer.
  if (a.json) {
    std::cout << io::json_text(app::to_json(o, a.samples)) << "\n";
    note_json_answer_printed();  // a chart that fails after it adds no second document
  } else {
    // With --emit the launch spec goes to stdout (to redirect into a file), the summary to stderr.
    print_report(o.launch.empty() ? std::cout : std::cerr, a, o);
    if (!o.launch.empty()) std::cout << o.launch;
  }
  if (!a.plot.empty()) {
    std::cout.flush();
    auto panels = plan::plan_panels(*o.model, *o.point_model, o.problem, o.result.best);
    if (a.query.frontier && !o.frontier.empty()) panels.push_back(plan::frontier_panel(o.frontier, a.query.deadline));
    io::render_plot(a.plot, panels);
    std::cerr << fmt::format("plot of the cost landscape and the chosen run's metric -> {}\n", a.plot);
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<PlanArgs>();
  auto* cmd = root.add_subcommand(
      "plan",
      "Choose per-worker batch, workers and epochs that meet a metric target and a deadline at the least\n"
      "cost in worker-seconds (equation 11 of the co-configuration paper), from profiling samples.\n"
      "Exit 3 with diagnostics when no configuration meets both constraints.");
  cmd->add_option("--samples", a->samples, "Profiling sample CSV (see `trainplan sample`), with a metric column")
      ->required();
  cmd->add_option("--target", a->query.target, "Metric target (>= for a metric to maximise, <= for one to minimise)")
      ->required();
  add_duration_option(cmd, "--deadline", a->query.deadline, "Wall-clock limit for the whole run")->required();
  cmd->add_option("--max-workers", a->query.max_workers,
                  "Largest worker (GPU) count to consider; workers run 1..R (default, or 0: the largest in the samples)");
  cmd->add_option("--method", a->query.method, "coconfig (the paper's method) or a baseline: lb-bsp, cynthia, bo, manual")
      ->check(CLI::IsMember(plan::planner_names()))
      ->capture_default_str();
  cmd->add_option("--search", a->query.search,
                  "Search for coconfig: auto (exhaustive when batches x workers <= 2^20 cells, else tabu), tabu "
                  "(Algorithm 2 of the paper) or exhaustive (exact)")
      ->check(CLI::IsMember({"auto", "tabu", "exhaustive"}))
      ->capture_default_str();
  cmd->add_option("--model", a->query.model,
                  "Registered model for both parts, or 'auto': per part, the lowest 5-fold CV MRE on the samples")
      ->capture_default_str();
  cmd->add_option("--time-model", a->query.time_model, "Epoch-time model (overrides --model for time)");
  cmd->add_option("--metric-model", a->query.metric_model, "Metric model (overrides --model for the metric)");
  cmd->add_option("--batches", a->query.batches, "Candidate per-worker batches, whole numbers, e.g. 16,32,64 (default: those in the samples)")
      ->check(positive_number())
      ->delimiter(',');
  cmd->add_option("--gpus-per-node", a->query.gpus_per_node,
                  "Workers per node; nodes = ceil(r / N) (default: the node of --hardware when given, else the most workers "
                  "any sample ran on one node, as predict packs them, else 0 = unknown)")
      ->check(non_negative_number());
  cmd->add_option("--max-epochs", a->query.max_epochs, "Largest epoch count to consider")->capture_default_str()->check(positive_number());
  cmd->add_option("--alternatives", a->query.alternatives, "Next-best configurations to list (0 to 1000)")->capture_default_str()->check(non_negative_number());
  cmd->add_option("--seed", a->query.seed, "Seed for tabu search, bo and manual, and --confidence's conformal folds")->capture_default_str()->check(seed_number());
  cmd->add_option("--tabu-iterations", a->query.tabu_iterations, "Tabu search moves (NG)")->capture_default_str()->check(positive_number());
  cmd->add_option("--tabu-tenure", a->query.tabu_tenure, "Tabu list length")->capture_default_str()->check(positive_number());
  cmd->add_option("--manual-tries", a->query.manual_tries, "Random tries of the manual baseline")->capture_default_str()->check(positive_number());
  cmd->add_option("--confidence", a->query.confidence,
                  "Plan on the pessimistic side of the models' prediction intervals at this coverage (0<P<1), "
                  "held to the samples' own trials of each configuration (never worse than a trial reached within "
                  "the epochs, never better than a longer trial reached, and short of a longer trial by as much as "
                  "the model overshot that trial); implies --conformal [default: 0, the point predictions]");
  cmd->add_option("--bounds", a->bounds,
                  "How --confidence P reads the intervals: two-sided (the ends of each part's two-sided P interval; "
                  "both constraints together hold with about P for symmetric errors) or one-sided (each part's "
                  "one-sided P bound on signed residuals: each constraint holds with >= P on its own, both with "
                  ">= 2P - 1)")
      ->check(CLI::IsMember({"two-sided", "one-sided"}))
      ->capture_default_str();
  cmd->add_flag("--early-stop", a->query.early_stop,
               "The run stops as soon as the validation metric meets the target: the epochs become a budget "
               "(enough on the planned side, with --confidence the pessimistic one) and cells are ranked by the "
               "point model's expected cost (coconfig only; exhaustive)");
  cmd->add_option("--early-stop-budget", a->early_stop_budget,
                  "With --early-stop, the epochs a run may use: deadline (as many as the deadline allows on the "
                  "planned side; the run still stops at the target, so this costs more only when the target comes "
                  "late) or target (the planned side's epochs to the target)")
      ->check(CLI::IsMember({"target", "deadline"}))
      ->capture_default_str();
  cmd->add_flag("--conformal", a->query.conformal,
               "Wrap both models in 5-fold conformal prediction intervals (implied by --confidence)");
  cmd->add_option("--dataset-size", a->dataset_size,
                  "Training examples per epoch, for samples that do not say it (their dataset_size; --gpu needs it to "
                  "move them) or say it wrongly [default: the samples' dataset_size]")
      ->check(positive_number());
  cmd->add_flag("--frontier", a->query.frontier,
               "Also list the cost against the deadline: for every deadline, the cheapest run that meets the "
               "target by then (exact over all cells, on the planned model; not with --early-stop); with --gpu and "
               "--price, the cheapest GPU and run for every deadline, over every GPU");
  cmd->add_option("--emit", a->query.emit, "Print a launch spec for the choice: torchrun, slurm (sbatch) or k8s (PyTorchJob)")
      ->check(CLI::IsMember({"torchrun", "slurm", "k8s"}));
  cmd->add_option("--train-cmd", a->query.train_cmd,
                  "Training command for --emit, a template in profile --cmd's syntax: {batch} {workers} {epochs} "
                  "{nodes} take the plan's values; with {rank} (or {master_addr}, {master_port}) it is started once "
                  "per rank, else torchrun starts the script (docs/PLANNING.md, \"Launching the plan\")")
      ->capture_default_str();
  cmd->add_flag("--no-gpus", a->query.no_gpus, "--emit for a CPU cluster: request no GPUs (the ranks are processes)");
  cmd->add_option("--job-name", a->query.job_name, "Job name for --emit slurm|k8s")->capture_default_str();
  cmd->add_option("--image", a->query.image, "Container image for --emit k8s")->capture_default_str();
  add_comm_profile_option(cmd, a->comm_profile);
  add_hardware_option(cmd, a->hardware);
  cmd->add_option("--gpu", a->gpu,
                  "Plan on each of these GPUs (catalog names or hardware files, comma-separated): what if we had "
                  "other GPUs. The samples, measured on --from-gpu, are moved to every other GPU first, as "
                  "`trainplan transfer --samples` moves them (no trial there; a confidence adds the move's error)");
  cmd->add_option("--from-gpu", a->from_gpu, "With --gpu: the GPU the samples were measured on");
  add_tf32_option(cmd, a->tf32);
  add_transfer_precision_options(cmd, a->precision);
  cmd->add_option("--trials", a->trials,
                  "With --gpu: GPU=FILE[,GPU=FILE...], samples timed on a GPU of --gpu (a CSV or a profile store) "
                  "that correct its move, as transfer --samples --trials does");
  cmd->add_option("--price", a->price,
                  "With --gpu: a GPU-hour's price, one number for all or NAME=PRICE for each (t4=0.53,a100-40gb=3.7); "
                  "each plan's cost is its GPU-hours times its price, and the cheapest is named");
  add_metric_range_option(cmd, a->metric_range);
  cmd->add_flag("--json", a->json, "Print the plan as JSON");
  cmd->add_option("--plot", a->plot,
                  "Draw the plan with gnuplot (.png or .svg): the cost against workers of the runs that can meet the "
                  "target by the deadline, for up to 6 batches spread over the candidates and the chosen one, and the chosen run's predicted metric against epochs; with --frontier, also "
                  "the cheapest run's cost against the deadline; with --gpu, each GPU's cheapest run against the "
                  "deadline (its frontier) and its plan");
  cmd->callback([a, cmd] {
    // An option the plan asked for does not read is refused, as a misplaced one would otherwise pass unread.
    app::check_plan_options_read(a->query,
                                 [&](const std::string& option) { return cmd->get_option(option)->count() > 0; });
    run_plan(*a);
  });
}

CommandRegistrar reg(40, setup);

}  // namespace
}  // namespace trainplan::cli
