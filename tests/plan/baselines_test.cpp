#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <utility>

#include "core/error.h"
#include "plan/exhaustive.h"
#include "numerics/gaussian_process.h"
#include "plan/planner.h"
#include "plan_test_models.h"

using namespace trainplan;
using namespace trainplan::plan;
using namespace trainplan::numerics;
using plantest::FnModel;

namespace {

// Epoch time 1000/r at every batch up to 64 (none above: it does not fit);
// metric 0.1 e, so the target 0.5 needs 5 epochs everywhere.
FnModel fits_up_to_64() {
  return FnModel([](int b, int r, int) { return b > 64 ? NAN : 1000.0 / r; },
                 [](int, int, double e) { return 0.1 * e; });
}

PlanProblem problem(std::vector<int> batches, double target = 0.5, double deadline = 1e6) {
  PlanProblem p;
  p.space.batches = std::move(batches);
  p.space.max_workers = 4;
  p.space.max_epochs = 20;
  p.target = target;
  p.deadline_s = deadline;
  return p;
}

}  // namespace

TEST(Baselines, LbBspTakesTheLargestBatchThatFits) {
  auto m = fits_up_to_64();
  auto r = make_planner("lb-bsp")->plan(m, problem({16, 32, 64, 128, 256}));
  EXPECT_EQ(r.method, "lb-bsp");
  EXPECT_EQ(r.best.config, (Config{64, 1, 5}));  // the batch it fixed
  EXPECT_FALSE(r.note.empty());                   // and says so
}

TEST(Baselines, CynthiaFixesTheBatchNearest32AndSearchesWorkers) {
  // Epoch time falls with workers but the deadline of 2000 s for 5 epochs
  // needs r >= 3 at this batch: 5 * 1000 / r <= 2000.
  auto m = fits_up_to_64();
  auto r = make_planner("cynthia")->plan(m, problem({16, 30, 40, 64}, 0.5, 2000));
  EXPECT_EQ(r.best.config, (Config{30, 3, 5}));
  // 28 and 36 are equally near: the smaller wins.
  EXPECT_EQ(make_planner("cynthia")->plan(m, problem({28, 36})).best.config.batch, 28);
}

TEST(Baselines, FixedBatchBaselinesReportInfeasibilityForTheirBatch) {
  // Only batch 64 can reach 0.5 (others top out at 0.3).
  FnModel m([](int, int r, int) { return 100.0 / r; },
            [](int b, int, double e) { return b == 64 ? 0.1 * e : std::min(0.3, 0.1 * e); });
  try {
    make_planner("cynthia")->plan(m, problem({32, 64}));
    FAIL();
  } catch (const InfeasibleError& e) {
    EXPECT_NE(std::string(e.what()).find("cynthia: no configuration with batch 32"), std::string::npos) << e.what();
  }
  EXPECT_EQ(make_planner("coconfig")->plan(m, problem({32, 64})).best.config.batch, 64);
}

TEST(Baselines, BoPicksTheBatchWithTheBestFinalMetric) {
  // Final metric peaks at b = 64 (in log2 b); cost does not depend on b.
  FnModel m([](int, int r, int) { return 100.0 / r; },
            [](int b, int, double e) {
              double x = std::log2(double(b)) - 6;
              return (0.9 - 0.05 * x * x) * (1 - std::exp(-e / 3.0));
            });
  PlannerOptions o;
  o.bo.initial = 2;
  o.bo.iterations = 10;  // the whole list
  auto p = problem({16, 32, 64, 128, 256, 512}, 0.6);
  auto r = make_planner("bo", o)->plan(m, p);
  EXPECT_EQ(r.method, "bo");
  EXPECT_EQ(r.best.config.batch, 64);
  EXPECT_GT(r.evaluations, 0);
  EXPECT_FALSE(r.note.empty());
  // The cheapest (r, e) for that batch: one worker (perfect scaling, tie -> fewer workers).
  EXPECT_EQ(r.best.config.workers, 1);
  EXPECT_TRUE(meets(r.best.metric, 0.6, MetricDirection::kMax));
}

