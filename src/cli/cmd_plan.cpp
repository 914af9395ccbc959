// trainplan plan: choose batch, workers and epochs for one job (equation 11)
// from profiling samples, with the co-configuration method or a baseline.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/command.h"
#include "core/error.h"
#include "io/sample_csv.h"
#include "models/conformal.h"
#include "models/performance_model.h"
#include "plan/launch_spec.h"
#include "plan/model_choice.h"
#include "plan/pessimistic_model.h"
#include "plan/planner.h"

namespace trainplan::cli {
namespace {

struct PlanArgs {
  std::string samples;
  double target = 0;
  double deadline = 0;
  int max_workers = 0;
  std::string search = "tabu";
  std::string method = "coconfig";
  std::string model = plan::kDefaultPlanModel;
  std::string time_model, metric_model;
  std::vector<int> batches;
  int gpus_per_node = -1;
  int max_epochs = 1000;
  int alternatives = 5;
  uint64_t seed = 1;
  bool json = false;
  std::string emit;
  std::string train_cmd = "python train.py";
  std::string job_name = "trainplan-job";
  std::string image = "pytorch/pytorch:latest";
  double confidence = 0;
  bool conformal = false;
  int tabu_iterations = 50;
  int tabu_tenure = 10;
  int manual_tries = 60;
  std::string comm_profile;
};

nlohmann::json to_json(const plan::Candidate& c) {
  return {{"batch", c.config.batch},       {"workers", c.config.workers},
          {"nodes", c.nodes},              {"epochs", c.config.epochs},
          {"epoch_time_s", c.epoch_time_s}, {"total_time_s", c.total_time_s},
          {"metric", c.metric},            {"cost_worker_s", c.cost},
          {"cost_worker_h", c.cost / 3600.0}};
}

std::vector<int> sample_batches(const SampleSet& s) {
  std::set<int> b;
  for (const auto& x : s.samples) b.insert(static_cast<int>(std::lround(x.batch)));
  return {b.begin(), b.end()};
}

void run_plan(const PlanArgs& a) {
  apply_comm_profile(a.comm_profile);
  SampleSet samples = io::read_samples_csv(a.samples);
  if (!samples.has_metric())
    throw InputError(a.samples, 0, "metric",
                     "planning needs a metric, but these samples are time-only (the metric column is empty); "
                     "profile with a validation metric so the planner can tell how many epochs reach the target");
  if (a.max_workers < 1) throw InputError("--max-workers must be >= 1");
  if (!(a.deadline > 0)) throw InputError("--deadline must be > 0 seconds");
  if (a.confidence != 0 && !(a.confidence > 0 && a.confidence < 1))
    throw InputError("--confidence must be strictly between 0 and 1");

  plan::PlanProblem p;
  p.target = a.target;
  p.deadline_s = a.deadline;
  p.space.max_workers = a.max_workers;
  p.space.max_epochs = a.max_epochs;
  std::vector<int> bs = a.batches.empty() ? sample_batches(samples) : a.batches;
  std::sort(bs.begin(), bs.end());
  bs.erase(std::unique(bs.begin(), bs.end()), bs.end());
  p.space.batches = bs;
  bool has_nodes = std::any_of(samples.samples.begin(), samples.samples.end(), [](const Sample& s) { return s.nodes > 0; });
  p.space.workers_per_node = a.gpus_per_node >= 0 ? a.gpus_per_node : (has_nodes ? 4 : 0);
  plan::validate(p);

  std::string tname = a.time_model.empty() ? a.model : a.time_model;
  std::string mname = a.metric_model.empty() ? a.model : a.metric_model;
  if (tname == "auto" || mname == "auto") std::cerr << "choosing models by 5-fold cross-validation...\n";
  plan::ModelChoice choice = plan::choose_models(tname, mname, samples);
  std::shared_ptr<const models::FittedPerformanceModel> fitted;
  if (a.conformal) {
    // Both parts wrapped in K-fold conformal intervals (models/conformal.h).
    std::shared_ptr<models::TimeModel> tm = models::conformal_time_model(choice.time_model);
    std::shared_ptr<models::MetricModel> mm = models::conformal_metric_model(choice.metric_model);
    tm->fit(samples);
    mm->fit(samples);
    fitted = std::make_shared<models::FittedPerformanceModel>(tm, mm, samples.direction);
  } else {
    fitted = models::fit_performance_model(choice.time_model, choice.metric_model, samples);
  }
  std::shared_ptr<const models::PerformanceModel> model = fitted;
  if (a.confidence > 0) model = std::make_shared<plan::PessimisticModel>(fitted, a.confidence, bs.front());

  plan::PlannerOptions opts;
  opts.search = a.search;
  opts.seed = a.seed;
  opts.alternatives = a.alternatives;
  opts.manual_tries = a.manual_tries;
  opts.tabu.iterations = a.tabu_iterations;
  opts.tabu.tenure = a.tabu_tenure;
  auto planner = plan::make_planner(a.method, opts);
  plan::PlanResult res;
  try {
    res = planner->plan(*model, p);
  } catch (const InfeasibleError& e) {
    throw InfeasibleError(fmt::format("{}\n  model: {}", e.what(), model->name()));
  }

  const char* cmp = samples.direction == MetricDirection::kMax ? ">=" : "<=";
  std::string launch;
  if (!a.emit.empty()) {
    plan::LaunchOptions lo;
    lo.train_cmd = a.train_cmd;
    lo.job_name = a.job_name;
    lo.gpus_per_node = p.space.workers_per_node;
    lo.time_limit_s = a.deadline;
    lo.image = a.image;
    launch = plan::launch_spec(a.emit, res.best.config, lo);
  }

  if (a.json) {
    nlohmann::json j;
    j["method"] = res.method;
    j["samples"] = a.samples;
    j["model"] = {{"time", choice.time_model}, {"metric", choice.metric_model}, {"name", model->name()},
                  {"reason", choice.reason}};
    if (a.confidence > 0) j["confidence"] = a.confidence;
    j["target"] = a.target;
    j["direction"] = to_string(samples.direction);
    j["deadline_s"] = a.deadline;
    j["space"] = {{"batches", bs}, {"max_workers", a.max_workers}, {"max_epochs", a.max_epochs},
                  {"gpus_per_node", p.space.workers_per_node}};
    j["choice"] = to_json(res.best);
    j["alternatives"] = nlohmann::json::array();
    for (const auto& c : res.alternatives) j["alternatives"].push_back(to_json(c));
    j["evaluations"] = res.evaluations;
    if (!res.note.empty()) j["note"] = res.note;
    if (!launch.empty()) j["launch"] = {{"kind", a.emit}, {"spec", launch}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  // With --emit the launch spec goes to stdout (to redirect into a file), the summary to stderr.
  std::ostream& out = launch.empty() ? std::cout : std::cerr;
  const auto& b = res.best;
  out << fmt::format("plan: {} ({} (batch, workers) cells evaluated)\n", res.method, res.evaluations);
  out << fmt::format("model: {}\n  {}\n", model->name(), choice.reason);
  if (!res.note.empty()) out << fmt::format("note: {}\n", res.note);
  out << fmt::format("constraints: metric {} {} ({}), deadline {:.1f} s; space: {} batches x 1..{} workers x 1..{} epochs{}\n",
                     cmp, a.target, to_string(samples.direction), a.deadline, bs.size(), a.max_workers, a.max_epochs,
                     p.space.workers_per_node > 0 ? fmt::format(", {} GPUs per node", p.space.workers_per_node) : "");
  out << fmt::format("choice: batch {} per worker, {} worker{}{}, {} epoch{}\n", b.config.batch, b.config.workers,
                     b.config.workers == 1 ? "" : "s", b.nodes > 0 ? fmt::format(" on {} node{}", b.nodes, b.nodes == 1 ? "" : "s") : "",
                     b.config.epochs, b.config.epochs == 1 ? "" : "s");
  out << fmt::format("  predicted epoch time  {:.2f} s\n", b.epoch_time_s);
  out << fmt::format("  predicted total time  {:.1f} s (deadline {:.1f} s)\n", b.total_time_s, a.deadline);
  out << fmt::format("  predicted metric      {:.6g} (target {} {})\n", b.metric, cmp, a.target);
  out << fmt::format("  cost                  {:.1f} worker-seconds ({:.3f} worker-hours)\n", b.cost, b.cost / 3600.0);
  if (!res.alternatives.empty()) {
    out << "alternatives:\n";
    out << fmt::format("  {:>4} {:>6} {:>7} {:>6} {:>10} {:>10} {:>10} {:>12} {:>8}\n", "rank", "batch", "workers",
                       "epochs", "epoch_s", "total_s", "metric", "cost_w_s", "vs_best");
    int rank = 2;
    for (const auto& c : res.alternatives)
      out << fmt::format("  {:>4} {:>6} {:>7} {:>6} {:>10.2f} {:>10.1f} {:>10.5g} {:>12.1f} {:>+7.1f}%\n", rank++,
                         c.config.batch, c.config.workers, c.config.epochs, c.epoch_time_s, c.total_time_s, c.metric,
                         c.cost, 100.0 * (c.cost / b.cost - 1.0));
  }
  if (!launch.empty()) std::cout << launch;
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
  cmd->add_option("--target", a->target, "Metric target (>= for a metric to maximise, <= for one to minimise)")
      ->required();
  cmd->add_option("--deadline", a->deadline, "Wall-clock limit for the whole run, seconds")->required();
  cmd->add_option("--max-workers", a->max_workers, "Largest worker (GPU) count to consider; workers run 1..R")
      ->required();
  cmd->add_option("--method", a->method, "coconfig (the paper's method) or a baseline: lb-bsp, cynthia, bo, manual")
      ->check(CLI::IsMember({"coconfig", "lb-bsp", "cynthia", "bo", "manual"}))
      ->capture_default_str();
  cmd->add_option("--search", a->search, "Search for coconfig: tabu (Algorithm 2) or exhaustive (exact)")
      ->check(CLI::IsMember({"tabu", "exhaustive"}))
      ->capture_default_str();
  cmd->add_option("--model", a->model,
                  "Registered model for both parts, or 'auto': per part, the lowest 5-fold CV MRE on the samples")
      ->capture_default_str();
  cmd->add_option("--time-model", a->time_model, "Epoch-time model (overrides --model for time)");
  cmd->add_option("--metric-model", a->metric_model, "Metric model (overrides --model for the metric)");
  cmd->add_option("--batches", a->batches, "Candidate per-worker batches, e.g. 16,32,64 (default: those in the samples)")
      ->delimiter(',');
  cmd->add_option("--gpus-per-node", a->gpus_per_node,
                  "Workers per node; nodes = ceil(r / N) (default: 4 when samples carry nodes, else 0 = unknown)");
  cmd->add_option("--max-epochs", a->max_epochs, "Largest epoch count to consider")->capture_default_str();
  cmd->add_option("--alternatives", a->alternatives, "Next-best configurations to list")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed for tabu search, bo and manual")->capture_default_str();
  cmd->add_option("--tabu-iterations", a->tabu_iterations, "Tabu search moves (NG)")->capture_default_str();
  cmd->add_option("--tabu-tenure", a->tabu_tenure, "Tabu list length")->capture_default_str();
  cmd->add_option("--manual-tries", a->manual_tries, "Random tries of the manual baseline")->capture_default_str();
  cmd->add_option("--confidence", a->confidence,
                  "Plan on the pessimistic side of the models' prediction intervals at this coverage (0<P<1); "
                  "needs models that give intervals");
  cmd->add_flag("--conformal", a->conformal,
               "Wrap both models in 5-fold conformal prediction intervals (gives --confidence its intervals)");
  cmd->add_option("--emit", a->emit, "Print a launch spec for the choice: torchrun, slurm (sbatch) or k8s (PyTorchJob)")
      ->check(CLI::IsMember({"torchrun", "slurm", "k8s"}));
  cmd->add_option("--train-cmd", a->train_cmd, "Training command for --emit")->capture_default_str();
  cmd->add_option("--job-name", a->job_name, "Job name for --emit slurm|k8s")->capture_default_str();
  cmd->add_option("--image", a->image, "Container image for --emit k8s")->capture_default_str();
  add_comm_profile_option(cmd, a->comm_profile);
  cmd->add_flag("--json", a->json, "Print the plan as JSON");
  cmd->callback([a] { run_plan(*a); });
}

CommandRegistrar reg(40, setup);

}  // namespace
}  // namespace trainplan::cli
