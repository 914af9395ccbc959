// Evaluating one (batch, workers) cell: its epoch time and the smallest
// number of epochs that meets the target within the deadline.
#pragma once
#include <optional>
#include <vector>

#include "models/performance_model.h"
#include "plan/problem.h"

namespace trainplan::plan {

// How the smallest feasible epoch count is found for a fixed (b, r).
//  kBinary: binary search on e. Exact when the predicted metric is monotone in
//           e (non-decreasing for max, non-increasing for min), which every
//           model here is built to satisfy; O(log E) metric queries.
//  kLinear: scan e = 1, 2, ... Exact for any model; O(E) queries. Used for the
//           oracle optimum in benchmarks so that "optimal" does not rest on the
//           monotonicity assumption.
enum class EpochSearch { kBinary, kLinear };

// The largest epoch count the deadline and the cap allow at `epoch_time_s` (0 if none).
int max_epochs_within(const PlanProblem& p, double epoch_time_s);

// The cheapest feasible candidate at (batch, workers), or nullopt when the
// cell diverged in profiling (space.diverged), the model has no epoch time
// there, or no e in [1, max_epochs_within] meets the target.
std::optional<Candidate> evaluate_cell(const models::PerformanceModel& m, const PlanProblem& p, int batch, int workers,
                                       EpochSearch search = EpochSearch::kBinary);

// A fixed configuration as the model sees it (no feasibility check), or nullopt
// when it diverged in profiling or the model has no epoch time or metric there.
std::optional<Candidate> evaluate_config(const models::PerformanceModel& m, const PlanProblem& p, const Config& c);

// Keeps the k+1 preferred candidates offered (the best and k alternatives).
class Leaderboard {
 public:
  Leaderboard(size_t alternatives, MetricDirection d) : keep_(alternatives + 1), dir_(d) {}
  void offer(const Candidate& c);
  bool empty() const { return top_.empty(); }
  bool full() const { return top_.size() == keep_; }
  const std::vector<Candidate>& top() const { return top_; }  // best first
  // Fills best and alternatives of `r`; call only when !empty().
  void fill(PlanResult& r) const;

 private:
  size_t keep_;
  MetricDirection dir_;
  std::vector<Candidate> top_;
};

}  // namespace trainplan::plan
