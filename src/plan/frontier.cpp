#include "plan/frontier.h"

#include <cmath>

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace trainplan::plan {

std::vector<Candidate> cost_time_frontier(const models::PerformanceModel& m, const PlanProblem& p,
                                          EpochSearch search) {
  PlanProblem unbounded = p;
  unbounded.deadline_s = std::numeric_limits<double>::infinity();
  std::vector<Candidate> cells;
  for (int b : p.space.batches)
    for (int r = 1; r <= p.space.max_workers; ++r)
      if (auto c = evaluate_cell(m, unbounded, b, r, search)) cells.push_back(*c);
  const MetricDirection d = m.direction();
  // Fastest first; among equal times the preferred (cheapest) cell first, so
  // that it is the one kept.
  std::sort(cells.begin(), cells.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.total_time_s != b.total_time_s) return a.total_time_s < b.total_time_s;
    return preferred(a, b, d);
  });
  std::vector<Candidate> front;
  for (const auto& c : cells)
    if (front.empty() || (c.cost < front.back().cost && !same_cost(c.cost, front.back().cost))) front.push_back(c);
  return front;
}

double ceil_significant(double seconds, int digits) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return seconds;
  const double scale = std::pow(10.0, std::floor(std::log10(seconds)) - digits + 1);
  // The division's rounding may put an exact figure a hair over: such a figure stays.
  const double steps = seconds / scale;
  return (std::abs(steps - std::round(steps)) < 1e-9 ? std::round(steps) : std::ceil(steps)) * scale;
}

std::string frontier_table(const std::vector<Candidate>& front, double deadline_s) {
  // The point in effect at the deadline: the last one that finishes by it.
  const Candidate* at = nullptr;
  for (const auto& c : front)
    if (c.total_time_s <= deadline_s) at = &c;
  std::string out = fmt::format("  {:>12} {:>6} {:>7} {:>6} {:>10} {:>12}", "deadline_s>=", "batch", "workers", "epochs",
                                "metric", "cost_w_s");
  out += at ? fmt::format(" {:>10}\n", "vs_deadline") : "\n";
  for (const auto& c : front) {
    // Significant digits, not decimals: runs of a fraction of a second apart stay apart.
    out += fmt::format("  {:>12.4g} {:>6} {:>7} {:>6} {:>10.5g} {:>12.4g}", ceil_significant(c.total_time_s), c.config.batch,
                       c.config.workers, c.config.epochs, c.metric, c.cost);
    if (at) out += fmt::format(" {:>+9.1f}%", 100.0 * (c.cost / at->cost - 1.0));
    if (&c == at) out += "  <- deadline";
    out += "\n";
  }
  return out;
}

}  // namespace trainplan::plan
