// Manual tuning as the paper's baseline: the best of N tries (60 in the
// paper) of random (batch, workers, epochs). A person would not try a run
// that cannot finish by the deadline, so epochs are drawn from 1 up to what
// the deadline (and the epoch cap) allows at that (batch, workers). Each try
// is judged with the same model the other methods plan with.
#include <fmt/format.h>

#include <map>
#include <random>
#include <utility>

#include "core/cancel.h"
#include "core/error.h"
#include "plan/diagnose.h"
#include "plan/objective.h"
#include "plan/planner.h"

namespace trainplan::plan {
namespace {

class ManualPlanner : public Planner {
 public:
  explicit ManualPlanner(const PlannerOptions& o) : o_(o) {}
  std::string name() const override { return "manual"; }
  PlanResult plan(const models::PerformanceModel& m, const PlanProblem& p) const override {
    validate(p);
    if (o_.manual_tries < 1) throw InputError("manual tries must be >= 1");
    std::mt19937_64 rng(o_.seed);
    std::uniform_int_distribution<size_t> bi(0, p.space.batches.size() - 1);
    std::uniform_int_distribution<int> wr(1, p.space.max_workers);
    // The best try at each (batch, workers): the alternatives are distinct
    // configurations, as every planner's are, not repeats of one.
    std::map<std::pair<int, int>, Candidate> best_at;
    PlanResult res;
    res.method = name();
    for (int i = 0; i < o_.manual_tries; ++i) {
      if ((i & 1023) == 1023) check_cancelled();  // a server request past its time limit stops here
      int b = p.space.batches[bi(rng)], r = wr(rng);
      ++res.evaluations;
      auto t = m.epoch_time(b, r, nodes_for(r, p.space.workers_per_node));
      if (!t) continue;
      int cap = max_epochs_within(p, *t);
      if (cap < 1) continue;
      int e = std::uniform_int_distribution<int>(1, cap)(rng);
      auto c = evaluate_config(m, p, Config{b, r, e});
      if (!c || !meets(c->metric, p.target, m.direction())) continue;
      auto [it, added] = best_at.try_emplace({b, r}, *c);
      if (!added && preferred(*c, it->second, m.direction())) it->second = *c;
    }
    Leaderboard board(static_cast<size_t>(std::max(0, o_.alternatives)), m.direction());
    for (const auto& [cell, c] : best_at) board.offer(c);
    if (board.empty()) {
      auto found = diagnose_infeasibility(m, p);
      const std::string what =
          fmt::format("manual: none of {} random tries meets both constraints\n{}", o_.manual_tries, found.report);
      throw InfeasibleError(what, std::move(found.shortfall));
    }
    board.fill(res);
    res.note = fmt::format("best of {} random tries", o_.manual_tries);
    return res;
  }

 private:
  PlannerOptions o_;
};

PlannerRegistrar reg(50, "manual", [](const PlannerOptions& o) { return std::make_unique<ManualPlanner>(o); });

}  // namespace

}  // namespace trainplan::plan
