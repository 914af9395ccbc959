// What `trainplan plan` and `POST /plan` compute, from a sample set to a
// plan and its JSON, so that both give the same numbers.
#pragma once
#include <cstdint>
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
  double target = 0;
  double deadline = 0;
  int max_workers = 0;  // 0: the largest worker count in the samples
  std::string search = "auto";
  std::string method = "coconfig";
  std::string model = scoring::kDefaultPlanModel;
  std::string time_model, metric_model;
  std::vector<int> batches;  // empty: those in the samples
  int gpus_per_node = -1;    // < 0: the hardware's node, else gpus_per_node_seen(samples)
  int max_epochs = 1000;
  int alternatives = 5;
  uint64_t seed = 1;
  std::string emit;  // "", torchrun, slurm or k8s
  std::string train_cmd = "python train.py --batch {batch} --epochs {epochs}";  // a profile --cmd template
  bool no_gpus = false;  // --emit: request no GPUs
  std::string job_name = "trainplan-job";
  std::string image = "pytorch/pytorch:latest";
  double confidence = 0;  // 0: plan on point predictions
  uncertainty::ConfidenceBounds bounds = uncertainty::ConfidenceBounds::kTwoSided;  // how confidence reads the intervals
  bool early_stop = false;  // the run stops at the target: epochs are a budget (plan/early_stop.h)
  plan::EarlyStopBudget early_stop_budget = plan::EarlyStopBudget::kDeadline;
  bool conformal = false;
  bool frontier = false;  // also compute the cost-time frontier (plan/frontier.h); not with early_stop
  int tabu_iterations = 50;
  int tabu_tenure = 10;
  int manual_tries = 60;
};

struct PlanOutcome {
  PlanQuery query;
  plan::PlanProblem problem;
  std::vector<int> batches;  // the candidate batches, sorted
  scoring::ModelChoice choice;
  std::string model_name;  // the PerformanceModel planned on
  std::shared_ptr<const models::PerformanceModel> model;        // planned on (pessimistic with a confidence)
  std::shared_ptr<const models::PerformanceModel> point_model;  // the fitted point predictions
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
// What `trainplan plan` computes. Throws InputError (time-only samples, bad
// query) or InfeasibleError (with diagnostics, the model's name and, with
// query.frontier, the frontier: what each longer deadline would cost).
PlanOutcome make_plan(ModelSource& src, const PlanQuery& q, const Progress& progress = {});
// The JSON of `trainplan plan --json`; `samples` fills its "samples" field.
nlohmann::json to_json(const PlanOutcome& o, const std::string& samples);
nlohmann::json to_json(const plan::Candidate& c);

}  // namespace trainplan::app
