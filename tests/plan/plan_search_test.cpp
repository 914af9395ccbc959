#include <gtest/gtest.h>

#include <cmath>

#include <limits>
#include <map>
#include <string>

#include "core/error.h"
#include "plan/diagnose.h"
#include "plan/exhaustive.h"
#include "plan/objective.h"
#include "plan/tabu.h"
#include "plan_test_models.h"

using namespace trainplan;
using namespace trainplan::plan;
using plantest::FnModel;

namespace {

PlanProblem small_problem(double target, double deadline, int max_workers = 6, int max_epochs = 60) {
  PlanProblem p;
  p.space.batches = {16, 32, 48, 64, 128, 256};
  p.space.max_workers = max_workers;
  p.space.max_epochs = max_epochs;
  p.space.workers_per_node = 4;
  p.target = target;
  p.deadline_s = deadline;
  return p;
}

// The definition, with no cleverness: every (b, r, e).
std::optional<Candidate> brute_force(const models::PerformanceModel& m, const PlanProblem& p) {
  std::optional<Candidate> best;
  for (int b : p.space.batches)
    for (int r = 1; r <= p.space.max_workers; ++r)
      for (int e = 1; e <= p.space.max_epochs; ++e) {
        int nodes = nodes_for(r, p.space.workers_per_node);
        auto t = m.epoch_time(b, r, nodes);
        auto v = m.metric(b, r, e);
        if (!t || !v || e * *t > p.deadline_s || !meets(*v, p.target, m.direction())) continue;
        Candidate c{Config{b, r, e}, nodes, *t, e * *t, *v, r * e * *t};
        if (!best || preferred(c, *best, m.direction())) best = c;
      }
  return best;
}

}  // namespace

TEST(PlanExhaustive, MatchesBruteForceOnAnalyticModels) {
  for (auto dir : {MetricDirection::kMax, MetricDirection::kMin}) {
    auto m = plantest::physical_model(dir);
    for (double acc : {0.6, 0.8, 0.85, 0.9})
      for (double deadline : {300.0, 1000.0, 5000.0, 1e6}) {
        double target = dir == MetricDirection::kMax ? acc : 1.0 - acc;
        auto p = small_problem(target, deadline);
        auto want = brute_force(m, p);
        if (!want) {
          EXPECT_THROW(exhaustive_search(m, p), InfeasibleError) << acc << " " << deadline;
          continue;
        }
        for (auto search : {EpochSearch::kBinary, EpochSearch::kLinear}) {
          auto got = exhaustive_search(m, p, {3, search});
          EXPECT_EQ(got.best.config, want->config) << acc << " " << deadline;
          EXPECT_DOUBLE_EQ(got.best.cost, want->cost);
        }
      }
  }
}

TEST(PlanExhaustive, AlternativesAreDistinctCellsInPreferenceOrder) {
  auto m = plantest::physical_model();
  auto r = exhaustive_search(m, small_problem(0.8, 1e6), {4, EpochSearch::kBinary});
  ASSERT_EQ(r.alternatives.size(), 4u);
  EXPECT_EQ(r.evaluations, 36);
  const Candidate* prev = &r.best;
  for (const auto& c : r.alternatives) {
    EXPECT_FALSE(preferred(c, *prev, MetricDirection::kMax));
    EXPECT_FALSE(c.config.batch == r.best.config.batch && c.config.workers == r.best.config.workers);
    prev = &c;
  }
}

