// Cynthia as the paper uses it: it provisions resources for a job whose batch
// is fixed. Here the batch is 32, or the candidate nearest to 32 (the smaller
// on a tie); workers and epochs come from the same exact search.
#include <fmt/format.h>

#include <cstdlib>

#include "plan/planner.h"

namespace trainplan::plan {
namespace {

constexpr int kCynthiaBatch = 32;

class CynthiaPlanner : public Planner {
 public:
  explicit CynthiaPlanner(const PlannerOptions& o) : o_(o) {}
  std::string name() const override { return "cynthia"; }
  PlanResult plan(const models::PerformanceModel& m, const PlanProblem& p) const override {
    validate(p);
    int best = p.space.batches.front();
    for (int b : p.space.batches)
      if (std::abs(b - kCynthiaBatch) < std::abs(best - kCynthiaBatch)) best = b;
    PlanResult res = search_fixed_batch(m, p, best, name(), o_);
    res.note = fmt::format("batch fixed at {} (candidate nearest to {})", best, kCynthiaBatch);
    return res;
  }

 private:
  PlannerOptions o_;
};

PlannerRegistrar reg(30, "cynthia", [](const PlannerOptions& o) { return std::make_unique<CynthiaPlanner>(o); });

}  // namespace

}  // namespace trainplan::plan
