// uncertainty::MeasuredBoundsModel: the planned metric is held to the profiled
// trials of its configuration (a floor from shorter trials, a cap from
// longer ones), and app::fit_planning_model applies it with a confidence.
#include "uncertainty/measured_bounds.h"
#include "app/planning_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "experiments/scenario.h"
#include "uncertainty/pessimistic_model.h"

using namespace trainplan;
using namespace trainplan::app;
using namespace trainplan::experiments;
using namespace trainplan::uncertainty;

namespace {

// A stand-in model: metric = level + slope * epochs, epoch time 1.
class LineModel : public models::PerformanceModel {
 public:
  LineModel(double level, double slope, MetricDirection dir) : level_(level), slope_(slope), dir_(dir) {}
  std::optional<double> epoch_time(int, int, int) const override { return 1.0; }
  std::optional<double> metric(int batch, int, double epochs) const override {
    if (batch == 999) return std::nullopt;  // a cell the model cannot judge
    return level_ + slope_ * epochs;
  }
  MetricDirection direction() const override { return dir_; }
  std::string name() const override { return "line"; }

 private:
  double level_, slope_;
  MetricDirection dir_;
};

Sample trial(double batch, int workers, double epochs, double metric) {
  Sample s;
  s.batch = batch, s.workers = workers, s.epochs = epochs, s.epoch_time_s = 1, s.metric = metric;
  return s;
}

// Trials of four configurations at 1, 4 and 12 epochs: a saturating accuracy
// curve with a small deterministic wobble, which isotonic-mi misfits a little.
SampleSet wobbling_trials() {
  SampleSet s;
  s.direction = MetricDirection::kMax;
  for (int b : {16, 64})
    for (int r : {1, 4})
      for (int e : {1, 4, 12}) {
        double wobble = ((b + 3 * r + 7 * e) % 5 - 2) * 0.004;
        s.samples.push_back(trial(b, r, e, 0.9 - 0.5 * std::exp(-e / 4.0) + wobble));
        s.samples.back().epoch_time_s = 100.0 / (b * r) + r;
      }
  return s;
}

}  // namespace

// Reruns of one configuration at the same epochs vouch together for their worst: three of four
// runs of (32, 1) reached about 0.70 in 10 epochs and one 0.816; the luckiest does not lift the
// next run to 0.816 at 10 epochs or after.
TEST(MeasuredBounds, RerunsAtTheSameEpochsVouchForTheirWorst) {
  SampleSet s;
  s.direction = MetricDirection::kMax;
  s.samples = {trial(32, 1, 10, 0.816), trial(32, 1, 10, 0.700), trial(32, 1, 10, 0.705), trial(32, 1, 10, 0.71),
               trial(32, 1, 20, 0.92)};
  uncertainty::MeasuredBoundsModel m(std::make_shared<LineModel>(0.5, 0.01, MetricDirection::kMax), s);
  EXPECT_DOUBLE_EQ(*m.metric(32, 1, 10), 0.70);
  EXPECT_DOUBLE_EQ(*m.metric(32, 1, 11), 0.70);  // the floor of the runs measured, not the luckiest's 0.816
  EXPECT_DOUBLE_EQ(*m.metric(32, 1, 20), 0.92);
  // One run (a single trial at 10 epochs) still vouches for itself.
  SampleSet one = s;
  one.samples = {trial(32, 1, 10, 0.816), trial(32, 1, 20, 0.92)};
  uncertainty::MeasuredBoundsModel single(std::make_shared<LineModel>(0.5, 0.01, MetricDirection::kMax), one);
  EXPECT_DOUBLE_EQ(*single.metric(32, 1, 11), 0.816);
}

TEST(MeasuredBounds, FloorFromShorterTrialsCapFromLongerOnes) {
  // The model says 0.5 + 0.01 e; trials of (32, 2): 0.70 at 5 epochs, 0.60 at
  // 10 (a rerun that did worse), 0.80 at 20.
  SampleSet s;
  s.direction = MetricDirection::kMax;
  s.samples = {trial(32, 2, 5, 0.70), trial(32, 2, 10, 0.60), trial(32, 2, 20, 0.80), trial(64, 1, 3, 0.10)};
  uncertainty::MeasuredBoundsModel m(std::make_shared<LineModel>(0.5, 0.01, MetricDirection::kMax), s);
  // Below every trial: capped by the worst later trial (0.60 at 10 epochs).
  EXPECT_DOUBLE_EQ(*m.metric(32, 2, 4), 0.54);                       // the model, under both
  // At 5 epochs the floor is 0.70 and the cap (a rerun's 0.60 at 10) disagrees: the model's 0.55
  // is held between them, at 0.60, not at the luckier run's 0.70.
  EXPECT_DOUBLE_EQ(*m.metric(32, 2, 5), 0.60);
  EXPECT_DOUBLE_EQ(*m.metric(32, 2, 10), 0.60);
  EXPECT_DOUBLE_EQ(*m.metric(32, 2, 12), 0.70);
  EXPECT_DOUBLE_EQ(*m.metric(32, 2, 20), 0.80);                      // the trial itself
  EXPECT_DOUBLE_EQ(*m.metric(32, 2, 40), 0.90);                      // the model, above the floor
  // A later trial caps an optimistic model: (64, 1) reached only 0.10 at 3 epochs.
  EXPECT_DOUBLE_EQ(*m.metric(64, 1, 2), 0.10);
  EXPECT_DOUBLE_EQ(*m.metric(64, 1, 3), 0.10);
  EXPECT_DOUBLE_EQ(*m.metric(64, 1, 4), 0.54);                       // past every trial: the model
  // Unmeasured configurations and cells the model cannot judge pass through.
  EXPECT_DOUBLE_EQ(*m.metric(32, 4, 12), 0.62);
  EXPECT_FALSE(m.metric(999, 2, 12).has_value());
  EXPECT_DOUBLE_EQ(*m.epoch_time(32, 2, 1), 1.0);
  // Monotone in epochs.
  double prev = -1;
  for (double e = 0.5; e <= 50; e += 0.5) {
    double v = *m.metric(32, 2, e);
    EXPECT_GE(v, prev) << e;
    prev = v;
  }
}

