// trainplan demo: the whole path on the reference workload, in about a
// minute on a 2-core machine: profile a small plan with the real
// trainer, fit the models, plan, and print the recommendation.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "app/planning_model.h"
#include "app/search_space.h"
#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "io/json_text.h"
#include "scoring/evaluate.h"
#include "io/output_path.h"
#include "io/gnuplot.h"
#include "io/sample_csv.h"
#include "models/performance_model.h"
#include "models/registry.h"
#include "scoring/model_choice.h"
#include "plan/plan_plot.h"
#include "plan/planner.h"
#include "profile/builtin_workload.h"
#include "profile/trainer_fork_server.h"
#include "profile/interrupt.h"
#include "profile/profile_plan.h"
#include "profile/profiler.h"
#include "profile/live_log.h"

namespace trainplan::cli {
namespace {

using namespace trainplan::profile;

struct DemoArgs {
  std::string workload = "lenet-mnist";
  std::string trainer;
  std::string data_dir;
  long train_subset = 6000;
  long test_subset = 2000;
  std::string batches = "32,64,128";
  std::string workers = "1,2";
  std::string epochs = "1,2,3";
  std::string budget = "150s";
  std::string step_clock = "auto";
  double time_trial_s = 1;  // seconds of timed steps per time-trial run at most
  int time_repeats = 2;     // runs of each time trial (a third when they disagree)
  bool repeats_back_to_back = false;  // each time trial's repeats in a row, not in rounds
  bool time_batches_apart = false;    // each time trial in runs of its own
  std::string store = "trainplan-demo.db";
  std::string out = "trainplan-demo.csv";
  std::string plot = "trainplan-demo-plan.png";  // "" : no chart
  double target = 0;  // 0: 99% of the best predicted metric
  double deadline = 600;
  int max_workers = 0;  // 0: the largest profiled
  int max_epochs = 20;
  // The time model with the lowest cross-validated error on the demo's own
  // trials (auto), and the global-batch metric model, which uses r (the
  // paper's f2 ignores it). --model auto picks the metric model by CV too.
  std::string time_model = "auto";
  std::string metric_model = "global-batch";
  std::string model;  // set: both parts
  bool json = false;
};

// Step 1's outcome: the grid profiled, the samples (written to --out) and
// the metric's name.
struct Profiled {
  GridSpec grid;
  SampleSet samples;  // one per trial, and one per earlier epoch of a training trial's curve
  int ok_trials = 0;
  std::string metric_name = "metric";
  // "cpu" when a time trial was timed by the CPU clock, "cpu+wall" when
  // others (with peers) by the wall's.
  std::string step_clock = "wall";
};

// Step 1: profiles the demo's grid under the budget, reusing the trials
// already in --store, and writes the samples to --out. Exits 130 when
// interrupted (the finished trials stay in the store).
Profiled profile_step(const DemoArgs& a) {
  BuiltinWorkloadOptions builtin{a.trainer, a.data_dir, a.train_subset, a.test_subset, 1};
  std::string text = builtin_template(a.workload, builtin);
  CommandTemplate tmpl(text);
  builtin.time_only = true;
  builtin.max_timed_s = a.time_trial_s;
  const auto clock = parse_step_clock(a.step_clock);
  if (!clock) throw InputError("", 0, "--step-clock", "must be auto, wall or cpu, got '" + a.step_clock + "'");
  builtin.step_clock = to_string(*clock);  // the trainer resolves auto per trial, as the profiler reads it
  Profiled out;
  out.grid = normalise({parse_int_list(a.batches, "--batches"), parse_int_list(a.workers, "--workers"),
                        parse_int_list(a.epochs, "--epochs")});
  const GridSpec& grid = out.grid;
  ProfileOptions opts;
  opts.step_clock = *clock;
  opts.time_repeats = a.time_repeats;
  opts.time_rounds = !a.repeats_back_to_back;
  opts.time_batches_together = !a.time_batches_apart;
  opts.time_template = CommandTemplate(builtin_template(a.workload, builtin));
  opts.budget_s = parse_duration(a.budget, "--budget");
  opts.trial_timeout_s = std::max(60.0, *opts.budget_s);
  opts.cancel = &install_interrupt_handler();
  // A demo run again after a failure (its data fetched, a trainer mended)
  // reruns the trials that failed rather than finding them done.
  opts.retry_failed = true;
  SampleStore store(a.store);
  store.lock_for_profiling();
  bind_store(store, text, a.workload, opts.launch, "", opts.time_template ? opts.time_template->text() : "");
  // The built-in trainer's first k epochs are a k-epoch run (constant
  // learning rate, shuffles seeded by the epoch): one training trial per
  // global batch, the shorter epoch counts read off its curve.
  store.set_meta(SampleStore::kCurveEpochsKey, "1");
  // What `watch --store` follows, as for `trainplan profile`.
  LiveLog live(live_log_path(a.store));
  opts.live_log = &live;
  std::cerr << fmt::format(
      "step 1/3: profiling {} with trainplan-train ({} training images, {} test images; b in {{{}}}, r in {{{}}}: a time "
      "trial of each, then a training trial of e = {} per global batch b*r, whose learning curve gives e in "
      "{{{}}}; budget {}; store {})\n",
      a.workload, a.train_subset > 0 ? std::to_string(a.train_subset) : "all",
      a.test_subset > 0 ? std::to_string(a.test_subset) : "all", fmt::join(grid.batches, ","),
      fmt::join(grid.workers, ","), grid.epochs.back(), fmt::join(grid.epochs, ","), format_duration(*opts.budget_s),
      a.store);
  Progress progress(stderr, stderr_is_tty());
  // Each run forks from one loaded trainer (no libtorch load per launch).
  TrainerForkServer forks(builtin.trainer);
  opts.launch.wrap = forks.wrap();
  ProfileSummary s = run_profile(tmpl, time_and_global_batch_plan(grid, /*longest_only=*/true), store, opts, progress);
  if (s.interrupted) {
    std::cerr << fmt::format("interrupted; finished trials are kept in {}: run `trainplan demo` again to resume\n", a.store);
    std::cout.flush();
    forks.stop();  // std::exit runs no destructor of this frame
    std::exit(130);
  }
  if (!s.store_error.empty())
    throw ExternalError(s.store_error + "; the trials stored before it are kept: once the store can be written again "
                                        "(free some space), run `trainplan demo` again to resume");
  out.samples = store.samples();
  bool cpu = false, wall = false;  // the clocks the trials' steps were timed by
  for (const auto& r : store.trials()) {
    cpu |= r.timing && r.timing->clock == "cpu";
    wall |= r.timing && r.timing->clock == "wall";
    if (r.status == TrialStatus::kOk) ++out.ok_trials;
  }
  out.step_clock = cpu && wall ? "cpu+wall" : cpu ? "cpu" : "wall";
  const SampleSet& samples = out.samples;
  std::cerr << fmt::format("  {} ok trials ({} this run, {} failed) in {}: {} samples\n", out.ok_trials, s.ok,
                           s.failed + s.timeout + s.bad_output, format_duration(s.wall_s), samples.size());
  // Each failure with the last line its processes wrote, each such line once
  // (a trainer without its data fails every trial alike).
  std::set<std::string> shown;
  for (const auto& r : store.trials()) {
    if (r.status == TrialStatus::kOk) continue;
    std::cerr << fmt::format("  {}: {}\n", to_string(r.key), describe_result(r));
    if (auto l = stderr_last_line(r.stderr_tail); !l.empty() && shown.insert(l).second)
      std::cerr << fmt::format("      stderr: {}\n", l);
  }
  if (samples.size() < 2 || !samples.has_metric()) {
    const std::string list = "`trainplan samples list --store " + shell_word(a.store) + " --failed`";
    // Trials that failed say why above; a budget too small for two trials is the other cause.
    if (s.failed + s.timeout + s.bad_output > 0)
      throw ExternalError(fmt::format("{}: too few ok trials to fit the models: {} trials of this run failed (their "
                                      "last stderr lines above; {} has each one's whole tail)",
                                      a.store, s.failed + s.timeout + s.bad_output, list));
    throw InputError(a.store, 0, "", "too few ok trials to fit the models; see " + list + ", or give a larger --budget");
  }
  // Again: another profile may have made a store of that path while these trials ran.
  io::check_output_path(a.out, "--out",
                        {{a.store, "--store"}, {profile::live_log_path(a.store), "--store's live log"}});
  io::write_samples_csv(a.out, samples);
  for (const auto& r : store.trials())
    if (r.status == TrialStatus::kOk && !r.metric_name.empty()) out.metric_name = r.metric_name;
  return out;
}

// Step 2's outcome: the chosen models fitted to the samples, and how far to
// trust the recommendation: each chosen part's error on trials it did not
// see. The demo's handful of configurations are cross-validated leaving one
// out (scoring::kFoldsAuto), so the figure does not depend on the order the
// trials were stored in; `trainplan evaluate --cv N` reproduces it.
struct Fitted {
  scoring::ModelChoice choice;
  std::shared_ptr<models::FittedPerformanceModel> model;
  std::optional<double> time_cv, metric_cv;
  int time_folds = 0, metric_folds = 0;
};

// Step 2: fits the models named (or, with auto, chosen by cross-validation).
Fitted fit_step(const DemoArgs& a, const SampleSet& samples) {
  std::string tname = a.model.empty() ? a.time_model : a.model;
  std::string mname = a.model.empty() ? a.metric_model : a.model;
  std::cerr << fmt::format("step 2/3: fitting the models (time {}, metric {})\n", tname, mname);
  Fitted f;
  f.choice = scoring::choose_models(tname, mname, samples, scoring::kFoldsAuto);
  f.model = models::fit_performance_model(f.choice.time_model, f.choice.metric_model, samples);
  scoring::EvalOptions cv;
  cv.cv_folds = scoring::kFoldsAuto;
  f.time_folds = scoring::cv_folds_for(scoring::part_configs(scoring::ModelPart::kTime, samples), cv.cv_folds);
  f.metric_folds = scoring::cv_folds_for(scoring::part_configs(scoring::ModelPart::kMetric, samples), cv.cv_folds);
  // (Already computed when "auto" chose the part.)
  f.time_cv = f.choice.time_cv ? f.choice.time_cv
                               : scoring::part_cv_mre(f.choice.time_model, scoring::ModelPart::kTime, samples, cv);
  f.metric_cv = f.choice.metric_cv
                    ? f.choice.metric_cv
                    : scoring::part_cv_mre(f.choice.metric_model, scoring::ModelPart::kMetric, samples, cv);
  return f;
}

// The best metric the model predicts anywhere in p's space, in the samples'
// direction; none where it predicts nothing.
std::optional<double> best_predicted_metric(const models::PerformanceModel& m, const plan::PlanProblem& p,
                                            const SampleSet& samples) {
  std::optional<double> best;
  for (int bt : p.space.batches)
    for (int r = 1; r <= p.space.max_workers; ++r) {
      if (p.space.diverged.count({bt, r})) continue;
      for (int e = 1; e <= p.space.max_epochs; ++e)
        if (auto v = m.metric(bt, r, e); v && (!best || samples.better(*v, *best))) best = v;
    }
  return best;
}

// Step 3's problem: the profiled batches, the deadline, and the target. The
// default target is 99% of the best metric the fitted model predicts
// anywhere in the space: reachable by construction, and close to the best
// this workload can do here (a target above what the model can predict
// would only show the infeasibility report).
plan::PlanProblem plan_problem(const DemoArgs& a, const Profiled& prof, const models::PerformanceModel& m) {
  plan::PlanProblem p;
  p.deadline_s = a.deadline;
  p.space.batches = prof.grid.batches;
  p.space.max_workers = a.max_workers > 0 ? a.max_workers : prof.grid.workers.back();
  p.space.max_epochs = a.max_epochs;
  p.space.diverged = app::diverged_cells(prof.samples);
  bool maximise = prof.samples.direction == MetricDirection::kMax;
  const std::optional<double> best = best_predicted_metric(m, p, prof.samples);
  if (!best) throw InputError(a.store, 0, "metric", "the metric model predicts nothing in this space");
  double target = a.target > 0 ? a.target : (maximise ? 0.99 * *best : 1.01 * *best);
  // As the printed `plan` command gives it (4 significant digits), so that the command repeats
  // this plan exactly.
  p.target = a.target > 0 ? target : std::stod(fmt::format("{:.4g}", target));
  plan::validate(p);
  std::cerr << fmt::format("step 3/3: planning (target {} {:.4g}{}, deadline {:.0f} s)\n", maximise ? ">=" : "<=",
                           target,
                           a.target > 0 ? "" : fmt::format(" = {} of the best predicted, {:.4g}", maximise ? "99%" : "101%", *best),
                           a.deadline);
  return p;
}

// Draws the plan's chart to `path`; returns the path, or "" when it could not
// be drawn: the chart is a by-product, and a missing gnuplot must not fail the demo.
std::string draw_chart(const std::string& path, const models::PerformanceModel& planned,
                       const models::PerformanceModel& point, const plan::PlanProblem& p, const plan::Candidate& best) {
  try {
    io::render_plot(path, plan::plan_panels(planned, point, p, best));
    return path;
  } catch (const std::exception& e) {
    std::cerr << fmt::format("note: no chart ({})\n", e.what());
  }
  return "";
}

// Step 3's outcome: the plan, its chart ("" for none) and the demo's wall time.
struct Planned {
  plan::PlanProblem problem;
  plan::PlanResult result;
  std::string plotted;
  double wall_s = 0;
};

void print_json(const DemoArgs& a, const Profiled& prof, const Fitted& fit, const Planned& pl) {
  const auto& b = pl.result.best;
  nlohmann::json j = {{"workload", a.workload},       {"store", a.store},
                      {"samples_csv", a.out},         {"samples", prof.samples.size()},
                      {"time_model", fit.choice.time_model}, {"metric_model", fit.choice.metric_model},
                      {"target", pl.problem.target},  {"deadline_s", a.deadline},
                      {"max_workers", pl.problem.space.max_workers}, {"max_epochs", pl.problem.space.max_epochs},
                      {"batch", b.config.batch},      {"workers", b.config.workers},
                      {"epochs", b.config.epochs},    {"epoch_time_s", b.epoch_time_s},
                      {"total_time_s", b.total_time_s}, {"metric", b.metric},
                      {"cost_worker_s", b.cost},      {"wall_s", pl.wall_s},
                      {"step_clock", prof.step_clock},
                      {"plot", pl.plotted.empty() ? nlohmann::json(nullptr) : nlohmann::json(pl.plotted)},
                      {"cv_mre", {{"time", fit.time_cv ? nlohmann::json(*fit.time_cv) : nlohmann::json(nullptr)},
                                  {"metric", fit.metric_cv ? nlohmann::json(*fit.metric_cv) : nlohmann::json(nullptr)}}},
                      {"cv_folds", {{"time", fit.time_folds}, {"metric", fit.metric_folds}}},
                      {"model_choice", fit.choice.reason}};
  std::cout << io::json_text(j) << "\n";
}

void print_text(const DemoArgs& a, const Profiled& prof, const Fitted& fit, const Planned& pl) {
  const auto& b = pl.result.best;
  const std::string& metric_name = prof.metric_name;
  std::cout << fmt::format("recommendation for {} on this machine ({} trials profiled, {} samples, models {} / {}):\n",
                           a.workload, prof.ok_trials, prof.samples.size(), fit.choice.time_model,
                           fit.choice.metric_model);
  std::cout << fmt::format("  batch {} per worker, {} worker{}, {} epoch{}\n", b.config.batch, b.config.workers,
                           b.config.workers == 1 ? "" : "s", b.config.epochs, b.config.epochs == 1 ? "" : "s");
  std::cout << fmt::format("  predicted: {:.2f} s per epoch, {:.1f} s in all, {} {:.4f}, cost {:.1f} worker-seconds\n",
                           b.epoch_time_s, b.total_time_s, metric_name, b.metric, b.cost);
  if (prof.step_clock == "cpu")
    std::cout << "  (epoch times from each step's CPU time: what this machine takes when nothing else runs on it;\n"
                 "   --step-clock wall times steps by the wall clock instead)\n";
  if (prof.step_clock == "cpu+wall")
    std::cout << "  (one worker's epoch times from each step's CPU time, what this machine takes when nothing else\n"
                 "   runs on it; several workers' from the wall clock, as a step waits for its peers in the all-reduce)\n";
  auto pct = [](std::optional<double> v) { return v ? fmt::format("{:.1f}%", 100 * *v) : std::string("n/a"); };
  std::cout << fmt::format("  model error on trials it did not see (CV MRE): epoch time {} ({}), {} {} ({})\n",
                           pct(fit.time_cv), scoring::cv_name(fit.time_folds, scoring::kFoldsAuto), metric_name,
                           pct(fit.metric_cv), scoring::cv_name(fit.metric_folds, scoring::kFoldsAuto));
  for (const auto& c : pl.result.alternatives)
    std::cout << fmt::format("  alternative: batch {}, {} worker(s), {} epoch(s): cost {:.1f} worker-s ({:+.0f}%)\n",
                             c.config.batch, c.config.workers, c.config.epochs, c.cost, 100 * (c.cost / b.cost - 1));
  if (!pl.plotted.empty())
    std::cout << fmt::format("  chart: {} (cost of every feasible (batch, workers) cell; the chosen run's metric)\n",
                             pl.plotted);
  std::cout << fmt::format("demo finished in {}. Next:\n", format_duration(pl.wall_s));
  // The models and the epochs the demo planned with, so that the plan repeats it.
  std::cout << fmt::format("  trainplan plan --samples {} --target {:.4g} --deadline {:.0f} --max-workers {} "
                           "--max-epochs {} --time-model {} --metric-model {}\n",
                           shell_word(a.out), pl.problem.target, a.deadline, pl.problem.space.max_workers,
                           pl.problem.space.max_epochs, fit.choice.time_model, fit.choice.metric_model);
  std::cout << fmt::format("  trainplan evaluate --samples {} --models all --cv {}\n", shell_word(a.out), fit.time_folds);
  std::cout << fmt::format("  trainplan samples list --store {}\n", shell_word(a.store));
}

void run_demo(const DemoArgs& a) {
  // Before minutes of profiling: the samples' and the chart's paths, and the models' names.
  io::check_output_path(a.out, "--out",
                        {{a.store, "--store"}, {profile::live_log_path(a.store), "--store's live log"}});
  const bool chart = a.plot != "none";
  if (chart) io::check_plot_path(a.plot);
  for (const auto& [option, name] : {std::pair{"--time-model", a.model.empty() ? a.time_model : a.model},
                                     std::pair{"--metric-model", a.model.empty() ? a.metric_model : a.model}}) {
    if (name == "auto") continue;
    const std::string opt = a.model.empty() ? option : "--model";
    const models::ModelEntry* entry = nullptr;
    try {
      entry = &models::ModelRegistry::instance().get(name);
    } catch (const InputError& e) {
      throw InputError("", 0, opt, e.message());
    }
    const bool time = std::string(option) == "--time-model";
    if (time ? !entry->make_time : !entry->make_metric)
      throw InputError("", 0, opt, fmt::format("'{}' has no {} model", name, time ? "epoch-time" : "metric"));
  }
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  auto since = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };

