// LB-BSP as the paper uses it: batch sizing for computational efficiency
// only, which ends in the largest batch the hardware takes. Here: the largest
// candidate batch for which the model gives an epoch time at some worker
// count ("fits"); workers and epochs then come from the same exact search.
#include <fmt/format.h>

#include "plan/diagnose.h"
#include "plan/planner.h"

namespace trainplan::plan {
namespace {

class LbBspPlanner : public Planner {
 public:
  explicit LbBspPlanner(const PlannerOptions& o) : o_(o) {}
  std::string name() const override { return "lb-bsp"; }
  PlanResult plan(const models::PerformanceModel& m, const PlanProblem& p) const override {
    validate(p);
    const auto& bs = p.space.batches;
    for (auto it = bs.rbegin(); it != bs.rend(); ++it)
      for (int r = 1; r <= p.space.max_workers; ++r)
        if (m.epoch_time(*it, r, nodes_for(r, p.space.workers_per_node))) {
          PlanResult res = search_fixed_batch(m, p, *it, name(), o_);
          res.note = fmt::format("batch fixed at the largest candidate that fits: {}", *it);
          return res;
        }
    throw_infeasible(m, p, name());
  }

 private:
  PlannerOptions o_;
};

PlannerRegistrar reg(20, "lb-bsp", [](const PlannerOptions& o) { return std::make_unique<LbBspPlanner>(o); });

}  // namespace

}  // namespace trainplan::plan
