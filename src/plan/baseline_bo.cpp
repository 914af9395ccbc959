// Bayesian optimisation of the batch alone, for the final metric (the paper's
// BO baseline). The objective of a batch b is the predicted metric at the
// largest epoch budget (the space's epoch cap) with the worker count fixed at
// BoParams::workers (default 1: tuning the batch on one worker, as BO tuning
// of a hyper-parameter alone does). A GP with an RBF kernel over log2(b),
// scaled to [0, 1], and expected improvement choose which candidate batch to
// try next. A batch where the model has no metric scores as the worst seen.
// The batch with the best observed metric is then planned like the other
// fixed-batch baselines: the cheapest feasible (workers, epochs).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "core/error.h"
#include "plan/diagnose.h"
#include "plan/planner.h"

namespace trainplan::plan {
namespace {

class BoPlanner : public Planner {
 public:
  explicit BoPlanner(const PlannerOptions& o) : o_(o) {}
  std::string name() const override { return "bo"; }

  PlanResult plan(const models::PerformanceModel& m, const PlanProblem& p) const override {
    validate(p);
    const auto& bs = p.space.batches;
    const int n = static_cast<int>(bs.size());
    const bool maximise = m.direction() == MetricDirection::kMax;
    const int r = std::clamp(o_.bo.workers, 1, p.space.max_workers);
    double lo = std::log2(bs.front()), hi = std::log2(bs.back());
    auto xpos = [&](int i) { return hi > lo ? (std::log2(bs[i]) - lo) / (hi - lo) : 0.0; };
    // Observed objective (to maximise) per candidate index; nullopt = model has no metric.
    std::vector<std::optional<double>> seen(n);
    std::vector<bool> tried(n, false);
    auto observe = [&](int i) {
      tried[i] = true;
      if (auto v = m.metric(bs[i], r, p.space.max_epochs)) seen[i] = maximise ? *v : -*v;
    };
    std::mt19937_64 rng(o_.seed);
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    int budget = std::min(n, std::max(1, o_.bo.initial) + std::max(0, o_.bo.iterations));
    int used = 0;
    for (int k = 0; k < std::min(n, std::max(1, o_.bo.initial)); ++k, ++used) observe(order[k]);
    numerics::GaussianProcess gp(numerics::GpParams{o_.bo.length_scale, o_.bo.noise});
    for (; used < budget; ++used) {
      std::vector<double> xs, ys;
      double worst = 0, best = 0;
      bool any = false;
      for (int i = 0; i < n; ++i)
        if (seen[i]) {
          worst = any ? std::min(worst, *seen[i]) : *seen[i];
          best = any ? std::max(best, *seen[i]) : *seen[i];
          any = true;
        }
      for (int i = 0; i < n; ++i)
        if (tried[i]) {
          xs.push_back(xpos(i));
          ys.push_back(seen[i] ? *seen[i] : worst);
        }
      int pick = -1;
      double top = -1;
      if (any) {
        gp.fit(xs, ys);
        for (int i = 0; i < n; ++i)
          if (!tried[i]) {
            auto [mu, sd] = gp.predict(xpos(i));
            double ei = numerics::expected_improvement(mu, sd, best);
            if (ei > top) top = ei, pick = i;
          }
      } else {
        for (int i : order)
          if (!tried[i]) {
            pick = i;
            break;
          }
      }
      if (pick < 0) break;
      observe(pick);
    }
    int chosen = -1;
    for (int i = 0; i < n; ++i)
      if (seen[i] && (chosen < 0 || *seen[i] > *seen[chosen])) chosen = i;
    if (chosen < 0) {
      auto found = diagnose_infeasibility(m, p);
      const std::string what = fmt::format("bo: the model gives no metric for any tried batch at {} worker{}\n{}", r,
                                           r == 1 ? "" : "s", found.report);
      throw InfeasibleError(what, std::move(found.shortfall));
    }
    PlanResult res = search_fixed_batch(m, p, bs[chosen], name(), o_);
    res.evaluations += used;
    double metric = maximise ? *seen[chosen] : -*seen[chosen];
    res.note = fmt::format("batch {} chosen by BO ({} of {} batches tried, predicted metric {:.4g} at {} epochs on {} worker{})",
                           bs[chosen], used, n, metric, p.space.max_epochs, r, r == 1 ? "" : "s");
    return res;
  }

 private:
  PlannerOptions o_;
};

PlannerRegistrar reg(40, "bo", [](const PlannerOptions& o) { return std::make_unique<BoPlanner>(o); });

}  // namespace

}  // namespace trainplan::plan
