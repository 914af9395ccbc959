// One job planned on several GPUs from samples measured on one of them: "what
// if we had other GPUs". On the GPU the samples were measured on they are
// planned as they are (moved to that GPU itself when the training is to run
// in another precision than they were measured in); on every other one they are first moved there
// (app/transfer_samples.h, no trial on the target), so that each GPU's plan
// rests on its own predicted epoch times, and a confidence adds the move's
// error to its bounds. A price per GPU-hour puts a cost on each plan.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/plan_request.h"
#include "core/error.h"
#include "core/sample.h"
#include "models/registry.h"
#include "models/transfer.h"
#include "structure/gpu_catalog.h"

namespace trainplan::app {

struct GpuPlan {
  std::string gpu;                          // the hardware's name
  double price_per_gpu_hour = 0;            // 0: no price
  bool measured = false;                    // the samples were measured here, in the precision planned (not moved)
  std::optional<double> times_log_sd;       // the move's shared error (moved samples only)
  size_t trials = 0;                        // configurations timed there that corrected the move
  std::vector<std::string> notes;           // what the move says (transfer_samples' notes)
  std::optional<PlanOutcome> outcome;       // unset: no configuration meets both constraints
  std::string infeasible;                   // why, when outcome is unset
  std::optional<InfeasibleError::Shortfall> shortfall;  // and by how much, where the planner measured it
  // With PlanQuery::frontier: the cheapest run for every deadline on this
  // GPU (plan/frontier.h; cost in GPU-seconds), also when the deadline given
  // has no plan here: what a longer one would cost.
  std::vector<plan::Candidate> frontier;
  // The chosen run's cost in GPU-hours and, with a price, in money.
  double gpu_hours() const;
  double cost() const { return gpu_hours() * price_per_gpu_hour; }
};

// A point of the frontier over every GPU: from this run's total time on,
// it is the cheapest run on any GPU.
struct GpuFrontierPoint {
  size_t plan = 0;      // index into GpuComparison::plans
  plan::Candidate run;  // on that GPU
  double cost = 0;      // GPU-hours times that GPU's price
};

struct GpuComparison {
  std::string from;                     // the GPU the samples were measured on
  std::vector<GpuPlan> plans;           // one per GPU, in the order given
  std::optional<size_t> cheapest;       // with prices on every GPU: the plan that costs least
  std::optional<size_t> fastest;        // the plan that ends soonest
  // With PlanQuery::frontier and prices: the GPUs' frontiers merged, fastest
  // first, each point strictly cheaper than every faster one. GPU-hours of
  // different GPUs are not comparable without prices: then empty.
  std::vector<GpuFrontierPoint> frontier;
};

// The frontier over every GPU of `plans` (each GpuPlan::frontier, costed at
// its price): sorted by total time, each point strictly cheaper than every
// faster one. Empty when any plan has no price.
std::vector<GpuFrontierPoint> merge_frontiers(const std::vector<GpuPlan>& plans);

// Plans `q` on each of `gpus` from `samples` measured on `from`. `params` is
// shared (a comm profile); each GPU's interconnect and node replace its
// hardware. `prices`: one per GPU, or empty (no costs). Throws InputError as
// make_plan and transfer_samples do (a dataset size is needed to move
// samples); an InfeasibleError on one GPU is that GPU's answer, not the run's.
// `trials`: per GPU name, samples measured there that correct its move (as
// `transfer --samples --trials`); a GPU without any is moved from the
// datasheet alone. InputError when a trial set names a GPU not in `gpus` or
// the one the samples were measured on (nothing is moved there).
// `precision`: the training's, profiled and on the other GPUs, when the user
// knows it (transfer_samples).
GpuComparison plan_on_gpus(const SampleSet& samples, const structure::HardwareProfile& from,
                           const std::vector<structure::HardwareProfile>& gpus, const std::vector<double>& prices,
                           const PlanQuery& q, const models::ModelParams& params,
                           const std::map<std::string, SampleSet>& trials = {},
                           models::TrainingPrecision precision = {});

// {"from_gpu", "gpus": [{"gpu", "measured", "price_per_gpu_hour" (with a
// price), "times_predicted_log_sd" (moved), "plan" (plan --json's answer) or
// "infeasible" (why, with "failing", "shortfall" and "closest" where
// measured: to_json of the shortfall), "trials" (configurations timed there), "notes", "frontier"
// (with a frontier: plan's frontier points, each with "gpu_hours" and, with
// a price, "cost")}], "cheapest", "fastest", "frontier" (with a frontier and
// prices: the merged points, each a frontier point with "gpu")}.
nlohmann::json to_json(const GpuComparison& c, const std::string& samples);

}  // namespace trainplan::app