// A cell whose training diverged in profiling is never chosen, by either
// search, and the next best takes its place.
TEST(PlanExhaustive, DivergedCellsAreNeverChosen) {
  auto m = plantest::physical_model();
  auto p = small_problem(0.8, 1e6);
  const auto first = exhaustive_search(m, p, {3, EpochSearch::kBinary});
  p.space.diverged.insert({first.best.config.batch, first.best.config.workers});
  const auto again = exhaustive_search(m, p, {3, EpochSearch::kBinary});
  EXPECT_FALSE(again.best.config.batch == first.best.config.batch && again.best.config.workers == first.best.config.workers);
  EXPECT_EQ(again.best.config, first.alternatives.front().config);
  for (const auto& c : again.alternatives)
    EXPECT_FALSE(c.config.batch == first.best.config.batch && c.config.workers == first.best.config.workers);
  EXPECT_FALSE(evaluate_cell(m, p, first.best.config.batch, first.best.config.workers).has_value());
  const auto tabu = tabu_search(m, p);
  EXPECT_FALSE(tabu.best.config.batch == first.best.config.batch && tabu.best.config.workers == first.best.config.workers);
  EXPECT_FALSE(evaluate_config(m, p, first.best.config).has_value());  // the manual baseline's way in
  // Every cell diverged: the report says so, not that the target is out of reach somewhere it was never planned.
  for (int b : p.space.batches)
    for (int r = 1; r <= p.space.max_workers; ++r) p.space.diverged.insert({b, r});
  EXPECT_EQ(infeasibility_report(m, p).rfind("diverged: training diverged", 0), 0u) << infeasibility_report(m, p);
}

TEST(PlanExhaustive, EqualCostsGoToTheBetterMetric) {
  // Perfect scaling: cost = 100 e whatever b and r; all cells need e = 3 for
  // 0.3, and b = 64 gets the highest metric there.
  FnModel m([](int, int r, int) { return 100.0 / r; }, [](int b, int, double e) { return 0.1 * e + 0.001 * b; });
  PlanProblem p;
  p.space.batches = {16, 32, 64};
  p.space.max_workers = 4;
  p.space.max_epochs = 20;
  p.target = 0.3;
  p.deadline_s = 1e6;
  auto r = exhaustive_search(m, p);
  EXPECT_EQ(r.best.config, (Config{64, 1, 3}));
  EXPECT_NEAR(r.best.cost, 300, 1e-9);
  auto t = tabu_search(m, p);
  EXPECT_EQ(t.best.config, (Config{64, 1, 3}));
}

TEST(PlanExhaustive, LinearScanIsExactWhereBinarySearchAssumesMonotoneMetric) {
  // Metric spikes above the target at e = 2 only, then falls: a binary search
  // over e, which assumes monotonicity, misses it; the linear scan does not.
  FnModel m([](int, int, int) { return 10.0; }, [](int, int, double e) { return e == 2 ? 0.9 : 0.1 * std::min(e, 5.0); });
  PlanProblem p;
  p.space.batches = {32};
  p.space.max_workers = 1;
  p.space.max_epochs = 8;
  p.target = 0.8;
  p.deadline_s = 1e6;
  EXPECT_THROW(exhaustive_search(m, p, {0, EpochSearch::kBinary}), InfeasibleError);
  EXPECT_EQ(exhaustive_search(m, p, {0, EpochSearch::kLinear}).best.config.epochs, 2);
}

TEST(PlanExhaustive, NodesArePassedToTheTimeModel) {
  // Crossing a node boundary costs a lot: 5 workers need 2 nodes of 4.
  FnModel m([](int, int r, int nodes) { return 1000.0 / r * (nodes > 1 ? 3.0 : 1.0); },
            [](int, int, double e) { return e; });
  PlanProblem p;
  p.space.batches = {32};
  p.space.max_workers = 8;
  p.space.workers_per_node = 4;
  p.space.max_epochs = 10;
  p.target = 2;
  p.deadline_s = 600;  // 2 epochs: 4 workers on one node take 500 s
  auto r = exhaustive_search(m, p);
  EXPECT_EQ(r.best.config.workers, 4);
  EXPECT_EQ(r.best.nodes, 1);
}

