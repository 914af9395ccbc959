// The planning problem of equation 11 (docs/PLANNING.md): choose per-worker
// batch b, workers r and integer epochs e minimising cost = r * t_epoch * e
// (worker-seconds) such that the metric after e epochs meets the target and
// e * t_epoch <= deadline. Equal costs go to the better metric.
#pragma once
#include <string>
#include <vector>

#include "core/config.h"
#include "core/sample.h"

namespace trainplan::plan {

struct PlanProblem {
  ConfigSpace space;      // batches (sorted, distinct), workers 1..max, epochs 1..max
  double target = 0;      // metric target, read with `direction`
  double deadline_s = 0;  // wall-clock limit for the whole run, seconds (> 0)
};

// One fully evaluated configuration.
struct Candidate {
  Config config;
  int nodes = 0;              // nodes passed to the time model (0: unknown)
  double epoch_time_s = 0;    // predicted seconds per epoch
  double total_time_s = 0;    // epochs * epoch_time_s
  double metric = 0;          // predicted metric after `epochs`
  double cost = 0;            // workers * total_time_s, worker-seconds
};

struct PlanResult {
  std::string method;                   // e.g. "coconfig-tabu", "lb-bsp"
  Candidate best;
  std::vector<Candidate> alternatives;  // next best, distinct (batch, workers), best first
  long evaluations = 0;                 // (batch, workers) cells evaluated
  std::string note;                     // what the method fixed (e.g. "batch fixed at 32")
  // A run that stops at the target (coconfig-early-stop): the run the point
  // model expects for `best`, then for each alternative; `best` and
  // `alternatives` hold the budgets. Empty for fixed-epoch methods.
  std::vector<Candidate> expected;
};

// Throws InputError when the problem is malformed (no batches, deadline <= 0, ...).
void validate(const PlanProblem& p);

// Nodes for `workers` when nodes hold `workers_per_node` (0: unknown, gives 0).
int nodes_for(int workers, int workers_per_node);

// Costs within this relative tolerance are ties (then the metric decides).
bool same_cost(double a, double b);

// Is `a` preferred to `b`: lower cost, then better metric, then fewer workers,
// then smaller batch (the last two only make the order total and reproducible).
bool preferred(const Candidate& a, const Candidate& b, MetricDirection d);

}  // namespace trainplan::plan
