// Running policies on a job list with the estimators they need: shared by
// `trainplan simulate`, `trainplan bench simulate` and the benchmarks.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/estimator.h"
#include "sim/metrics.h"
#include "sim/policy.h"
#include "sim/simulator.h"

namespace trainplan::sim {

struct ExperimentOptions {
  SimOptions sim;
  PolicyOptions policy;
  bool oracle = false;     // schedulers see the ground truth instead of fitted models
  std::string time_model;  // registered time model for the fitted estimator ("" = default)
  bool gittins = false;    // tiresias uses the Gittins index over the jobs' own sizes
};

class Experiment {
 public:
  Experiment(std::vector<const AppModel*> apps, ExperimentOptions opts);
  // The estimator schedulers use; fitted models are fitted on first use.
  // Falls back to the oracle (and says so in note()) when no time model is registered.
  const Estimator& scheduler_estimator();
  const Estimator& truth() const { return oracle_; }
  SimResult run(const std::string& policy, const std::vector<JobSpec>& jobs);
  const std::string& note() const { return note_; }
  const ExperimentOptions& options() const { return opts_; }

 private:
  std::vector<const AppModel*> apps_;
  ExperimentOptions opts_;
  OracleEstimator oracle_;
  std::unique_ptr<Estimator> fitted_;
  bool fitted_tried_ = false;
  std::string note_;
};

// Splits "a,b,c" into names.
std::vector<std::string> split_list(const std::string& s);

// Draws the JCT CDF of each run with gnuplot into `path` (.png or .svg).
// Throws InputError for another extension and std::runtime_error if gnuplot fails.
void plot_jct_cdf(const std::string& path, const std::vector<SimResult>& runs, const std::string& title);

// Per-job CSV: policy,name,app,arrival,start,finish,jct,gpu_seconds,restarts,gpus,batch,met_deadline,
// and gpu (the node group's GPU the job finished on) when a run has several GPU types.
void write_jobs_csv(const std::string& path, const std::vector<SimResult>& runs);

}  // namespace trainplan::sim
