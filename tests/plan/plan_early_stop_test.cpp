// Planning and judging runs that stop at the target (plan/early_stop.h).
#include "plan/early_stop.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "plan/exhaustive.h"
#include "experiments/scenario.h"
#include "plan/objective.h"
#include "plan_test_models.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::experiments;
using plantest::FnModel;

namespace {

plan::PlanProblem problem(double target = 0.8, double deadline = 1e9) {
  plan::PlanProblem p;
  p.space.batches = {32, 64, 128, 256};
  p.space.max_workers = 8;
  p.space.max_epochs = 200;
  p.target = target;
  p.deadline_s = deadline;
  return p;
}

// The point model shifted down by `margin` (a pessimistic side), same epoch time.
FnModel shifted(double margin) {
  auto point = plantest::physical_model();
  return FnModel([point](int b, int r, int n) { return *point.epoch_time(b, r, n); },
                 [point, margin](int b, int r, double e) { return *point.metric(b, r, e) - margin; });
}

}  // namespace

TEST(EarlyStop, WithTheSameModelItIsEquationElevenAgain) {
  auto m = plantest::physical_model();
  auto p = problem();
  auto es = plan::plan_early_stop(m, m, p, 3, plan::EarlyStopBudget::kTarget);
  auto ex = plan::exhaustive_search(m, p, {3, plan::EpochSearch::kBinary});
  EXPECT_EQ(es.best.budget.config, ex.best.config);
  EXPECT_EQ(es.best.expected.config, ex.best.config);
  EXPECT_DOUBLE_EQ(es.best.expected.cost, ex.best.cost);
  ASSERT_EQ(es.alternatives.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(es.alternatives[i].expected.config, ex.alternatives[i].config) << i;
  EXPECT_EQ(es.evaluations, 4 * 8);
}

TEST(EarlyStop, BudgetComesFromTheSafeSideAndCostFromThePointModel) {
  auto point = plantest::physical_model();
  auto safe = shifted(0.02);
  auto p = problem();
  auto es = plan::plan_early_stop(point, safe, p, 0, plan::EarlyStopBudget::kTarget);
  const auto& c = es.best;
  EXPECT_EQ(c.budget.config.batch, c.expected.config.batch);
  EXPECT_EQ(c.budget.config.workers, c.expected.config.workers);
  EXPECT_GE(c.budget.config.epochs, c.expected.config.epochs);
  // The budget is the safe model's smallest epochs to target at that cell, the
  // expectation the point model's.
  auto sb = plan::evaluate_cell(safe, p, c.budget.config.batch, c.budget.config.workers);
  auto pb = plan::evaluate_cell(point, p, c.budget.config.batch, c.budget.config.workers);
  ASSERT_TRUE(sb && pb);
  EXPECT_EQ(c.budget.config.epochs, sb->config.epochs);
  EXPECT_EQ(c.expected.config.epochs, pb->config.epochs);
  // It is the cell of least expected cost among those the safe side allows.
  for (int b : p.space.batches)
    for (int r = 1; r <= p.space.max_workers; ++r)
      if (plan::evaluate_cell(safe, p, b, r))
        if (auto e = plan::evaluate_cell(point, p, b, r)) EXPECT_GE(e->cost, c.expected.cost * (1 - 1e-9)) << b << "," << r;
}

TEST(EarlyStop, DeadlineBudgetRunsToTheDeadlineAndRescuesALateMetric) {
  auto point = plantest::physical_model();
  auto safe = shifted(0.02);
  // A deadline that binds before the epoch cap at the chosen cell.
  auto loose = problem();
  auto by_target = plan::plan_early_stop(point, safe, loose, 0, plan::EarlyStopBudget::kTarget);
  auto p = problem(0.8, 3.0 * by_target.best.budget.total_time_s);
  auto t = plan::plan_early_stop(point, safe, p, 2, plan::EarlyStopBudget::kTarget);
  auto d = plan::plan_early_stop(point, safe, p, 2, plan::EarlyStopBudget::kDeadline);
  // The same cells in the same order, with the same expectations: only the budgets differ.
  ASSERT_EQ(t.alternatives.size(), d.alternatives.size());
  EXPECT_EQ(t.best.expected.config, d.best.expected.config);
  EXPECT_DOUBLE_EQ(t.best.expected.cost, d.best.expected.cost);
  for (size_t i = 0; i < t.alternatives.size(); ++i)
    EXPECT_EQ(t.alternatives[i].expected.config, d.alternatives[i].expected.config) << i;
  const auto& b = d.best.budget;
  EXPECT_EQ(b.config.epochs, plan::max_epochs_within(p, b.epoch_time_s));
  EXPECT_GT(b.config.epochs, t.best.budget.config.epochs);
  EXPECT_LE(b.total_time_s, p.deadline_s);
  // A truth whose metric comes later than even the safe side says (it lags the
  // point model by 0.1), but within the deadline: the target budget runs out
  // first, the deadline budget reaches the target.
  auto truth = shifted(0.1);
  auto jt = experiments::judge_early_stop(truth, p, t.best.budget.config, t.best.expected.cost, 1);
  auto jd = experiments::judge_early_stop(truth, p, d.best.budget.config, d.best.expected.cost, 1);
  EXPECT_FALSE(jt.target_ok);
  EXPECT_TRUE(jd.target_ok && jd.deadline_ok);
  EXPECT_LT(jd.true_epochs, b.config.epochs);  // it stopped at the target, not at the budget
  EXPECT_THROW(plan::parse_early_stop_budget("forever"), InputError);
}

TEST(EarlyStop, ATargetTheSafeSideNeverReachesIsInfeasible) {
  auto point = plantest::physical_model();
  auto safe = shifted(0.5);  // never reaches 0.8
  EXPECT_THROW(plan::plan_early_stop(point, safe, problem(), 0), InfeasibleError);
}

TEST(EarlyStop, JudgeStopsAtTheFirstEpochThatMeetsTheTarget) {
  // Metric = e / 10: target 0.35 is first met at e = 4.
  FnModel truth([](int, int, int) { return 10.0; }, [](int, int, double e) { return e / 10; });
  auto p = problem(0.35, 1000);
  auto j = experiments::judge_early_stop(truth, p, Config{32, 2, 9}, 123, 80);
  EXPECT_EQ(j.true_epochs, 4);
  EXPECT_DOUBLE_EQ(j.true_total_time_s, 40);
  EXPECT_DOUBLE_EQ(j.true_cost, 80);
  EXPECT_DOUBLE_EQ(j.regret, 0);
  EXPECT_TRUE(j.target_ok && j.deadline_ok);
  // A budget that is too small runs out: all its epochs, the target missed.
  auto short_run = experiments::judge_early_stop(truth, p, Config{32, 2, 3}, 60, 80);
  EXPECT_EQ(short_run.true_epochs, 3);
  EXPECT_FALSE(short_run.target_ok);
  EXPECT_DOUBLE_EQ(short_run.regret, 60.0 / 80 - 1);
  // The fixed-epoch judge pays for every planned epoch.
  plan::PlanResult fixed;
  fixed.best.config = Config{32, 2, 9};
  EXPECT_DOUBLE_EQ(experiments::judge(truth, p, fixed, 80).true_cost, 180);
}

TEST(EarlyStop, PlanCliPrintsBudgetAndExpectationAndRejectsBaselines) {
  // Samples from the analytic model at a few configurations.
  auto m = plantest::physical_model();
  auto dir = tptest::temp_dir("early_stop_cli");
  std::string csv = (dir / "s.csv").string();
  {
    std::ofstream f(csv);
    f << "batch,workers,epochs,epoch_time_s,metric\n";
    for (int b : {32, 64, 128})
      for (int r : {1, 2, 4})
        for (int e : {1, 3, 6, 12, 24}) f << b << "," << r << "," << e << "," << *m.epoch_time(b, r, 0) << ","
                                           << *m.metric(b, r, e) << "\n";
  }
  std::string base = "plan --samples " + csv + " --target 0.8 --deadline 100000 --max-workers 4 --model isotonic-mi";
  auto r = tptest::run_cli(base + " --confidence 0.9 --early-stop --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "coconfig-early-stop");
  EXPECT_EQ(j["early_stop"]["budget_epochs"], j["choice"]["epochs"]);
  EXPECT_EQ(j["early_stop"]["budget_rule"], "deadline");
  EXPECT_LE(j["early_stop"]["expected"]["epochs"].get<int>(), j["choice"]["epochs"].get<int>());
  EXPECT_LE(j["early_stop"]["expected"]["cost_worker_s"].get<double>(), j["choice"]["cost_worker_s"].get<double>());
  // On the point predictions too (no confidence), the run stops at the target.
  auto point = tptest::run_cli(base + " --early-stop --json");
  ASSERT_EQ(point.exit_code, 0) << point.err;
  auto jp = nlohmann::json::parse(point.out);
  EXPECT_EQ(jp["method"], "coconfig-early-stop");
  EXPECT_EQ(jp["early_stop"]["budget_epochs"], jp["choice"]["epochs"]);
  EXPECT_LE(jp["early_stop"]["expected"]["epochs"].get<int>(), jp["choice"]["epochs"].get<int>());
  EXPECT_EQ(tptest::run_cli(base + " --early-stop").exit_code, 0);
  auto by_target = tptest::run_cli(base + " --confidence 0.9 --early-stop --early-stop-budget target --json");
  ASSERT_EQ(by_target.exit_code, 0) << by_target.err;
  auto jt = nlohmann::json::parse(by_target.out);
  EXPECT_EQ(jt["early_stop"]["budget_rule"], "target");
  EXPECT_LE(jt["choice"]["epochs"].get<int>(), j["choice"]["epochs"].get<int>());
  EXPECT_EQ(jt["early_stop"]["expected"]["epochs"], j["early_stop"]["expected"]["epochs"]);
  auto bad = tptest::run_cli(base + " --early-stop --method lb-bsp");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_TRUE(tptest::names_input_error(bad.err, "", 0, "", {"--early-stop", "--method"}));
}
