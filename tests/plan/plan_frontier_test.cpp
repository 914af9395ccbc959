#include <gtest/gtest.h>

#include <limits>

#include "core/error.h"
#include "plan/exhaustive.h"
#include "plan/frontier.h"
#include "plan/plan_plot.h"
#include "plan_test_models.h"
#include "test_util.h"

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

namespace {
Candidate point_at(double time_s, double cost, int batch) {
  Candidate c;
  c.config.batch = batch;
  c.config.workers = 1;
  c.config.epochs = 1;
  c.total_time_s = time_s;
  c.cost = cost;
  c.metric = 0.9;
  return c;
}
}  // namespace

TEST(PlanFrontier, TableRowsOfSubSecondRunsStayDistinct) {
  // Runs a fraction of a second apart: one decimal would print 0.1 twice.
  std::vector<Candidate> front = {point_at(0.12, 0.5, 64), point_at(0.14, 0.3, 32)};
  std::string t = frontier_table(front, 70);
  auto rows = tptest::lines(t);
  if (!rows.empty() && rows.back().empty()) rows.pop_back();
  ASSERT_EQ(rows.size(), 3u) << t;
  auto first_field = [](const std::string& row) {
    size_t a = row.find_first_not_of(' ');
    return row.substr(a, row.find(' ', a) - a);
  };
  EXPECT_NE(first_field(rows[1]), first_field(rows[2])) << t;
}

TEST(PlanFrontier, ChartSpansTheFrontierNotAFarDeadline) {
  std::vector<Candidate> front = {point_at(0.05, 0.5, 64), point_at(0.1, 0.4, 48), point_at(0.3, 0.3, 32)};
  // A 70 s deadline: the axis still spans the frontier, and no deadline line is
  // drawn (the title says where it is).
  io::PlotPanel far = frontier_panel(front, 70);
  ASSERT_TRUE(far.xrange);
  EXPECT_LT(far.xrange->second, 1.0);
  EXPECT_LE(far.xrange->first, 0.05);
  for (const auto& s : far.series) EXPECT_EQ(s.title.find("deadline"), std::string::npos) << s.title;
  EXPECT_NE(far.title.find("right of the chart"), std::string::npos) << far.title;
  // A deadline inside the frontier's span is drawn.
  io::PlotPanel near = frontier_panel(front, 0.2);
  bool drawn = false;
  for (const auto& s : near.series) drawn = drawn || s.title.find("your deadline") != std::string::npos;
  EXPECT_TRUE(drawn);
  EXPECT_GE(near.xrange->second, 0.3);
}
