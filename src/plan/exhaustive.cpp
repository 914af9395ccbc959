#include "plan/exhaustive.h"

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
      if (auto c = evaluate_cell(m, p, b, r, params.epochs)) board.offer(*c);
    }
  if (board.empty()) throw_infeasible(m, p, res.method);
  board.fill(res);
  return res;
}

}  // namespace trainplan::plan