TEST(MeasuredBounds, CurvePointsCountAsTrials) {
  // The model says 0.5 + 0.01 e; one trial of (32, 2) at 20 epochs measured
  // 0.80, and its curve 0.55 after 10 epochs and 0.72 after 15.
  SampleSet s;
  s.direction = MetricDirection::kMax;
  s.samples = {trial(32, 2, 20, 0.80)};
  s.curve = {trial(32, 2, 10, 0.55), trial(32, 2, 15, 0.72)};
  uncertainty::MeasuredBoundsModel m(std::make_shared<LineModel>(0.5, 0.01, MetricDirection::kMax), s);
  EXPECT_DOUBLE_EQ(*m.metric(32, 2, 8), 0.55);   // capped by the curve at 10 (the model says 0.58)
  EXPECT_DOUBLE_EQ(*m.metric(32, 2, 12), 0.62);  // the model, between the curve's floor and cap
  EXPECT_DOUBLE_EQ(*m.metric(32, 2, 15), 0.72);  // the curve's floor (the model says 0.65)
  // Without the curve only the trial at 20 holds it: at 8 the model's 0.58.
  SampleSet trials_only = s;
  trials_only.curve.clear();
  uncertainty::MeasuredBoundsModel bare(std::make_shared<LineModel>(0.5, 0.01, MetricDirection::kMax), trials_only);
  EXPECT_DOUBLE_EQ(*bare.metric(32, 2, 8), 0.58);
  EXPECT_DOUBLE_EQ(*bare.metric(32, 2, 15), 0.65);
  // The curve's points hold only where the trial alone does not: past the
  // trial's 20 epochs both are held to it alike.
  EXPECT_DOUBLE_EQ(*m.metric(32, 2, 25), *bare.metric(32, 2, 25));
}

TEST(MeasuredBounds, MinDirectionMetricsAreHeldTheOtherWay) {
  // A loss: the model says 10 - 0.1 e; (16, 1) measured 5 at 10 epochs and 4 at 20.
  SampleSet s;
  s.direction = MetricDirection::kMin;
  s.samples = {trial(16, 1, 10, 5.0), trial(16, 1, 20, 4.0)};
  uncertainty::MeasuredBoundsModel m(std::make_shared<LineModel>(10, -0.1, MetricDirection::kMin), s);
  EXPECT_DOUBLE_EQ(*m.metric(16, 1, 5), 9.5);    // worse than both later trials: the model
  EXPECT_DOUBLE_EQ(*m.metric(16, 1, 10), 5.0);   // a trial reached 5 by 10 epochs
  EXPECT_DOUBLE_EQ(*m.metric(16, 1, 30), 4.0);   // and 4 by 20
  EXPECT_DOUBLE_EQ(*m.metric(16, 1, 70), 3.0);   // the model, better than the trials
}

TEST(MeasuredBounds, FitPlanningModelHoldsThePessimisticSideToTheTrials) {
  SampleSet s = wobbling_trials();
  auto held = app::fit_planning_model("isotonic-mi", "isotonic-mi", s,
                                       {.conformal = true, .confidence = 0.9, .probe_batch = 16});
  auto bare = app::fit_planning_model(
      "isotonic-mi", "isotonic-mi", s,
      {.conformal = true, .confidence = 0.9, .probe_batch = 16, .measured_bounds = false});
  auto point = app::fit_planning_model("isotonic-mi", "isotonic-mi", s,
                                       {.conformal = true, .probe_batch = 16, .measured_bounds = false});
  auto held_point = app::fit_planning_model("isotonic-mi", "isotonic-mi", s, {.conformal = true, .probe_batch = 16});
  // By default the pessimistic side is held to the trials; without measured
  // bounds it is the intervals' side alone.
  EXPECT_NE(dynamic_cast<const MeasuredBoundsModel*>(held.planned.get()), nullptr);
  EXPECT_EQ(dynamic_cast<const MeasuredBoundsModel*>(bare.planned.get()), nullptr);
  EXPECT_NE(dynamic_cast<const PessimisticModel*>(bare.planned.get()), nullptr);
  EXPECT_EQ(point.planned, point.fitted);  // without a confidence or bounds nothing is wrapped
  // A point plan is held to the trials by default, the point model inside.
  EXPECT_NE(dynamic_cast<const MeasuredBoundsModel*>(held_point.planned.get()), nullptr);
  bool lifted = false;
  for (const auto& x : s.samples) {
    // At a measured configuration and epochs the held side is never below the trial.
    auto h = held.planned->metric(int(x.batch), x.workers, x.epochs);
    auto b = bare.planned->metric(int(x.batch), x.workers, x.epochs);
    ASSERT_TRUE(h && b);
    EXPECT_GE(*h, *x.metric - 1e-12);
    EXPECT_GE(*h, std::min(*b, *x.metric) - 1e-12);
    lifted |= *h > *b + 1e-9;
  }
  EXPECT_TRUE(lifted) << "the interval's lower side should sit below some trials";
}