TEST(PlanTabu, FindsTheExhaustiveOptimumOnAConvexishSpace) {
  // Epochs fixed by the metric (0.1 e >= 0.5: e = 5), cost smooth and convex
  // in (b, r); the deadline pushes the optimum off the r = 1 edge.
  FnModel m([](int b, int r, int) { return 1000.0 / (double(b) * r) * (0.5 + 0.01 * b) + 2.0 * r; },
            [](int, int, double e) { return 0.1 * e; });
  PlanProblem p;
  for (int b = 16; b <= 512; b += 16) p.space.batches.push_back(b);
  p.space.max_workers = 16;
  p.space.max_epochs = 200;
  p.target = 0.5;
  p.deadline_s = 60;
  auto ex = exhaustive_search(m, p);
  EXPECT_GT(ex.best.config.workers, 1);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    TabuParams tp;
    tp.seed = seed;
    auto t = tabu_search(m, p, tp);
    EXPECT_EQ(t.best.config, ex.best.config) << "seed " << seed;
    EXPECT_LT(t.evaluations, 32 * 16);  // it did not just enumerate the space
  }
}

TEST(PlanTabu, IsReproducibleForASeedAndFeasible) {
  auto m = plantest::physical_model();
  auto p = small_problem(0.85, 3000);
  TabuParams tp;
  tp.seed = 7;
  tp.iterations = 5;
  auto a = tabu_search(m, p, tp), b = tabu_search(m, p, tp);
  EXPECT_EQ(a.best.config, b.best.config);
  EXPECT_TRUE(meets(a.best.metric, p.target, MetricDirection::kMax));
  EXPECT_LE(a.best.total_time_s, p.deadline_s);
}

TEST(PlanInfeasible, UnreachableTargetNamesTheTargetAndTheBestMetric) {
  auto m = plantest::physical_model();
  auto p = small_problem(0.99, 1e6);
  try {
    exhaustive_search(m, p);
    FAIL() << "expected InfeasibleError";
  } catch (const InfeasibleError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("target: >= 0.99 is not reachable"), std::string::npos) << w;
    EXPECT_NE(w.find("best predicted metric"), std::string::npos) << w;
    EXPECT_NE(w.find("unreachable at any epoch count"), std::string::npos) << w;
    ASSERT_TRUE(e.shortfall()) << w;
    EXPECT_EQ(e.shortfall()->constraint, "target");
    EXPECT_EQ(e.shortfall()->limit, 0.99);
    EXPECT_LT(e.shortfall()->closest, 0.99);
  }
}

TEST(PlanInfeasible, ShortDeadlineNamesTheDeadlineAndTheShortestTime) {
  auto m = plantest::physical_model();
  auto p = small_problem(0.85, 50);
  try {
    tabu_search(m, p);
    FAIL() << "expected InfeasibleError";
  } catch (const InfeasibleError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("deadline: reaching the target"), std::string::npos) << w;
    EXPECT_NE(w.find("shortest time that reaches the target"), std::string::npos) << w;
    EXPECT_NE(w.find("best metric reachable by the deadline"), std::string::npos) << w;
    // The same in figures: the deadline, and the soonest run that reaches the target, which
    // planning with its time as the deadline finds.
    ASSERT_TRUE(e.shortfall()) << w;
    const auto& f = *e.shortfall();
    EXPECT_EQ(f.constraint, "deadline");
    EXPECT_EQ(f.limit, 50);
    EXPECT_EQ(f.unit, "s");
    EXPECT_GT(f.closest, 50);
    std::map<std::string, double> c(f.configuration.begin(), f.configuration.end());
    EXPECT_DOUBLE_EQ(c.at("total_time_s"), f.closest);
    EXPECT_GE(c.at("metric"), 0.85);
    auto later = small_problem(0.85, f.closest * (1 + 1e-9));
    const auto r = exhaustive_search(m, later);
    EXPECT_LE(r.best.total_time_s, f.closest * (1 + 1e-9));
    // And no sooner: a hair less is still infeasible, so the figure is the least time, not any.
    EXPECT_THROW(exhaustive_search(m, small_problem(0.85, f.closest * (1 - 1e-9))), InfeasibleError);
  }
}

