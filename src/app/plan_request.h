// What `trainplan plan` and `POST /plan` compute, from a sample set to a
// plan and its JSON, so that both give the same numbers.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/model_source.h"
#include "app/progress.h"
#include "core/sample.h"
#include "models/performance_model.h"
#include "plan/early_stop.h"
#include "plan/evidence.h"
#include "plan/problem.h"
#include "scoring/model_choice.h"

namespace trainplan::app {

struct PlanQuery {
  // The metric target: the run must reach >= it for a metric to maximise, <= it for one to minimise.
  double target = 0;
  // Wall-clock limit for the whole run, in seconds. REQUIRES: > 0.
  double deadline = 0;
  // Largest worker (GPU) count to consider: workers run 1 to it. 0: the largest worker count in the samples.
  // REQUIRES: >= 0. Default: 0.
  int max_workers = 0;
  // coconfig's search: "auto" (exhaustive when the space has at most plan::kExhaustiveCellLimit = 2^20
  // (batch, workers) cells, else tabu), "tabu" (Algorithm 2 of the paper) or "exhaustive" (exact).
  // Default: "auto".
  std::string search = "auto";
  // The method: "coconfig" (the paper's) or a baseline, "lb-bsp", "cynthia", "bo" or "manual"
  // (plan::planner_names()). Default: "coconfig".
  std::string method = "coconfig";
  // Registered model for both parts (epoch time and metric), or "auto": per part, the lowest 5-fold CV MRE
  // on the samples. Default: "auto" (scoring::kDefaultPlanModel).
  std::string model = scoring::kDefaultPlanModel;
  // Epoch-time and metric models, each overriding `model` for its part; empty: `model`.
  std::string time_model, metric_model;
  // Candidate per-worker batches; empty: those in the samples (rounded to whole numbers).
  std::vector<int> batches;
  // Workers per node: r workers span ceil(r / gpus_per_node) nodes. 0: unknown; < 0: the node of the
  // hardware (--hardware) where it gives one, else gpus_per_node_seen(samples). REQUIRES: >= -1. Default: -1.
  int gpus_per_node = -1;
  // Largest epoch count to consider. REQUIRES: 1 to kMostEpochs. Default: 1000.
  int max_epochs = 1000;
  // Next-best configurations to list beside the choice. REQUIRES: 0 to 1000. Default: 5.
  int alternatives = 5;
  // Seed of tabu search, bo and manual, and of the conformal folds (with conformal or a confidence).
  // Default: 1.
  uint64_t seed = 1;
  // The launch spec to print for the choice: "torchrun", "slurm" (sbatch) or "k8s" (PyTorchJob); empty: none.
  std::string emit;
  // The training command for emit, a template in profile --cmd's syntax: {batch}, {workers}, {epochs} and
  // {nodes} take the plan's values. Default: "python train.py --batch {batch} --epochs {epochs}".
  std::string train_cmd = "python train.py --batch {batch} --epochs {epochs}";
  // With emit: the launch requests no GPUs (a CPU cluster, whose ranks are processes). Default: false.
  bool no_gpus = false;
  // The job's name in the launch of emit slurm or k8s. Default: "trainplan-job".
  std::string job_name = "trainplan-job";
  // The container image of emit k8s. Default: "pytorch/pytorch:latest".
  std::string image = "pytorch/pytorch:latest";
  // Plan on the pessimistic side of the models' prediction intervals at this coverage (implies conformal);
  // 0: plan on point predictions. REQUIRES: 0 or strictly between 0 and 1. Default: 0.
  double confidence = 0;
  // How confidence reads the intervals: two-sided or one-sided (uncertainty::ConfidenceBounds).
  // Default: two-sided.
  uncertainty::ConfidenceBounds bounds = uncertainty::ConfidenceBounds::kTwoSided;
  // The run stops at the target: epochs are a budget (plan/early_stop.h). REQUIRES: method "coconfig" and
  // no frontier. Default: false.
  bool early_stop = false;
  // With early_stop: the epochs a run may use, as many as the deadline allows or those to the target, on the
  // planned side (plan::EarlyStopBudget). Default: deadline.
  plan::EarlyStopBudget early_stop_budget = plan::EarlyStopBudget::kDeadline;
  // Wrap both models in 5-fold conformal prediction intervals (implied by a confidence). Default: false.
  bool conformal = false;
  // Also compute the cost-time frontier (plan/frontier.h). REQUIRES: no early_stop. Default: false.
  bool frontier = false;
  // Moves of coconfig's tabu search (NG; plan::TabuParams::iterations). REQUIRES: 1 to 1,000,000. Default: 50.
  int tabu_iterations = 50;
  // Length of coconfig's tabu list (plan::TabuParams::tenure). REQUIRES: 1 to 1,000,000. Default: 10.
  int tabu_tenure = 10;
  // Random tries of the manual baseline. REQUIRES: 1 to 1,000,000. Default: 60.
  int manual_tries = 60;
};

struct PlanOutcome {
  PlanQuery query;
  plan::PlanProblem problem;
  std::vector<int> batches;  // the candidate batches, sorted
  scoring::ModelChoice choice;
  std::string model_name;  // the PerformanceModel planned on
  std::shared_ptr<const models::PerformanceModel> model;        // planned on (pessimistic with a confidence)
  std::shared_ptr<const models::PerformanceModel> point_model;  // the point predictions, held to the trials
  MetricDirection direction = MetricDirection::kMax;
  // With early_stop: best and alternatives are the budgets (epochs = budget),
  // and result.expected the runs the point model expects for each.
  plan::PlanResult result;
  bool stops_at_target() const { return !result.expected.empty(); }
  std::string launch;  // the launch spec when query.emit is set
  // With a confidence: what its intervals cannot promise (too few held-out
  // residuals for the coverage, the largest then used); empty when they can.
  std::string confidence_caveat;
  // The profiled trials nearest the choice (with early_stop: nearest the
  // epochs the point model expects the run to stop at).
  std::vector<plan::NearbyTrial> evidence;
  // The most epochs any trial with a metric ran. A run planned past it rests
  // on the model's extrapolation in epochs (with a confidence, on the beyond
  // rule's wide intervals; uncertainty/conformal.h).
  double longest_trial_epochs = 0;
  // The run the plan stands for: the choice, or with early_stop the run the
  // point model expects (its epochs are where it stops).
  const Config& run_config() const;
  // run_config()'s epochs past longest_trial_epochs.
  bool past_longest_trial() const;
  // The fewest epochs any trial or learning-curve point with a metric
  // measured. A run planned on fewer rests on the model's extrapolation back
  // in epochs, where a learning curve is steepest and least known.
  double shortest_trial_epochs = 0;
  bool before_shortest_trial() const;
  // The most workers any sample ran. A run planned on more rests on the time
  // model's extrapolation in workers, which cross-validation over the sampled
  // counts never tests.
  int most_workers_sampled = 0;
  bool past_most_workers() const;
  // How the workers were laid on nodes, as `predict` says it (NodePacking):
  // assumed where every sample ran on one node and the space goes past the
  // most that did.
  std::string nodes_from;
  bool nodes_assumed = false;
  // The training examples an epoch passes over, when the samples say it. A
  // run whose global batch is larger takes one step an epoch on fewer
  // examples than its batch: its time and metric are no measurement's.
  std::optional<long> dataset_size;
  bool batch_past_dataset() const;
  // The samples' epoch times were predicted on other hardware (`transfer
  // --samples`): its name and the prediction's log standard deviation, which
  // a confidence adds to the epoch-time bounds. Empty and unset: measured.
  std::string times_predicted_from;
  std::optional<double> times_predicted_log_sd;
  // With query.frontier: the cheapest run for every deadline, on `model`.
  std::vector<plan::Candidate> frontier;
  // With a confidence and fixed epochs, when the point prediction meets the
  // target in fewer epochs at the chosen (batch, workers) than were chosen:
  // those epochs, and the chosen epochs beyond them with their cost. This is
  // the margin the confidence buys; a run that stops at the target pays for
  // it only when it needs it.
  struct ConfidenceMargin {
    int point_epochs = 0;       // the point prediction meets the target here
    int extra_epochs = 0;       // chosen epochs - point_epochs
    double cost_worker_s = 0;   // the extra epochs' share of the choice's cost
  };
  std::optional<ConfidenceMargin> confidence_margin;
};

// Throws InputError for a query make_plan cannot run: time-only samples, a
// deadline <= 0, a confidence outside (0, 1), --early-stop with a baseline or
// with --frontier.
void check_plan_query(const SampleSet& samples, const PlanQuery& q);
// Throws InputError naming an option given that `q`'s plan does not read
// (--tabu-iterations without coconfig's tabu search, --job-name without
// --emit slurm or k8s, ...), which would otherwise pass unread. `given`
// says whether an option, by its CLI name ("--tabu-iterations"), was given;
// the API names the same fields with '_' ("tabu_iterations").
void check_plan_options_read(const PlanQuery& q, const std::function<bool(const std::string&)>& given);
// What `trainplan plan` computes. Throws InputError (time-only samples, bad
// query) or InfeasibleError (with diagnostics, the model's name and, with
// query.frontier, the frontier: what each longer deadline would cost).
PlanOutcome make_plan(ModelSource& src, const PlanQuery& q, const Progress& progress = {});
// The JSON of `trainplan plan --json`; `samples` fills its "samples" field.
nlohmann::json to_json(const PlanOutcome& o, const std::string& samples);
nlohmann::json to_json(const plan::Candidate& c);

}  // namespace trainplan::app
