#include "plan/planner.h"

#include <fmt/format.h>

#include "core/error.h"
#include "plan/diagnose.h"
#include "plan/exhaustive.h"

namespace trainplan::plan {
namespace {

class CoconfigPlanner : public Planner {
 public:
  explicit CoconfigPlanner(const PlannerOptions& o) : o_(o) {}
  std::string name() const override { return "coconfig-" + o_.search; }
  PlanResult plan(const models::PerformanceModel& m, const PlanProblem& p) const override {
    if (resolve_search(o_.search, p) == "exhaustive") {
      ExhaustiveParams ep;
      ep.alternatives = o_.alternatives;
      ep.epochs = o_.epochs;
      return exhaustive_search(m, p, ep);
    }
    TabuParams tp = o_.tabu;
    tp.seed = o_.seed;
    tp.alternatives = o_.alternatives;
    tp.epochs = o_.epochs;
    return tabu_search(m, p, tp);
  }

 private:
  PlannerOptions o_;
};

}  // namespace

std::string resolve_search(const std::string& search, const PlanProblem& p) {
  if (search != "auto") return search;
  long cells = static_cast<long>(p.space.batches.size()) * p.space.max_workers;
  return cells <= kExhaustiveCellLimit ? "exhaustive" : "tabu";
}

std::vector<std::string> planner_names() { return {"coconfig", "lb-bsp", "cynthia", "bo", "manual"}; }

std::unique_ptr<Planner> make_planner(const std::string& method, const PlannerOptions& opts) {
  if (opts.search != "tabu" && opts.search != "exhaustive" && opts.search != "auto")
    throw InputError("unknown search '" + opts.search + "' (known: tabu, exhaustive, auto)");
  if (method == "coconfig") return std::make_unique<CoconfigPlanner>(opts);
  if (method == "lb-bsp") return make_lb_bsp(opts);
  if (method == "cynthia") return make_cynthia(opts);
  if (method == "bo") return make_bo(opts);
  if (method == "manual") return make_manual(opts);
  throw InputError("unknown method '" + method + "' (known: coconfig, lb-bsp, cynthia, bo, manual)");
}

PlanResult search_fixed_batch(const models::PerformanceModel& m, const PlanProblem& p, int batch,
                              const std::string& method, const PlannerOptions& opts) {
  PlanProblem fixed = p;
  fixed.space.batches = {batch};
  ExhaustiveParams ep;
  ep.alternatives = opts.alternatives;
  ep.epochs = opts.epochs;
  try {
    PlanResult r = exhaustive_search(m, fixed, ep);
    r.method = method;
    return r;
  } catch (const InfeasibleError&) {
    throw InfeasibleError(fmt::format("{}: no configuration with batch {} meets both constraints\n{}", method, batch,
                                      infeasibility_report(m, fixed)));
  }
}

}  // namespace trainplan::plan
