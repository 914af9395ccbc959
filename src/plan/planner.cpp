#include "plan/planner.h"

#include <fmt/format.h>

#include "core/error.h"
#include "plan/diagnose.h"
#include "plan/exhaustive.h"

#include <algorithm>

namespace trainplan::plan {
namespace {

class JointSearchPlanner : public Planner {
 public:
  explicit JointSearchPlanner(const PlannerOptions& o) : o_(o) {}
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

namespace {

struct RegisteredPlanner {
  int order;
  std::string method;
  PlannerFactory make;
  PlannerListing listing;
};

std::vector<RegisteredPlanner>& planner_registry() {
  static std::vector<RegisteredPlanner> r;
  return r;
}

PlannerRegistrar joint_search(10, "coconfig", [](const PlannerOptions& o) { return std::make_unique<JointSearchPlanner>(o); });

}  // namespace

PlannerRegistrar::PlannerRegistrar(int order, const std::string& method, PlannerFactory make,
                                   PlannerListing listing) {
  auto& r = planner_registry();
  r.push_back({order, method, std::move(make), listing});
  std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
}

std::vector<std::string> planner_names() {
  std::vector<std::string> out;
  for (const auto& p : planner_registry())
    if (p.listing == PlannerListing::kListed) out.push_back(p.method);
  return out;
}

std::unique_ptr<Planner> make_planner(const std::string& method, const PlannerOptions& opts) {
  if (opts.search != "tabu" && opts.search != "exhaustive" && opts.search != "auto")
    throw InputError("unknown search '" + opts.search + "' (known: tabu, exhaustive, auto)");
  for (const auto& p : planner_registry())
    if (p.method == method) return p.make(opts);
  std::string known;
  for (const auto& n : planner_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown method '" + method + "' (known: " + known + ")");
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
    auto found = diagnose_infeasibility(m, fixed);
    const std::string what =
        fmt::format("{}: no configuration with batch {} meets both constraints\n{}", method, batch, found.report);
    throw InfeasibleError(what, std::move(found.shortfall));
  }
}

}  // namespace trainplan::plan
