#include "plan/problem.h"

#include <algorithm>
#include <cmath>

#include "core/nodes.h"
#include "core/error.h"

namespace trainplan::plan {

void validate(const PlanProblem& p) {
  if (p.space.batches.empty()) throw InputError("no candidate batches to plan over");
  for (int b : p.space.batches)
    if (b <= 0) throw InputError("candidate batches must be positive, got " + std::to_string(b));
  if (!std::is_sorted(p.space.batches.begin(), p.space.batches.end()) ||
      std::adjacent_find(p.space.batches.begin(), p.space.batches.end()) != p.space.batches.end())
    throw InputError("candidate batches must be sorted and distinct");
  if (p.space.max_workers < 1) throw InputError("max workers must be >= 1");
  if (p.space.max_epochs < 1) throw InputError("max epochs must be >= 1");
  if (p.space.workers_per_node < 0) throw InputError("workers per node must be >= 0");
  if (!(p.deadline_s > 0) || !std::isfinite(p.deadline_s)) throw InputError("deadline must be a positive number of seconds");
  if (!std::isfinite(p.target)) throw InputError("target must be a finite number");
}

int nodes_for(int workers, int workers_per_node) {
  return workers_per_node > 0 ? trainplan::nodes_for(workers, workers_per_node) : 0;
}

bool same_cost(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

bool preferred(const Candidate& a, const Candidate& b, MetricDirection d) {
  if (!same_cost(a.cost, b.cost)) return a.cost < b.cost;
  if (a.metric != b.metric) return metric_better(a.metric, b.metric, d);
  if (a.config.workers != b.config.workers) return a.config.workers < b.config.workers;
  return a.config.batch < b.config.batch;
}

}  // namespace trainplan::plan