TEST(MeasuredBounds, ShiftedByThePointModelsOptimisticMisfitAtLaterTrials) {
  // A loss. The pessimistic side says 31 - 0.2 e, the point model 30 - 0.2 e.
  // Trials of (16, 1): 29 at 10 epochs (the point model said 28: optimistic
  // by 1) and 21.5 at 40 (it said 22: pessimistic, no shift).
  SampleSet s;
  s.direction = MetricDirection::kMin;
  s.samples = {trial(16, 1, 10, 29.0), trial(16, 1, 40, 21.5)};
  auto inner = std::make_shared<LineModel>(31, -0.2, MetricDirection::kMin);
  auto point = std::make_shared<LineModel>(30, -0.2, MetricDirection::kMin);
  uncertainty::MeasuredBoundsModel plain(inner, s);
  uncertainty::MeasuredBoundsModel shifted(inner, s, point);
  // Before the 10-epoch trial: 29.4 plain, 29.4 + 1 shifted.
  EXPECT_DOUBLE_EQ(*plain.metric(16, 1, 8), 29.4);
  EXPECT_DOUBLE_EQ(*shifted.metric(16, 1, 8), 30.4);
  // At and past it the trial's own 29 is the floor, and the shift stops with
  // the trial: only later trials shift, and the 40-epoch one is not optimistic.
  EXPECT_DOUBLE_EQ(*shifted.metric(16, 1, 10), 29.0);
  EXPECT_DOUBLE_EQ(*shifted.metric(16, 1, 20), 27.0);
  EXPECT_DOUBLE_EQ(*shifted.metric(16, 1, 20), *plain.metric(16, 1, 20));
  // Unmeasured configurations pass through.
  EXPECT_DOUBLE_EQ(*shifted.metric(32, 1, 8), 29.4);
  // Still monotone in epochs (non-increasing for a loss).
  double prev = 1e9;
  for (double e = 0.5; e <= 60; e += 0.5) {
    double v = *shifted.metric(16, 1, e);
    EXPECT_LE(v, prev) << e;
    prev = v;
  }
}

TEST(MeasuredBounds, FitPlanningModelShiftsByMisfitByDefault) {
  SampleSet s = wobbling_trials();
  app::PlanningModelOptions o{.conformal = true, .confidence = 0.9, .probe_batch = 16};
  auto shifted = app::fit_planning_model("isotonic-mi", "isotonic-mi", s, o);
  o.misfit_shift = false;
  auto held = app::fit_planning_model("isotonic-mi", "isotonic-mi", s, o);
  // Both are the pessimistic side held to the trials; only the default also
  // shifts it by the point model's misfit: the same as building them by hand.
  auto pessimistic = [](const PlanningModel& pm) {
    return std::make_shared<PessimisticModel>(pm.fitted, 0.9, 16);
  };
  MeasuredBoundsModel held_by_hand(pessimistic(held), s), shifted_by_hand(pessimistic(shifted), s, shifted.fitted);
  for (int b : {16, 64})
    for (int r : {1, 4})
      for (double e : {0.5, 2.0, 5.0, 12.0}) {
        EXPECT_DOUBLE_EQ(*held.planned->metric(b, r, e), *held_by_hand.metric(b, r, e)) << b << " " << r << " " << e;
        EXPECT_DOUBLE_EQ(*shifted.planned->metric(b, r, e), *shifted_by_hand.metric(b, r, e)) << b << " " << r << " " << e;
      }
  // Never more optimistic than without the shift, and at some measured epoch
  // (before a trial the point model overshoots) more pessimistic.
  bool lowered = false;
  for (int b : {16, 64})
    for (int r : {1, 4})
      for (double e = 0.5; e <= 12; e += 0.5) {
        auto h = held.planned->metric(b, r, e);
        auto m = shifted.planned->metric(b, r, e);
        ASSERT_TRUE(h && m);
        EXPECT_LE(*m, *h + 1e-12) << b << " " << r << " " << e;
        lowered |= *m < *h - 1e-9;
      }
  EXPECT_TRUE(lowered) << "isotonic-mi misfits some of the wobbling trials on the optimistic side";
}