TEST(Baselines, BoMinimisesAMetricToMinimise) {
  FnModel m([](int, int r, int) { return 100.0 / r; },
            [](int b, int, double e) {
              double x = std::log2(double(b)) - 7;
              return (0.1 + 0.05 * x * x) + 1.0 / e;
            },
            MetricDirection::kMin);
  PlannerOptions o;
  o.bo.iterations = 10;
  auto r = make_planner("bo", o)->plan(m, problem({16, 32, 64, 128, 256, 512}, 0.5));
  EXPECT_EQ(r.best.config.batch, 128);
}

TEST(Baselines, ManualIsFeasibleNeverBetterThanTheOptimumAndSeeded) {
  auto m = plantest::physical_model();
  auto p = problem({16, 32, 64, 128}, 0.8, 3000);
  p.space.max_workers = 8;
  p.space.max_epochs = 100;
  auto opt = exhaustive_search(m, p);
  PlannerOptions o;
  o.seed = 3;
  auto a = make_planner("manual", o)->plan(m, p), b = make_planner("manual", o)->plan(m, p);
  EXPECT_EQ(a.best.config, b.best.config);
  EXPECT_EQ(a.evaluations, 60);
  EXPECT_TRUE(meets(a.best.metric, 0.8, MetricDirection::kMax));
  EXPECT_LE(a.best.total_time_s, 3000);
  EXPECT_GE(a.best.cost, opt.best.cost * (1 - 1e-12));
}

TEST(Baselines, ManualsAlternativesAreDistinctConfigurations) {
  // Two cells and 60 tries: every cell is drawn many times, and each may be
  // listed once, at its best try.
  FnModel m([](int, int r, int) { return 10.0 / r; }, [](int, int, double e) { return 0.1 * e; });
  PlanProblem p = problem({32}, 0.3);
  p.space.max_workers = 2;
  p.space.max_epochs = 10;
  PlannerOptions o;
  o.alternatives = 5;
  auto r = make_planner("manual", o)->plan(m, p);
  std::set<std::pair<int, int>> cells = {{r.best.config.batch, r.best.config.workers}};
  for (const auto& a : r.alternatives) EXPECT_TRUE(cells.insert({a.config.batch, a.config.workers}).second);
  EXPECT_EQ(r.alternatives.size(), 1u);
}

TEST(Baselines, ManualOnATinySpaceFindsTheOptimum) {
  // One cell, epochs 1..10, target needs 3: 60 tries all but surely draw e = 3.
  FnModel m([](int, int, int) { return 10.0; }, [](int, int, double e) { return 0.1 * e; });
  PlanProblem p = problem({32}, 0.3);
  p.space.max_workers = 1;
  p.space.max_epochs = 10;
  EXPECT_EQ(make_planner("manual")->plan(m, p).best.config, (Config{32, 1, 3}));
}

TEST(Baselines, UnknownMethodOrSearchIsAnInputError) {
  EXPECT_THROW(make_planner("hyperband"), InputError);
  PlannerOptions o;
  o.search = "annealing";
  EXPECT_THROW(make_planner("coconfig", o), InputError);
}

TEST(GaussianProcess, InterpolatesItsPointsAndIsUncertainAwayFromThem) {
  GaussianProcess gp(GpParams{0.2, 1e-8});
  gp.fit({0.0, 0.5, 1.0}, {1.0, 3.0, 2.0});
  auto [m0, s0] = gp.predict(0.5);
  EXPECT_NEAR(m0, 3.0, 1e-4);
  EXPECT_LT(s0, 1e-3);
  auto [m1, s1] = gp.predict(0.25);
  EXPECT_GT(s1, 0.01);
  EXPECT_GT(m1, 1.0);
  EXPECT_LT(m1, 3.5);
  EXPECT_GT(expected_improvement(3.0, 1.0, 3.0), 0.3);  // sd * pdf(0) = 0.399
  EXPECT_NEAR(expected_improvement(2.0, 0.0, 3.0), 0.0, 1e-12);
}
