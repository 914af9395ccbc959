#include "plan/exhaustive.h"

#include "core/cancel.h"
#include "plan/diagnose.h"

namespace trainplan::plan {

PlanResult exhaustive_search(const models::PerformanceModel& m, const PlanProblem& p, const ExhaustiveParams& params) {
  validate(p);
  PlanResult res;
  res.method = "coconfig-exhaustive";
  Leaderboard board(static_cast<size_t>(std::max(0, params.alternatives)), m.direction());
  for (int b : p.space.batches)
    for (int r = 1; r <= p.space.max_workers; ++r) {
      ++res.evaluations;
      check_cancelled();
      // Exact pruning: a cell costs at least r * t (one epoch); when that is
      // already beyond the worst kept cost (outside the tie tolerance), skip
      // the epoch search.
      if (board.full()) {
        auto t = m.epoch_time(b, r, nodes_for(r, p.space.workers_per_node));
        if (!t || (r * *t > board.top().back().cost && !same_cost(r * *t, board.top().back().cost))) continue;
      }
      if (auto c = evaluate_cell(m, p, b, r, params.epochs)) board.offer(*c);
    }
  if (board.empty()) throw_infeasible(m, p, res.method);
  board.fill(res);
  return res;
}

}  // namespace trainplan::plan
