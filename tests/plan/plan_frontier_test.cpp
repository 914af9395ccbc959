#include <gtest/gtest.h>

#include <limits>

#include "core/error.h"
#include "plan/exhaustive.h"
#include "plan/frontier.h"
#include "plan_test_models.h"

using namespace trainplan;
using namespace trainplan::plan;

namespace {

PlanProblem problem(double target) {
  PlanProblem p;
  p.space.batches = {16, 32, 48, 64, 128, 256};
  p.space.max_workers = 6;
  p.space.max_epochs = 60;
  p.space.workers_per_node = 4;
  p.target = target;
  p.deadline_s = 1;  // ignored by the frontier
  return p;
}

// The frontier's answer for a deadline: the last point that finishes by it.
const Candidate* at_deadline(const std::vector<Candidate>& front, double deadline) {
  const Candidate* at = nullptr;
  for (const auto& c : front)
    if (c.total_time_s <= deadline) at = &c;
  return at;
}

}  // namespace

// The property the frontier promises: read at any deadline it gives the cost
// that exhaustive search finds for that deadline, and nothing where the
// search finds nothing.
TEST(PlanFrontier, GivesTheExhaustiveCostAtEveryDeadline) {
  for (auto dir : {MetricDirection::kMax, MetricDirection::kMin}) {
    auto m = plantest::physical_model(dir);
    for (double acc : {0.6, 0.8, 0.9}) {
      PlanProblem p = problem(dir == MetricDirection::kMax ? acc : 1.0 - acc);
      auto front = cost_time_frontier(m, p);
      ASSERT_GE(front.size(), 2u) << acc;  // the analytic model trades time for cost
      std::vector<double> deadlines = {1.0, 50.0, 300.0, 1e3, 3e3, 1e4, 1e5, 1e7};
      for (const auto& c : front)
        for (double f : {0.999999, 1.0, 1.000001}) deadlines.push_back(c.total_time_s * f);
      for (double d : deadlines) {
        p.deadline_s = d;
        const Candidate* want = at_deadline(front, d);
        if (!want) {
          EXPECT_THROW(exhaustive_search(m, p), InfeasibleError) << acc << " " << d;
          continue;
        }
        auto got = exhaustive_search(m, p, {0, EpochSearch::kLinear});
        EXPECT_TRUE(same_cost(got.best.cost, want->cost)) << acc << " " << d << ": " << got.best.cost << " vs " << want->cost;
      }
    }
  }
}

TEST(PlanFrontier, EachPointIsSlowerAndStrictlyCheaperThanTheOneBefore) {
  auto m = plantest::physical_model();
  auto front = cost_time_frontier(m, problem(0.85));
  ASSERT_GE(front.size(), 2u);
  for (size_t i = 1; i < front.size(); ++i) {
    EXPECT_GT(front[i].total_time_s, front[i - 1].total_time_s) << i;
    EXPECT_LT(front[i].cost, front[i - 1].cost) << i;
    EXPECT_GE(front[i].metric, 0.85) << i;
  }
}

TEST(PlanFrontier, EmptyWhenTheTargetIsOutOfReach) {
  auto m = plantest::physical_model();
  EXPECT_TRUE(cost_time_frontier(m, problem(0.99)).empty());
}

TEST(PlanFrontier, TableMarksThePointInEffectAtTheDeadline) {
  auto m = plantest::physical_model();
  auto front = cost_time_frontier(m, problem(0.85));
  ASSERT_GE(front.size(), 2u);
  const double deadline = front[1].total_time_s;  // the second point applies from here
  std::string t = frontier_table(front, deadline);
  auto marked = t.find("<- deadline");
  ASSERT_NE(marked, std::string::npos) << t;
  // The marked row is line 2 (from 0): the header, the first point, then it.
  size_t line_start = t.rfind('\n', marked);
  int row = 0;
  for (size_t i = 0; i <= line_start; ++i) row += t[i] == '\n';
  EXPECT_EQ(row, 2) << t;
  EXPECT_NE(t.find("+0.0%  <- deadline"), std::string::npos) << t;
  // Before the first point there is nothing to compare with: no mark.
  EXPECT_EQ(frontier_table(front, front[0].total_time_s / 2).find("<-"), std::string::npos);
}
