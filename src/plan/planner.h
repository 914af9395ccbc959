// One interface over the co-configuration method and the paper's baselines,
// so the CLI and the benchmark can run any of them by name:
//   coconfig  batch, workers and epochs together (tabu or exhaustive search)
//   lb-bsp    the largest candidate batch that fits; workers and epochs searched
//   cynthia   batch fixed at 32 (or the nearest candidate); workers and epochs searched
//   bo        Bayesian optimisation of the batch alone for the final metric,
//             then the cheapest feasible (workers, epochs) for that batch
//   manual    the best of N random (batch, workers, epochs) tries
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/performance_model.h"
#include "numerics/gaussian_process.h"
#include "plan/early_stop.h"
#include "plan/problem.h"
#include "plan/tabu.h"

namespace trainplan::plan {

struct BoParams {
  int initial = 3;            // random batches evaluated before the GP guides the choice
  int iterations = 7;         // batches chosen by expected improvement after that
  int workers = 1;            // r fixed while tuning the batch (BO tunes the batch alone)
  double length_scale = 0.25; // RBF length scale on log2(batch) scaled to [0, 1]
  double noise = 1e-4;        // observation noise variance (on standardised metrics)
};

// "auto" searches exhaustively when the space has at most this many (batch,
// workers) cells, else by tabu. Exhaustive search over 64 batches x 1024
// workers (65,536 cells) takes about 17 ms (microbench/plan_bench.cpp), so this
// limit keeps "auto" well under a second.
inline constexpr long kExhaustiveCellLimit = 1L << 20;

// The search "auto" resolves to for problem `p`: "exhaustive" or "tabu".
std::string resolve_search(const std::string& search, const PlanProblem& p);

struct PlannerOptions {
  // coconfig's search: "tabu", "exhaustive" or "auto" (resolve_search). Default: "tabu".
  std::string search = "tabu";
  // coconfig's tabu search parameters; its seed, alternatives and epochs are overridden by `seed`,
  // `alternatives` and `epochs` below.
  TabuParams tabu;
  // How a (batch, workers) cell's smallest feasible epoch count is found, by coconfig and the fixed-batch
  // baselines (lb-bsp, cynthia, bo). Default: binary.
  EpochSearch epochs = EpochSearch::kBinary;
  // Next-best configurations returned beside the best. Default: 5.
  int alternatives = 5;
  // Seed of coconfig's tabu search, the manual baseline's random tries and bo's random first batches.
  // Default: 1.
  uint64_t seed = 1;
  // Random tries of the manual baseline (the paper: 60 or more manual tries). Default: 60.
  int manual_tries = 60;
  // The bo baseline's parameters.
  BoParams bo;
  // coconfig-early-stop (plan/early_stop.h): the model whose expected cost
  // ranks the cells (the point predictions; the planned model decides which
  // cells are feasible), and how much budget a feasible cell gets.
  std::shared_ptr<const models::PerformanceModel> point_model;
  EarlyStopBudget early_stop_budget = EarlyStopBudget::kDeadline;
};

class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string name() const = 0;
  // Throws InfeasibleError (with diagnostics) when the method finds nothing feasible.
  virtual PlanResult plan(const models::PerformanceModel& m, const PlanProblem& p) const = 0;
};

// `method` is one of planner_names(); throws InputError otherwise, and for an
// unknown opts.search.
std::unique_ptr<Planner> make_planner(const std::string& method, const PlannerOptions& opts = {});
// The methods a user chooses with --method, in registration order. The
// early-stop search (coconfig-early-stop) is registered but chosen by
// --early-stop, so it is not listed.
std::vector<std::string> planner_names();

// Static registration, at namespace scope in the planner's .cpp file (one
// file per method): `order` sorts planner_names(), and so help texts.
using PlannerFactory = std::function<std::unique_ptr<Planner>(const PlannerOptions&)>;
enum class PlannerListing { kListed, kUnlisted };
struct PlannerRegistrar {
  PlannerRegistrar(int order, const std::string& method, PlannerFactory make,
                   PlannerListing listing = PlannerListing::kListed);
};

// Exhaustive search over workers and epochs with the batch fixed, labelled
// `method`; shared by the baselines that fix the batch.
PlanResult search_fixed_batch(const models::PerformanceModel& m, const PlanProblem& p, int batch,
                              const std::string& method, const PlannerOptions& opts);

}  // namespace trainplan::plan