  const Profiled prof = profile_step(a);                // 1. Profile.
  const Fitted fit = fit_step(a, prof.samples);         // 2. Fit.
  Planned pl;                                           // 3. Plan.
  pl.problem = plan_problem(a, prof, *fit.model);
  plan::PlannerOptions po;
  po.search = "exhaustive";
  po.alternatives = 3;
  // Held to the trials, as `plan` holds it (the command printed under "Next" repeats this plan):
  // a configuration whose own trial missed the target is not recommended on the model's word.
  app::PlanningModelOptions held;
  const auto planned = app::planned_side(fit.model, prof.samples, held);
  pl.result = plan::make_planner("coconfig", po)->plan(*planned, pl.problem);
  if (chart) pl.plotted = draw_chart(a.plot, *planned, *fit.model, pl.problem, pl.result.best);
  pl.wall_s = since();
  if (a.json) print_json(a, prof, fit, pl);
  else print_text(a, prof, fit, pl);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<DemoArgs>();
  auto* cmd = root.add_subcommand(
      "demo",
      "The whole path in under a minute of trials on 2 cores (at most --budget): profile lenet-mnist with trainplan-train, fit the models, plan, recommend");
  cmd->footer(
      "Runs `trainplan profile --workload lenet-mnist` on a small plan under a time budget (corners of\n"
      "(batch, workers) first), writes the samples to --out, fits the models (for the epoch time the\n"
      "registered model with the lowest cross-validated error, leaving one configuration out at a time;\n"
      "global-batch for the metric; --model auto picks both by cross-validation) and plans the\n"
      "cheapest configuration that reaches the target within the deadline (exhaustive search).\n"
      "Run it again to reuse the trials already in --store (delete the store to measure afresh).");
  cmd->add_option("--workload", a->workload, "Built-in workload: lenet-mnist or mlp-fashion")->capture_default_str();
  cmd->add_option("--trainer", a->trainer, "Path of trainplan-train (default: next to trainplan, else on PATH)");
  cmd->add_option("--data-dir", a->data_dir, "Dataset directory (default: the trainer's)");
  cmd->add_option("--train-subset", a->train_subset, "Train on the first N images (0: all)")->capture_default_str();
  cmd->add_option("--test-subset", a->test_subset, "Evaluate on the first N test images (0: all)")->capture_default_str();
  cmd->add_option("--batches", a->batches, "Per-worker batches to profile")->capture_default_str();
  cmd->add_option("--workers", a->workers, "Worker counts to profile")->capture_default_str();
  cmd->add_option("--epochs", a->epochs, "Epoch counts to profile")->capture_default_str();
  cmd->add_option("--budget", a->budget, "Time budget for profiling")->capture_default_str();
  cmd->add_option("--time-trial-s", a->time_trial_s,
                  "Seconds of timed steps per time-trial run at most (each runs until its median is known to +-2% "
                  "or this; 0: no limit)")
      ->capture_default_str()
      ->check(number_within(0, 3600));
  add_time_repeats_option(cmd, a->time_repeats, a->repeats_back_to_back, a->time_batches_apart);
  cmd->add_option("--step-clock", a->step_clock,
                  "How a step is timed: cpu (the process's CPU time per step: what other processes on a busy "
                  "machine barely change; it leaves out waiting for peers), wall, or auto (cpu for CPU training by one "
                  "worker with one thread, else wall)")
      ->capture_default_str();
  cmd->add_option("--store", a->store, "SQLite sample store (reused when present)")->capture_default_str();
  cmd->add_option("-o,--out", a->out, "Sample CSV written from the store")->capture_default_str();
  cmd->add_option("--plot", a->plot, "Chart of the plan (.png or .svg; as `plan --plot`); none for no chart")
      ->capture_default_str();
  cmd->add_option("--target", a->target, "Metric target (default: 99% of the best metric the model predicts in the space)")
      ->check(positive_number());
  add_duration_option(cmd, "--deadline", a->deadline, "Deadline for the planned run")->default_str("600");
  cmd->add_option("--max-workers", a->max_workers, "Largest worker count to plan for (default: the largest profiled)")
      ->check(CLI::Range(1, 1 << 20, "a worker count from 1 to 2^20"));
  cmd->add_option("--max-epochs", a->max_epochs, "Largest epoch count to plan for")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20, "an epoch count from 1 to 2^20"));
  cmd->add_option("--time-model", a->time_model, "Registered epoch-time model, or auto (the lowest cross-validated MRE)")
      ->capture_default_str();
  cmd->add_option("--metric-model", a->metric_model, "Registered metric model")->capture_default_str();
  cmd->add_option("--model", a->model, "Registered model for both parts, or auto (lowest cross-validated MRE)");
  cmd->add_flag("--json", a->json, "Print the recommendation as JSON on stdout");
  cmd->callback([a] { run_demo(*a); });
}

CommandRegistrar reg(5, setup);

}  // namespace
}  // namespace trainplan::cli