TEST(PlanInfeasible, NoEpochFitsTheDeadline) {
  FnModel m([](int, int, int) { return 100.0; }, [](int, int, double e) { return e; });
  PlanProblem p;
  p.space.batches = {32};
  p.space.max_workers = 2;
  p.target = 1;
  p.deadline_s = 10;
  std::string w = infeasibility_report(m, p);
  EXPECT_NE(w.find("fastest epoch takes 100.0 s"), std::string::npos) << w;
  // Near the deadline, as many figures as tell them apart: not "0.7 s" against a deadline of 0.7 s.
  FnModel near([](int, int, int) { return 0.724; }, [](int, int, double e) { return e; });
  p.deadline_s = 0.7;
  w = infeasibility_report(near, p);
  EXPECT_NE(w.find("fastest epoch takes 0.724 s"), std::string::npos) << w;
}

// Where the metric has flattened long before the deadline, the best it reaches
// by then is named at the fewest epochs that reach it (to 0.01%), not at the
// most the deadline allows.
TEST(PlanInfeasible, TheBestByTheDeadlineIsNamedWhereTheCurveFlattens) {
  FnModel m([](int, int, int) { return 1.0; }, [](int, int, double e) { return 0.9 - 0.1 * std::exp(-e); });
  PlanProblem p;
  p.space.batches = {32};
  p.space.max_workers = 1;
  p.space.max_epochs = 1000;
  p.target = 0.95;  // never reached
  p.deadline_s = 500;
  std::string w = infeasibility_report(m, p);
  EXPECT_NE(w.find("best metric reachable by the deadline: 0.9; to within 0.01% of it soonest: 0.899966 (batch 32, 1 "
                   "worker, 8 epochs, 8 s)"),
            std::string::npos)
      << w;
  // The target no epoch count reaches: its closest configuration is named at those 8 epochs too,
  // in the report and in figures, not at the 1000 the limit allows.
  EXPECT_NE(w.find("the best predicted metric is 0.9 (batch 32, 1 worker, 1000 epochs); to within 0.01% of it "
                   "soonest: 0.899966 (batch 32, 1 worker, 8 epochs, 8 s)"),
            std::string::npos)
      << w;
  const auto found = diagnose_infeasibility(m, p);
  ASSERT_TRUE(found.shortfall);
  EXPECT_EQ(found.shortfall->constraint, "target");
  std::map<std::string, double> c(found.shortfall->configuration.begin(), found.shortfall->configuration.end());
  EXPECT_EQ(c.at("epochs"), 8);
  EXPECT_DOUBLE_EQ(c.at("total_time_s"), 8);
  // The figure is the best metric (at the epoch limit); the configuration's, within 0.01% of it.
  EXPECT_DOUBLE_EQ(found.shortfall->closest, 0.9 - 0.1 * std::exp(-1000.0));
  EXPECT_LT(c.at("metric"), found.shortfall->closest);
  EXPECT_GT(c.at("metric"), found.shortfall->closest * (1 - 1e-4));
}

// A method that is not exhaustive (manual's random tries) can miss a configuration that meets
// both: the report says so, and names no constraint as failing.
TEST(PlanInfeasible, AFeasibleProblemTheMethodMissedIsNotCalledShortOfAConstraint) {
  auto m = plantest::physical_model();
  auto p = small_problem(0.85, 1e6);
  const auto best = exhaustive_search(m, p).best;  // feasible
  const auto found = diagnose_infeasibility(m, p);
  EXPECT_EQ(found.report.rfind("search: a configuration meets both constraints", 0), 0u) << found.report;
  EXPECT_FALSE(found.shortfall);
  EXPECT_LE(best.total_time_s, p.deadline_s);
}

TEST(PlanProblemCheck, RejectsMalformedProblems) {
  auto m = plantest::physical_model();
  auto p = small_problem(0.8, 100);
  p.deadline_s = 0;
  EXPECT_THROW(exhaustive_search(m, p), InputError);
  p = small_problem(0.8, 100);
  p.space.batches = {64, 32};
  EXPECT_THROW(exhaustive_search(m, p), InputError);
  p.space.batches.clear();
  EXPECT_THROW(tabu_search(m, p), InputError);
}
