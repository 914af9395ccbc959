#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "plan/exhaustive.h"
#include "experiments/scenario.h"
#include "plan/planner.h"
#include "replay/oracle_performance_model.h"
#include "replay/sampler.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::plan;
using namespace trainplan::experiments;

TEST(PlanExperiment, ScenariosGetTighterAndTheOracleOptimumHasZeroRegret) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto oracle = std::make_shared<replay::ReplayOracle>(
      replay::ReplayOracle::from_dir(tptest::shared_data_dir() + "/pollux-t4/cifar10"));
  auto truth = std::make_shared<replay::OraclePerformanceModel>(oracle);
  auto samples = replay::draw_samples(*oracle, replay::named_plan("paper", 1)).samples;
  PlanProblem space;
  std::set<int> bs;
  for (const auto& s : samples.samples) bs.insert(static_cast<int>(s.batch));
  space.space.batches.assign(bs.begin(), bs.end());
  space.space.max_workers = 8;
  space.space.max_epochs = oracle->epoch_limit();
  space.space.workers_per_node = 4;
  auto sc = derive_scenarios(*truth, space, 3);
  ASSERT_EQ(sc.size(), 3u);
  for (size_t i = 0; i < sc.size(); ++i) {
    EXPECT_LE(sc[i].optimum.total_time_s, sc[i].deadline_s);
    EXPECT_GE(sc[i].optimum.metric, sc[i].target);
    EXPECT_GE(sc[i].deadline_s, sc[i].fastest.total_time_s);
    if (i > 0) {
      EXPECT_GT(sc[i].target, sc[i - 1].target);
      EXPECT_LT(sc[i].deadline_mult, sc[i - 1].deadline_mult);
    }
    // Planning on the truth (masked by itself) reproduces the optimum.
    PlanProblem p = space;
    p.target = sc[i].target;
    p.deadline_s = sc[i].deadline_s;
    DomainMaskedModel masked(truth, truth);
    PlannerOptions o;
    o.search = "exhaustive";
    auto j = judge(*truth, p, make_planner("coconfig", o)->plan(masked, p), sc[i].optimum.cost);
    EXPECT_TRUE(j.runnable && j.target_ok && j.deadline_ok);
    EXPECT_NEAR(j.regret, 0.0, 1e-9);
  }
}
