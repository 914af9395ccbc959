// uncertainty::PessimisticModel: the metric's bound never turns back as
// epochs grow, so that the planners' epoch search (which takes the metric as
// monotone) finds the fewest epochs whose own bound meets the target.
#include "uncertainty/pessimistic_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/error.h"
#include "plan/objective.h"

using namespace trainplan;
using namespace trainplan::uncertainty;

namespace {

class ConstantTime : public models::TimeModel {
 public:
  std::string name() const override { return "constant"; }
  void fit(const SampleSet&) override {}
  double predict(double, int, int) const override { return 10.0; }
  std::optional<models::Interval> predict_interval(double b, int r, int n, double c) const override {
    return models::Interval{predict(b, r, n) * 0.9, predict(b, r, n) * 1.1, c};
  }
};

// Accuracy saturating at 0.9; its interval is 0.01 wide up to the 20 epochs
// "trained", then widens with ln(e / 20), as the conformal models' does
// beyond the trials, so that the lower end peaks at 20 epochs (0.8808) and
// falls.
class WideningMetric : public models::MetricModel {
 public:
  std::string name() const override { return "widening"; }
  void fit(const SampleSet&) override {}
  double predict(double, int, double e) const override { return 0.9 - 0.5 * std::exp(-e / 5); }
  std::optional<models::Interval> predict_interval(double b, int r, double e, double c) const override {
    if (e > 5000) return std::nullopt;  // a model with nothing to say this far out
    const double w = 0.01 + 0.05 * std::max(0.0, std::log(e / 20));
    return models::Interval{predict(b, r, e) - w, predict(b, r, e) + w, c};
  }
};

std::shared_ptr<const models::FittedPerformanceModel> widening() {
  return std::make_shared<models::FittedPerformanceModel>(std::make_shared<ConstantTime>(),
                                                           std::make_shared<WideningMetric>(), MetricDirection::kMax);
}

}  // namespace

// An error every epoch time shares joins the interval's own in quadrature, on
// its side of the point.
TEST(PessimisticModel, ASharedTimeErrorWidensTheUpperEpochTime) {
  EXPECT_DOUBLE_EQ(widen_by_shared_error(10, 12, IntervalEnd::kUpper, 1.5, 0), 12);
  const double w = std::log(1.2), s = 0.2, z = 1.5;
  EXPECT_NEAR(widen_by_shared_error(10, 12, IntervalEnd::kUpper, z, s), 10 * std::exp(std::hypot(w, z * s)), 1e-12);
  EXPECT_NEAR(widen_by_shared_error(10, 10 / 1.2, IntervalEnd::kLower, z, s), 10 * std::exp(-std::hypot(w, z * s)), 1e-12);
  EXPECT_NEAR(widen_by_shared_error(10, 10, IntervalEnd::kUpper, z, s), 10 * std::exp(z * s), 1e-12);
  EXPECT_NEAR(widen_by_shared_error(10, 10, IntervalEnd::kLower, z, s), 10 * std::exp(-z * s), 1e-12);  // zero width: the side is given

  // ConstantTime: 10 s, its 90% interval 9..11. Two-sided at 0.9 reads the
  // interval's end with z = 1.645 (95% on its side); one-sided, z = 1.2816.
  const PessimisticModel plain(widening(), 0.9, 16), shared(widening(), 0.9, 16, ConfidenceBounds::kTwoSided, 0.3);
  EXPECT_DOUBLE_EQ(*plain.epoch_time(16, 1, 1), 11);
  EXPECT_NEAR(*shared.epoch_time(16, 1, 1), 10 * std::exp(std::hypot(std::log(1.1), 1.6448536 * 0.3)), 1e-5);
  EXPECT_THROW(PessimisticModel(widening(), 0.9, 16, ConfidenceBounds::kTwoSided, -1), InputError);
}

TEST(PessimisticModel, TheMetricsBoundNeverTurnsBackWithMoreEpochs) {
  PessimisticModel m(widening(), 0.9, 16);
  WideningMetric raw;
  double before = -INFINITY;
  bool raw_fell = false;
  for (int e = 1; e <= 3000; e += (e < 100 ? 1 : 37)) {
    const double v = *m.metric(16, 1, e), own = raw.predict_interval(16, 1, e, 0.9)->lo;
    EXPECT_GE(v, before - 1e-12) << e;
    // Within every-epoch range never below the bound at e itself; past it,
    // a count between steps may take the best at the steps before it.
    if (e <= PessimisticModel::kEveryEpochUpTo) EXPECT_GE(v, own - 1e-12) << e;
    raw_fell |= own < before - 1e-6;
    before = v;
  }
  EXPECT_TRUE(raw_fell) << "the stand-in's own bound should turn back, or the test shows nothing";
  // Where the bound alone still rises, it is the bound alone.
  EXPECT_DOUBLE_EQ(*m.metric(16, 1, 12), raw.predict_interval(16, 1, 12, 0.9)->lo);
  // Counts between those looked at (fractions, under 1, between steps past
  // 100) never turn back either.
  double last = -INFINITY;
  for (double e = 0.25; e <= 160; e += 0.25) {
    const double v = *m.metric(16, 1, e);
    EXPECT_GE(v, last - 1e-12) << e;
    last = v;
  }
  // Past the most epochs a plan may run, the answer there.
  EXPECT_DOUBLE_EQ(*m.metric(16, 1, 2e6), *m.metric(16, 1, kMostEpochs));
  // Fractional epochs take the best of the whole epochs below them too.
  EXPECT_GE(*m.metric(16, 1, 50.5), *m.metric(16, 1, 50) - 1e-12);
  // Where the model has no bound, the best at fewer epochs stands.
  ASSERT_TRUE(m.metric(16, 1, 6000).has_value());
  EXPECT_GE(*m.metric(16, 1, 6000), *m.metric(16, 1, 3000) - 1e-12);
  // Another cell, then this one again: the same answers.
  const double at_700 = *m.metric(16, 1, 700);
  (void)m.metric(32, 2, 900);
  EXPECT_DOUBLE_EQ(*m.metric(16, 1, 700), at_700);
}

TEST(PessimisticModel, ThePlannerFindsTheFewestEpochsWhoseBoundMeetsTheTarget) {
  PessimisticModel m(widening(), 0.9, 16);
  WideningMetric raw;
  plan::PlanProblem p;
  p.space.batches = {16};
  p.space.max_workers = 1;
  p.space.max_epochs = 1000;
  p.deadline_s = 1e9;
  // The stand-in's own lower bound meets 0.88 at 20 and 21 epochs only and is
  // far below it at 1,000: a search that looked there first would call the
  // cell infeasible.
  p.target = 0.88;
  ASSERT_LT(raw.predict_interval(16, 1, 1000, 0.9)->lo, p.target);
  int fewest = 0;
  for (int e = 1; e <= 1000 && fewest == 0; ++e)
    if (raw.predict_interval(16, 1, e, 0.9)->lo >= p.target) fewest = e;
  ASSERT_GT(fewest, 0);
  auto c = plan::evaluate_cell(m, p, 16, 1);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->config.epochs, fewest);
}
