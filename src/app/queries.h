// The computations behind `trainplan predict` and `trainplan plan`, from a
// sample set to a result and its JSON, shared by the CLI verbs and the HTTP
// server (server/service.h) so that both give the same numbers. No HTTP here.
//
// A ModelSource owns one sample set and caches what is fitted on it: model
// choices ("auto" cross-validation) and fitted models, by name and
// parameters. The CLI makes one per call; the server keeps one per /fit id,
// so repeated requests on one id fit nothing twice. Fits are deterministic,
// so a cached model predicts what a fresh fit would.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sample.h"
#include "uncertainty/conformal.h"
#include "models/performance_model.h"
#include "plan/early_stop.h"
#include "plan/evidence.h"
#include "scoring/model_choice.h"
#include "plan/problem.h"

namespace trainplan::app {

// Not thread-safe: callers serialise calls on one source (the server holds a mutex per id).
class ModelSource {
 public:
  // Every model fitted here is made with `params`.
  explicit ModelSource(SampleSet samples, models::ModelParams params = {})
      : samples_(std::move(samples)), params_(std::move(params)) {}
  const SampleSet& samples() const { return samples_; }
  const models::ModelParams& params() const { return params_; }
  // scoring::choose_models(time, metric, samples), cached by the two names.
  const scoring::ModelChoice& choose(const std::string& time_name, const std::string& metric_name);
  // Registered models wrapped in K-fold conformal intervals, fitted on the samples.
  std::shared_ptr<models::TimeModel> conformal_time(const std::string& name, uncertainty::ConformalParams p);
  std::shared_ptr<models::MetricModel> conformal_metric(const std::string& name, uncertainty::ConformalParams p);
  // models::fit_performance_model(time, metric, samples).
  std::shared_ptr<const models::FittedPerformanceModel> performance(const std::string& time_name,
                                                                    const std::string& metric_name);

 private:
  SampleSet samples_;
  models::ModelParams params_;
  std::map<std::string, scoring::ModelChoice> choices_;
  std::map<std::string, std::shared_ptr<models::TimeModel>> times_;
  std::map<std::string, std::shared_ptr<models::MetricModel>> metrics_;
  std::map<std::string, std::shared_ptr<const models::FittedPerformanceModel>> performance_;
};

// ---- predict ---------------------------------------------------------------

struct PredictQuery {
  double batch = 0;
  int workers = 0;
  double epochs = -1;  // < 0: time only
  int nodes = -1;      // < 0: derived from the samples (derive_nodes)
  std::string model = "auto";
  std::string time_model, metric_model;  // override `model` per part when not empty
  double confidence = 0.9;
  int folds = 5;
  uint64_t seed = 1;
  std::optional<double> target;  // also: the epochs (and time) to reach this metric
  int max_epochs = 1000;         // how far to look for the target
};

// Throws InputError for a batch <= 0, workers < 1, confidence outside (0, 1),
// folds < 2, a non-finite target or max_epochs < 1.
void check_predict_query(const PredictQuery& q);

// Nodes for `workers` when not given: as many GPUs a node as the samples used
// at most; 0 (unknown) when the samples record no nodes.
int derive_nodes(const SampleSet& s, int workers);

struct Prediction {
  PredictQuery query;  // as asked
  int nodes = 0;       // as used
  std::string time_model, metric_model;  // resolved names
  std::string reason;                    // how "auto" chose (empty when nothing was chosen)
  MetricDirection direction = MetricDirection::kMax;
  double epoch_time_s = 0;
  std::optional<models::Interval> time_interval;
  std::optional<double> time_bound;  // one-sided upper bound at the confidence
  double metric = 0;
  std::optional<models::Interval> metric_interval;
  std::optional<double> metric_bound;  // one-sided bound on the worse side (lower for max, upper for min)
  // The best metric among the samples (when the metric was asked for): the
  // intervals' worse end is held there (uncertainty/conformal.h), so a target
  // better than it is never met with confidence.
  std::optional<double> best_sampled_metric;
  // With --epochs: the last epoch sampled on this (batch, workers), or on any
  // configuration when this one was not sampled (`last_sampled_run` says
  // which), and the last sampled on any configuration. Past the latter the
  // model only extrapolates: runs often keep improving there while it levels
  // off, and the interval is widened by the beyond rule (uncertainty/conformal.h;
  // measured in docs/lab/MODELS-METRIC.md, "Past the last sampled epoch").
  std::optional<double> last_sampled_epoch, last_sampled_epoch_any;
  bool last_sampled_run = false;
  bool past_last_sampled_epoch() const;
  bool past_every_sampled_epoch() const;
  // With query.target: the first epoch count at which the metric meets the
  // target, on the point prediction and on each end of its interval at the
  // confidence (nullopt: not within query.max_epochs), and the time to it:
  // epochs x epoch time, its range from the favourable ends of both parts
  // to the unfavourable ones.
  struct ToTarget {
    std::optional<int> epochs, epochs_lo, epochs_hi;
    std::optional<double> time_s, time_lo_s, time_hi_s;
  };
  std::optional<ToTarget> to_target;
};

// Told before a slow step: choosing models by cross-validation, fitting a
// model. Either may be empty.
struct Progress {
  std::function<void(const std::string&)> choosing, fitting;
};

// What `trainplan predict` computes. Throws InputError (bad query, --epochs on
// time-only samples, unknown model).
Prediction predict(ModelSource& src, const PredictQuery& q, const Progress& progress = {});
// The JSON of `trainplan predict --json`.
nlohmann::json to_json(const Prediction& p);

// ---- plan ------------------------------------------------------------------

struct PlanQuery {
  double target = 0;
  double deadline = 0;
  int max_workers = 0;  // 0: the largest worker count in the samples
  std::string search = "auto";
  std::string method = "coconfig";
  std::string model = scoring::kDefaultPlanModel;
  std::string time_model, metric_model;
  std::vector<int> batches;  // empty: those in the samples
  int gpus_per_node = -1;    // < 0: 4 when the samples carry nodes, else 0
  int max_epochs = 1000;
  int alternatives = 5;
  uint64_t seed = 1;
  std::string emit;  // "", torchrun, slurm or k8s
  std::string train_cmd = "python train.py";
  std::string job_name = "trainplan-job";
  std::string image = "pytorch/pytorch:latest";
  double confidence = 0;  // 0: plan on point predictions
  std::string bounds = "two-sided";  // how confidence reads the intervals (uncertainty::ConfidenceBounds)
  bool early_stop = false;  // the run stops at the target: epochs are a budget (plan/early_stop.h)
  std::string early_stop_budget = "deadline";  // target or deadline (plan::EarlyStopBudget)
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
  plan::PlanResult result;  // with early_stop: the budget candidates (epochs = budget)
  std::optional<plan::EarlyStopPlan> early_stop;
  std::string launch;  // the launch spec when query.emit is set
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

// What `trainplan plan` computes. Throws InputError (time-only samples, bad
// query) or InfeasibleError (with diagnostics, the model's name and, with
// query.frontier, the frontier: what each longer deadline would cost).
PlanOutcome make_plan(ModelSource& src, const PlanQuery& q, const Progress& progress = {});
// The JSON of `trainplan plan --json`; `samples` fills its "samples" field.
nlohmann::json to_json(const PlanOutcome& o, const std::string& samples);
nlohmann::json to_json(const plan::Candidate& c);

}  // namespace trainplan::app
