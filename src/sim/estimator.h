// What a scheduler believes about a job's speed: progress per second at a
// GPU count (packed onto the fewest nodes) and a global batch. The oracle
// estimator is the simulator's own ground truth; the fitted one predicts
// step time with a registered TimeModel fitted on samples drawn from the
// replay data (the paper's sampling plan), as a profiler would have.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "models/model.h"
#include "sim/job.h"

namespace trainplan::sim {

class Estimator {
 public:
  virtual ~Estimator() = default;
  // Progress per second on `gpus` GPUs of node group `group` (0 on a cluster
  // of one GPU type); 0 where not feasible. Rigid jobs: 1 at their own GPU
  // count, else 0.
  virtual double rate_on(const JobState& job, int group, int gpus, int batch) const = 0;
  // The same on the job's own group (JobState::group).
  double rate(const JobState& job, int gpus, int batch) const { return rate_on(job, job.group, gpus, batch); }
  virtual std::string name() const = 0;
  // Seconds left at (gpus, batch) on the job's own group; +inf where not feasible.
  double remaining_time(const JobState& job, int gpus, int batch) const;
};

class OracleEstimator : public Estimator {
 public:
  double rate_on(const JobState& job, int group, int gpus, int batch) const override;
  std::string name() const override { return "oracle"; }
};

// Step time from a fitted TimeModel per application; the statistical gain
// from the job's own gradient statistics (which a running job measures).
class FittedEstimator : public Estimator {
 public:
  // Fits `model` (a registered time-model name) on each application's
  // samples drawn with the paper's plan (seed `seed`).
  FittedEstimator(const std::vector<const AppModel*>& apps, const std::string& model, uint64_t seed = 1);
  double rate_on(const JobState& job, int group, int gpus, int batch) const override;
  std::string name() const override { return "fitted:" + model_; }

 private:
  std::string model_;
  std::map<const AppModel*, std::shared_ptr<models::TimeModel>> fitted_;
};

// The time model the fitted estimator uses when none is named: the physically
// shaped all-reduce model, which extrapolates to GPU counts never sampled.
inline constexpr const char* kDefaultTimeModel = "allreduce-physical";

}  // namespace trainplan::sim
