// Which trials to run, and in what order.
//   grid:   every (batch, workers, epochs) of the given lists, the shape of
//           the paper's plan (r = 1..8, 10 batches, 3 epoch counts).
//   budget: the same candidates in the order that best pins down the models
//           first, run while the estimated cost still fits the time budget:
//     1. the four (b, r) corners at the fewest epochs, for the time model;
//     2. the smallest and the largest batch at the fewest workers and the
//        most epochs, then the middle batch at the middle epoch count, for
//        the metric model's epoch axis (fewest workers: the cheapest);
//     3. then, greedily, the candidate farthest from every trial chosen so
//        far (maximin in normalised log2 b, r, e), ties to the lower index.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "profile/trial.h"

namespace trainplan::profile {

struct GridSpec {
  std::vector<int> batches;  // per-worker batches, each >= 1
  std::vector<int> workers;  // worker counts, each >= 1
  std::vector<int> epochs;   // epoch counts, each >= 1
};

// The paper's grid: r = 1..8, 10 batches evenly over [16, 256], epochs {1, 20, 40}.
GridSpec paper_grid();
// This machine's default: batches {16,32,64,128}, workers {1,2}, epochs {1,2}.
GridSpec local_grid();

// Sorts and dedupes the lists; throws InputError naming the option for an
// empty list or a value < 1.
GridSpec normalise(GridSpec g);

// Every trial of the grid, ordered by epochs, then workers, then batch.
std::vector<TrialKey> grid_trials(const GridSpec& g);
// Every trial of the grid in budget priority order (see above).
std::vector<TrialKey> budget_order(const GridSpec& g);
// `order` preceded by a time trial (epochs 0) of each of its (batch, workers),
// in the order they first appear: cheap, and they pin the time model first.
std::vector<TrialKey> with_time_trials(const std::vector<TrialKey>& order);
// A plan that measures time and metric apart, where that is cheaper: a time
// trial of every (b, r) of the grid, then training trials per distinct
// global batch b·r (each epoch count of the grid, fewest first), on the most
// workers that reach that batch (they share the work), instead of on every
// (b, r).
// It relies on the trainer's equivalence of (b, r) and (b·r, 1) at equal
// global batch (docs/TRAINER.md), which synchronous SGD with gradient
// averaging has.
// longest_only: each global batch is trained once, for the most epochs of
// the grid; the shorter counts are read off its learning curve (see
// SampleStore::kCurveEpochsKey), for a trainer whose first k epochs do not
// depend on how many follow (the built-in one: a constant learning rate and
// a per-epoch shuffle seeded by the epoch).
std::vector<TrialKey> time_and_global_batch_plan(const GridSpec& g, bool longest_only = false);

// Parses "1,2,4" into integers; throws InputError naming `option` on bad text.
std::vector<int> parse_int_list(const std::string& text, const std::string& option);
// Parses "180s", "3m", "1h30m", "60d", "2w", "90" (seconds); throws InputError naming `option`.
double parse_duration(const std::string& text, const std::string& option);

// Estimates a trial's wall time from the trials already run:
//   wall ≈ overhead + scale · epochs · t_epoch(b, r),
// with log t_epoch = c0 + c1 log b + c2 log r fitted by ridge least squares
// on the reported epoch times (pulled towards c1 = 0, c2 = -0.5, so one or
// two trials already give an estimate), then overhead >= 0 and scale > 0 by
// least squares on the trials' wall times (one trial: scale 1).
class CostEstimator {
 public:
  void add(const TrialRecord& r);
  // The same for many at once, refitted once (a resumed store's trials).
  void add_all(const std::vector<TrialRecord>& records);
  // nullopt before any trial has been added.
  std::optional<double> estimate(const TrialKey& k) const;
  int count() const { return int(records_.size()); }

 private:
  void refit();
  std::vector<TrialRecord> records_;
  double c_[3] = {0, 0, -0.5};
  double overhead_ = 0;
  double scale_ = 1;
  double mean_wall_ = 0;
  std::optional<double> mean_time_trial_wall_;  // time trials are priced by their own mean wall
  int n_ok_ = 0;
};

}  // namespace trainplan::profile
