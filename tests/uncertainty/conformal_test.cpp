#include "uncertainty/conformal.h"

#include <gtest/gtest.h>

#include <cstdio>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "core/error.h"
#include "models/metric_global_batch.h"

using namespace trainplan;
using namespace trainplan::uncertainty;

namespace {

// A small time model for the test: t * b * r = alpha + beta * b, by least squares.
class LinearStepModel : public models::TimeModel {
 public:
  std::string name() const override { return "linear-step"; }
  void fit(const SampleSet& s) override {
    Eigen::MatrixXd X(s.size(), 2);
    Eigen::VectorXd y(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      const auto& x = s.samples[i];
      X(i, 0) = 1, X(i, 1) = x.batch, y(i) = x.epoch_time_s * x.batch * x.workers;
    }
    theta_ = X.colPivHouseholderQr().solve(y);
  }
  double predict(double b, int r, int) const override { return (theta_(0) + theta_(1) * b) / (b * r); }

 private:
  Eigen::Vector2d theta_;
};

// Epoch time (2 + 0.01 b) / (b r) with multiplicative noise N(0, sd), one
// sample per configuration, configurations drawn at random.
SampleSet time_samples(int n, double sd, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> batch(16, 256);
  std::uniform_int_distribution<int> workers(1, 64);
  std::normal_distribution<double> eps(0, sd);
  SampleSet s;
  for (int i = 0; i < n; ++i) {
    Sample x;
    x.batch = batch(rng), x.workers = workers(rng), x.epochs = 1, x.nodes = 1;
    x.epoch_time_s = (2 + 0.01 * x.batch) / (x.batch * x.workers) * (1 + eps(rng));
    s.samples.push_back(x);
  }
  return s;
}

}  // namespace

TEST(Conformal, TimeIntervalCoverageIsNominalOnKnownNoise) {
  auto m = uncertainty::with_conformal([] { return std::make_unique<LinearStepModel>(); });
  m->fit(time_samples(300, 0.05, 1));
  auto test = time_samples(2000, 0.05, 2);
  for (double c : {0.8, 0.9}) {
    int inside = 0;
    for (const auto& x : test.samples) {
      auto iv = m->predict_interval(x.batch, x.workers, x.nodes, c);
      ASSERT_TRUE(iv.has_value());
      EXPECT_LE(iv->lo, iv->hi);
      inside += x.epoch_time_s >= iv->lo && x.epoch_time_s <= iv->hi;
    }
    double cov = double(inside) / test.size();
    EXPECT_NEAR(cov, c, 0.07) << "coverage at " << c;
  }
  // The 90% half-width is about 1.645 sd = 8.2% for 5% Gaussian noise.
  auto iv = m->predict_interval(64, 4, 1, 0.9);
  double half = (iv->hi - iv->lo) / (iv->hi + iv->lo);
  EXPECT_GT(half, 0.065);
  EXPECT_LT(half, 0.10);
}

// At a measured configuration the interval is never narrower than the
// measurement's own uncertainty (time_spread, a 95% half-width); elsewhere,
// and at configurations measured without a spread, nothing changes.
TEST(Conformal, AMeasuredConfigurationsIntervalCoversItsMeasuredSpread) {
  auto m = uncertainty::with_conformal([] { return std::make_unique<LinearStepModel>(); });
  SampleSet s = time_samples(100, 0.01, 4);
  const Sample noisy = s.samples[7], quiet = s.samples[8];
  s.samples[7].time_spread = 0.30;
  m->fit(s);
  auto half = [&](const Sample& x, double c) {
    auto iv = m->predict_interval(x.batch, x.workers, x.nodes, c);
    return (iv->hi - iv->lo) / 2 / m->predict(x.batch, x.workers, x.nodes);
  };
  EXPECT_NEAR(half(noisy, 0.95), 0.30, 1e-6);
  EXPECT_NEAR(half(noisy, 0.8), 0.30 * 1.2816 / 1.96, 1e-3);  // a normal half-width rescaled
  EXPECT_LT(half(quiet, 0.95), 0.05);
  EXPECT_LT(half(time_samples(1, 0.01, 99).samples[0], 0.95), 0.05);  // not measured
  const double p = m->predict(noisy.batch, noisy.workers, noisy.nodes);
  EXPECT_NEAR(*m->predict_bound(noisy.batch, noisy.workers, noisy.nodes, 0.95, models::BoundSide::kUpper),
              p * (1 + 0.30 * 1.6449 / 1.96), 1e-3 * p);
}

// One worker with its nodes unknown (0) runs on one node: asked either way,
// a measured one-worker configuration is known as measured, with its
// in-sample residuals and its spread's floor.
TEST(Conformal, AOneWorkerConfigurationIsMeasuredWhetherItsNodesAreStatedOrNot) {
  auto m = uncertainty::with_conformal([] { return std::make_unique<LinearStepModel>(); });
  SampleSet s = time_samples(100, 0.01, 4);
  for (auto& x : s.samples) x.nodes = 0;  // a store that records no nodes
  s.samples[7].workers = 1;
  s.samples[7].time_spread = 0.30;
  m->fit(s);
  const Sample& x = s.samples[7];
  auto unstated = m->predict_interval(x.batch, 1, 0, 0.95), stated = m->predict_interval(x.batch, 1, 1, 0.95);
  ASSERT_TRUE(unstated && stated);
  EXPECT_DOUBLE_EQ(unstated->lo, stated->lo);
  EXPECT_DOUBLE_EQ(unstated->hi, stated->hi);
  EXPECT_NEAR((stated->hi - stated->lo) / 2 / m->predict(x.batch, 1, 1), 0.30, 1e-6);  // the spread's floor
}

TEST(BinnedResiduals, TiedKeysNeverLeaveABinShortOfItsLeast) {
  // 39 residuals at key 0 and one at key 1, three bins of at least 20: the
  // only boundary between unequal keys would leave one residual on its own.
  std::vector<std::pair<double, double>> kr;
  for (int i = 0; i < 39; ++i) kr.push_back({0.0, 0.01 * i});
  kr.push_back({1.0, 5.0});
  BinnedResiduals b;
  b.fit(kr, 3, 20);
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b.bins().size(), 1u);
  // Where ties allow it, bins keep their least and split where keys differ.
  kr.clear();
  for (int i = 0; i < 30; ++i) kr.push_back({0.0, 0.0});
  for (int i = 0; i < 30; ++i) kr.push_back({1.0 + i, 0.0});
  b.fit(kr, 3, 20);
  ASSERT_EQ(b.bins().size(), 2u);
  EXPECT_EQ(b.edges().size(), 1u);
  EXPECT_GT(b.edges()[0], 0.0);
  EXPECT_EQ(b.bins()[0].size(), 30u);
  EXPECT_EQ(b.bins()[1].size(), 30u);
}

// With noise so large that relative residuals pass 1, the interval and the
// lower bound stop at zero: an epoch takes no negative time.
TEST(Conformal, TimeIntervalNeverReachesBelowZero) {
  auto m = uncertainty::with_conformal([] { return std::make_unique<LinearStepModel>(); });
  SampleSet s = time_samples(200, 0.05, 3);
  for (size_t i = 0; i < s.size(); i += 3) s.samples[i].epoch_time_s *= 4;  // a third of the samples four times slower
  m->fit(s);
  auto iv = m->predict_interval(64, 4, 1, 0.9);
  ASSERT_TRUE(iv.has_value());
  EXPECT_EQ(iv->lo, 0.0);
  EXPECT_GT(iv->hi, m->predict(64, 4, 1));
  EXPECT_GE(*m->predict_bound(64, 4, 1, 0.9, models::BoundSide::kLower), 0.0);
}

TEST(Conformal, MetricIntervalCoverageOnSyntheticSurface) {
  // Accuracy 0.95 - 0.6/(1 + x/4), x = e * 528/(400 + B), with 2% noise.
  auto make = [](int n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> batch(16, 256), workers(1, 8), epochs(1, 40);
    std::normal_distribution<double> eps(0, 0.02);
    SampleSet s;
    s.direction = MetricDirection::kMax;
    for (int i = 0; i < n; ++i) {
      Sample x;
      x.batch = batch(rng), x.workers = workers(rng), x.epochs = epochs(rng), x.epoch_time_s = 1;
      double xe = x.epochs * 528.0 / (400 + x.global_batch());
      x.metric = (0.95 - 0.6 / (1 + xe / 4)) * (1 + eps(rng));
      s.samples.push_back(x);
    }
    return s;
  };
  auto m = uncertainty::conformal_metric_model("global-batch");
  m->fit(make(300, 3));
  auto test = make(1000, 4);
  int inside = 0;
  for (const auto& x : test.samples) {
    auto iv = m->predict_interval(x.batch, x.workers, x.epochs, 0.9);
    ASSERT_TRUE(iv.has_value());
    inside += *x.metric >= iv->lo && *x.metric <= iv->hi;
  }
  EXPECT_NEAR(double(inside) / test.size(), 0.9, 0.07);
  const auto& c = dynamic_cast<const uncertainty::ConformalMetricModel&>(*m);
  EXPECT_EQ(c.residuals().size(), 300u);  // every sample held out once
}

TEST(Conformal, QuantileUsesTheConformalRank) {
  uncertainty::ConformalResiduals r;
  std::vector<double> v;
  for (int i = 1; i <= 19; ++i) v.push_back(i / 100.0);
  r.set(v);
  // ceil(20 * 0.9) = 18th smallest.
  EXPECT_DOUBLE_EQ(*r.quantile(0.9), 0.18);
  EXPECT_DOUBLE_EQ(*r.quantile(0.5), 0.10);
  EXPECT_TRUE(r.too_few(0.97));
  EXPECT_THROW(r.quantile(1.0), InputError);
  uncertainty::ConformalResiduals empty;
  EXPECT_FALSE(empty.quantile(0.9).has_value());
}

TEST(Conformal, FoldsKeepConfigurationsTogether) {
  SampleSet s;
  for (int b : {16, 32, 64, 128, 256})
    for (int e : {1, 2, 3}) {
      Sample x;
      x.batch = b, x.workers = 2, x.epochs = e, x.epoch_time_s = 1;
      s.samples.push_back(x);
    }
  auto f = uncertainty::config_folds(s, 5, 9);
  for (size_t i = 0; i < s.size(); i += 3) {
    EXPECT_EQ(f[i], f[i + 1]);
    EXPECT_EQ(f[i], f[i + 2]);
  }
  std::set<int> used(f.begin(), f.end());
  EXPECT_EQ(used.size(), 5u);
}

TEST(Conformal, UnknownModelIsAnInputError) {
  EXPECT_THROW(uncertainty::conformal_metric_model("no-such-model"), InputError);
}

TEST(Conformal, OneSidedBoundsUseSignedResidualRanks) {
  uncertainty::ConformalResiduals r;
  std::vector<double> v;
  for (int i = -9; i <= 10; ++i) v.push_back(i / 100.0);  // 20 signed residuals
  r.set(v);
  // ceil(21 * 0.9) = 19th smallest: of the excess r (-0.09..0.10) 0.09, of the shortfall -r (-0.10..0.09) 0.08.
  EXPECT_DOUBLE_EQ(*r.one_sided(0.9, models::BoundSide::kUpper), 0.09);
  EXPECT_DOUBLE_EQ(*r.one_sided(0.9, models::BoundSide::kLower), 0.08);
  EXPECT_DOUBLE_EQ(*r.quantile(0.9), 0.09);  // |r|: 0, .01, .01, ..., .09, .09, .10
  // A model biased low (every residual positive) gets a negative shortfall:
  // its lower bound lies above its prediction.
  uncertainty::ConformalResiduals up;
  up.set({0.05, 0.06, 0.07, 0.08, 0.09});
  EXPECT_DOUBLE_EQ(*up.one_sided(0.5, models::BoundSide::kLower), -0.07);
  // A prediction that was not finite is the worst residual on both sides.
  uncertainty::ConformalResiduals bad;
  bad.set({0.01, std::numeric_limits<double>::quiet_NaN()});
  EXPECT_TRUE(std::isinf(*bad.one_sided(0.9, models::BoundSide::kLower)));
  EXPECT_TRUE(std::isinf(*bad.one_sided(0.9, models::BoundSide::kUpper)));
  EXPECT_TRUE(std::isinf(*bad.quantile(0.9)));
  EXPECT_THROW(r.one_sided(0.0, models::BoundSide::kLower), InputError);
  EXPECT_FALSE(uncertainty::ConformalResiduals().one_sided(0.9, models::BoundSide::kUpper).has_value());
}

TEST(Conformal, OneSidedBoundCoverageIsNominalOnItsSideAndTighterThanTheIntervalEnd) {
  auto m = uncertainty::with_conformal([] { return std::make_unique<LinearStepModel>(); });
  m->fit(time_samples(400, 0.05, 11));
  auto test = time_samples(3000, 0.05, 12);
  int below_bound = 0, below_hi = 0, above_lower = 0;
  for (const auto& x : test.samples) {
    auto hi = m->predict_bound(x.batch, x.workers, x.nodes, 0.9, models::BoundSide::kUpper);
    auto lo = m->predict_bound(x.batch, x.workers, x.nodes, 0.9, models::BoundSide::kLower);
    auto iv = m->predict_interval(x.batch, x.workers, x.nodes, 0.9);
    ASSERT_TRUE(hi && lo && iv);
    EXPECT_LE(*hi, iv->hi);
    EXPECT_GE(*lo, iv->lo);
    below_bound += x.epoch_time_s <= *hi;
    above_lower += x.epoch_time_s >= *lo;
    below_hi += x.epoch_time_s <= iv->hi;
  }
  double n = test.size();
  // Symmetric Gaussian noise: the one-sided 90% bound holds 90% of the time on
  // its side; the two-sided interval's end about 95%.
  EXPECT_NEAR(below_bound / n, 0.9, 0.04);
  EXPECT_NEAR(above_lower / n, 0.9, 0.04);
  EXPECT_GT(below_hi / n, below_bound / n + 0.02);
}

namespace {

// Runs that plateau at different levels: accuracy A(B) (1 - exp(-e / 6)),
// A from 0.5 at B = 16 to 0.95 at B = 256. A run is placed a little early or
// late (data epochs jittered by N(0, 0.15) relative), so its error is the
// curve's slope times the jitter: large while it climbs, small on its plateau.
double plateau(double B) { return 0.5 + 0.45 * (std::log2(B) - 4) / 4; }
double climb(double B, double e) { return plateau(B) * (1 - std::exp(-e / 6)); }

SampleSet jittered_runs(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> batch(16, 256);
  std::uniform_real_distribution<double> epochs(1, 30);
  std::normal_distribution<double> jitter(0, 0.15);
  SampleSet s;
  s.direction = MetricDirection::kMax;
  for (int i = 0; i < n; ++i) {
    Sample x;
    x.batch = batch(rng), x.workers = 1, x.epochs = epochs(rng), x.epoch_time_s = 1;
    x.metric = climb(x.batch, x.epochs * (1 + jitter(rng)));
    s.samples.push_back(x);
  }
  return s;
}

// The noiseless surface: its out-of-fold residuals are the noise alone.
class ClimbModel : public models::MetricModel {
 public:
  std::string name() const override { return "climb"; }
  void fit(const SampleSet&) override {}
  double predict(double b, int r, double e) const override { return climb(b * r, e); }
};

}  // namespace

// Where value and slope part ways (one run's plateau at another's climbing
// value), bins by the predicted metric mix steep and flat points: the flattest
// third of held-out points is covered far above nominal, with wide intervals.
// Bins by the model's slope in epochs keep each third near nominal and narrow
// the flat third, where targets usually lie.
TEST(Conformal, SlopeBinsKeepCoverageWhereTheCurveClimbs) {
  auto train = jittered_runs(600, 11), test = jittered_runs(3000, 12);
  // Held-out points in thirds by their true relative slope.
  auto slope = [](const Sample& x) {
    return std::abs(climb(x.batch, x.epochs * 1.15) - climb(x.batch, x.epochs / 1.15)) / climb(x.batch, x.epochs);
  };
  std::vector<double> slopes;
  for (const auto& x : test.samples) slopes.push_back(slope(x));
  std::vector<double> sorted = slopes;
  std::sort(sorted.begin(), sorted.end());
  const double t1 = sorted[sorted.size() / 3], t2 = sorted[2 * sorted.size() / 3];
  struct Third {
    int in = 0, n = 0;
    double half = 0;
  };
  auto score = [&](uncertainty::ConformalParams::Taxonomy taxonomy) {
    uncertainty::ConformalParams p;
    p.taxonomy = taxonomy;
    // The bins alone: these independent samples share (batch, 1), which the
    // within-run rule would read as runs.
    p.run_folds = 0;
    auto m = uncertainty::with_conformal_metric([] { return std::make_unique<ClimbModel>(); }, p);
    m->fit(train);
    std::array<Third, 3> thirds;
    for (size_t i = 0; i < test.size(); ++i) {
      const auto& x = test.samples[i];
      auto iv = m->predict_interval(x.batch, x.workers, x.epochs, 0.9);
      EXPECT_TRUE(iv.has_value());
      Third& t = thirds[slopes[i] < t1 ? 0 : slopes[i] < t2 ? 1 : 2];
      t.in += *x.metric >= iv->lo && *x.metric <= iv->hi, ++t.n;
      t.half += (iv->hi - iv->lo) / 2 / std::abs(m->predict(x.batch, x.workers, x.epochs));
    }
    for (auto& t : thirds) t.half /= t.n;
    return thirds;
  };
  auto by_value = score(uncertainty::ConformalParams::Taxonomy::kPredicted);
  auto by_slope = score(uncertainty::ConformalParams::Taxonomy::kSlope);
  auto cover = [](const Third& t) { return double(t.in) / t.n; };
  // Measured: by value 0.983 / 0.897 / 0.853 from flat to steep, by slope
  // 0.922 / 0.940 / 0.894; mean half-width on the flat third 5.8% and 2.3%.
  EXPECT_GT(cover(by_value[0]), 0.95);
  for (const auto& t : by_slope) EXPECT_NEAR(cover(t), 0.9, 0.05);
  EXPECT_LT(by_slope[0].half, 0.6 * by_value[0].half);
}

namespace {

// Runs of the climb surface, each a little faster or slower than the curve
// (data epochs scaled by a per-run factor), sampled at 3 whole epochs each.
SampleSet sampled_runs(int runs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> epoch(1, 40);
  std::normal_distribution<double> speed(0, 0.15);
  SampleSet s;
  s.direction = MetricDirection::kMax;
  for (int k = 0; k < runs; ++k) {
    const double b = 16 + 2 * k, f = 1 + speed(rng);
    for (int j = 0; j < 3; ++j) {
      Sample x;
      x.batch = b, x.workers = 1, x.epochs = epoch(rng), x.epoch_time_s = 1;
      x.metric = climb(b, x.epochs * f);
      s.samples.push_back(x);
    }
  }
  return s;
}

// Exact on configurations it did not see (so the configuration rule sees no
// error at all) and at a seen run's sampled epochs. Between and beyond them,
// by the gap g (in ln e) to the run's nearest sample: kScale errs by 8% of g,
// capped at 8% (the error of a model anchored on a run's own samples);
// kShift misplaces the curve in epochs by 20% of g, capped at 20% (a curve
// pinned at a run's samples drifting between them, most where it climbs).
class AnchoredErrModel : public models::MetricModel {
 public:
  enum class Err { kScale, kShift };
  explicit AnchoredErrModel(Err err = Err::kScale) : err_(err) {}
  std::string name() const override { return "anchored-err"; }
  void fit(const SampleSet& s) override {
    epochs_.clear();
    for (const auto& x : s.samples) epochs_[{x.batch, x.workers}].push_back(x.epochs);
  }
  double predict(double b, int r, double e) const override {
    auto it = epochs_.find({b, r});
    if (it == epochs_.end()) return truth(b, e);
    double gap = 1e9;
    for (double x : it->second) gap = std::min(gap, std::abs(std::log(e / x)));
    if (err_ == Err::kShift) return truth(b, e * (1 + 0.2 * std::min(gap, 1.0)));
    return truth(b, e) * (1 + 0.08 * std::min(gap, 1.0));
  }
  // The truth the model is exact on: the mean curve (speed factor 1).
  static double truth(double b, double e) { return climb(b, e); }

 private:
  Err err_;
  std::map<std::pair<double, int>, std::vector<double>> epochs_;
};

}  // namespace

// At a measured run the planner asks about epochs that were not sampled. A
// model exact on unseen configurations gives out-of-fold residuals of 0, so
// the configuration rule alone gives a zero-width interval there, which the
// model's error between the run's samples leaves uncovered; the within-run
// residuals (each run's epochs held out in turn) see that error.
TEST(Conformal, WithinRunRuleCoversTheErrorBetweenARunsSamples) {
  auto train = sampled_runs(120, 21);
  for (auto& x : train.samples) x.metric = AnchoredErrModel::truth(x.batch, x.epochs);  // exact where sampled
  auto make = [] { return std::make_unique<AnchoredErrModel>(); };
  auto score = [&](int run_folds) {
    uncertainty::ConformalParams p;
    p.run_folds = run_folds;
    auto m = uncertainty::with_conformal_metric(make, p);
    m->fit(train);
    int in = 0, n = 0;
    std::set<std::pair<double, int>> runs;
    for (const auto& x : train.samples) runs.insert({x.batch, x.workers});
    for (const auto& [b, r] : runs)
      for (int e = 1; e <= 40; ++e) {
        auto lo = m->predict_bound(b, r, e, 0.9, models::BoundSide::kLower);
        EXPECT_TRUE(lo.has_value());
        in += AnchoredErrModel::truth(b, e) >= *lo, ++n;
      }
    return std::make_pair(double(in) / n,
                          dynamic_cast<const uncertainty::ConformalMetricModel&>(*m).run_gap_rule().active());
  };
  auto [without, gap_rule_0] = score(0);
  auto [with, gap_rule_3] = score(3);
  // Measured: 0.072 without (about the sampled epochs alone), 0.966 with.
  EXPECT_LT(without, 0.3);
  EXPECT_GT(with, 0.85);
  EXPECT_TRUE(gap_rule_3);
  EXPECT_FALSE(gap_rule_0);
}

// The within-run gap rule only ever widens, and only on measured runs (the
// between rule, which replaces it between a run's samples, is off here).
TEST(Conformal, WithinRunRuleWidensOnlyOnMeasuredRuns) {
  auto train = sampled_runs(120, 22);
  auto make = [] { return std::make_unique<ClimbModel>(); };
  uncertainty::ConformalParams p0, p3;
  p0.run_folds = 0, p3.run_folds = 3;
  p3.between_rule = false;
  auto m0 = uncertainty::with_conformal_metric(make, p0), m3 = uncertainty::with_conformal_metric(make, p3);
  m0->fit(train), m3->fit(train);
  std::set<std::pair<double, int>> runs;
  for (const auto& x : train.samples) runs.insert({x.batch, x.workers});
  int wider = 0;
  for (const auto& [b, r] : runs)
    for (double e : {2.0, 7.0, 15.0, 33.0}) {
      auto a = m0->predict_interval(b, r, e, 0.9), c = m3->predict_interval(b, r, e, 0.9);
      ASSERT_TRUE(a && c);
      EXPECT_LE(c->lo, a->lo + 1e-12);
      EXPECT_GE(c->hi, a->hi - 1e-12);
      wider += c->hi > a->hi + 1e-12;
    }
  EXPECT_GT(wider, 0);
  for (double b : {17.0, 51.0}) {  // odd batches: no run
    auto a = m0->predict_interval(b, 1, 10, 0.9), c = m3->predict_interval(b, 1, 10, 0.9);
    ASSERT_TRUE(a && c);
    EXPECT_DOUBLE_EQ(a->lo, c->lo);
    EXPECT_DOUBLE_EQ(a->hi, c->hi);
  }
}

// Between two sampled epochs of a measured run the interval comes from the
// scaled within-run residuals of interpolated samples; everywhere else it is
// what it was without the rule.
TEST(Conformal, BetweenRuleAppliesOnlyStrictlyBetweenARunsSampledEpochs) {
  auto train = sampled_runs(120, 24);
  auto make = [] { return std::make_unique<AnchoredErrModel>(); };
  uncertainty::ConformalParams off, on;
  off.between_rule = false;
  auto m_off = uncertainty::with_conformal_metric(make, off), m_on = uncertainty::with_conformal_metric(make, on);
  m_off->fit(train), m_on->fit(train);
  std::map<std::pair<double, int>, std::vector<double>> runs;
  for (const auto& x : train.samples) runs[{x.batch, x.workers}].push_back(x.epochs);
  int between = 0, changed = 0;
  for (auto& [run, epochs] : runs) {
    std::sort(epochs.begin(), epochs.end());
    for (int e = 1; e <= 40; ++e) {
      auto a = m_off->predict_interval(run.first, run.second, e, 0.9);
      auto c = m_on->predict_interval(run.first, run.second, e, 0.9);
      ASSERT_TRUE(a && c);
      if (epochs.front() < e && e < epochs.back()) {
        ++between;
        changed += std::abs(c->hi - a->hi) > 1e-12;
      } else {
        EXPECT_DOUBLE_EQ(a->lo, c->lo) << run.first << " " << e;
        EXPECT_DOUBLE_EQ(a->hi, c->hi) << run.first << " " << e;
      }
    }
  }
  ASSERT_GT(between, 100);
  EXPECT_GT(changed, between / 2);
  for (double b : {17.0, 51.0}) {  // odd batches: no run
    auto a = m_off->predict_interval(b, 1, 10, 0.9), c = m_on->predict_interval(b, 1, 10, 0.9);
    EXPECT_DOUBLE_EQ(a->hi, c->hi);
  }
  EXPECT_TRUE(dynamic_cast<const uncertainty::ConformalMetricModel&>(*m_on).between_rule().active());
  EXPECT_FALSE(dynamic_cast<const uncertainty::ConformalMetricModel&>(*m_off).between_rule().active());
}

// A model flat in epochs gives every slope 0: nothing to scale by, so the
// rule stays off (and says so) instead of dividing by zero.
TEST(Conformal, BetweenRuleIsOffForAModelFlatInEpochs) {
  struct Flat : models::MetricModel {
    std::string name() const override { return "flat"; }
    void fit(const SampleSet&) override {}
    double predict(double b, int, double) const override { return plateau(b); }
  };
  auto train = sampled_runs(120, 26);
  auto m = uncertainty::with_conformal_metric([] { return std::make_unique<Flat>(); });
  m->fit(train);
  const auto& c = dynamic_cast<const uncertainty::ConformalMetricModel&>(*m);
  EXPECT_EQ(c.between_rule().slope_floor(), 0.0);
  EXPECT_FALSE(c.between_rule().active());
  const auto& x = train.samples.front();
  auto iv = m->predict_interval(x.batch, x.workers, x.epochs + 0.5, 0.9);
  ASSERT_TRUE(iv);
  EXPECT_TRUE(std::isfinite(iv->lo) && std::isfinite(iv->hi));
}

// A curve that drifts between a run's samples: the gap rule pools that error
// over every slope and with extrapolations past the runs' samples, so it is
// too wide where the curve is flat and too narrow where it climbs; the
// between rule, calibrated on interpolations and scaled by the distance and
// the slope, covers at least as often with narrower intervals (measured:
// 0.877 covered at a mean half-width of 2.27% without it, 0.954 and 1.64%
// with it).
TEST(Conformal, BetweenRuleCoversInterpolationsAtNominalWithNarrowerIntervals) {
  auto train = sampled_runs(240, 25);
  for (auto& x : train.samples) x.metric = climb(x.batch, x.epochs);  // exact where sampled
  auto make = [] { return std::make_unique<AnchoredErrModel>(AnchoredErrModel::Err::kShift); };
  auto score = [&](bool rule) {
    uncertainty::ConformalParams p;
    p.between_rule = rule;
    auto m = uncertainty::with_conformal_metric(make, p);
    m->fit(train);
    std::map<std::pair<double, int>, std::vector<double>> runs;
    for (const auto& x : train.samples) runs[{x.batch, x.workers}].push_back(x.epochs);
    int in = 0, n = 0;
    double half = 0;
    for (auto& [run, epochs] : runs) {
      std::sort(epochs.begin(), epochs.end());
      for (int e = 1; e <= 40; ++e) {
        if (!(epochs.front() < e && e < epochs.back())) continue;
        auto iv = m->predict_interval(run.first, run.second, e, 0.9);
        const double y = climb(run.first, e);
        in += iv->lo <= y && y <= iv->hi, ++n;
        half += (iv->hi - iv->lo) / 2 / m->predict(run.first, run.second, e);
      }
    }
    return std::make_pair(double(in) / n, half / n);
  };
  auto [cover_off, half_off] = score(false);
  auto [cover_on, half_on] = score(true);
  std::printf("between samples: without the rule %.3f covered, mean half-width %.2f%%; with it %.3f and %.2f%%\n",
              cover_off, 100 * half_off, cover_on, 100 * half_on);
  EXPECT_NEAR(cover_on, 0.92, 0.05);
  EXPECT_GE(cover_on, cover_off);
  EXPECT_LT(half_on, 0.8 * half_off);
}

// Past the last sampled epoch of every run a model can only extrapolate, and
// the residuals above come from inside the sampled epochs. A model that
// levels off at its last fitted epoch under a truth that keeps rising (as
// real runs do after their last sample, e.g. through a later learning-rate
// drop): the configuration rule sees no error at all (the model is exact
// inside the sampled epochs), so the interval sits on the prediction; the
// beyond rule, calibrated on the later samples predicted from the earlier
// ones, widens both ends there to cover. Up to the last sampled epoch
// everything is what it was without the rule.
TEST(Conformal, BeyondRuleWidensBothEndsOnlyPastEverySample) {
  auto rising = [](double b, double e) { return climb(b, e) + 0.03 * std::log(e); };
  struct LevelsOff : models::MetricModel {
    std::function<double(double, double)> truth;
    double last = 0;
    std::string name() const override { return "levels-off"; }
    void fit(const SampleSet& s) override {
      last = 0;
      for (const auto& x : s.samples) last = std::max(last, x.epochs);
    }
    double predict(double b, int, double e) const override { return truth(b, std::min(e, last)); }
  };
  auto train = sampled_runs(120, 27);
  double last = 0;
  for (auto& x : train.samples) x.metric = rising(x.batch, x.epochs), last = std::max(last, x.epochs);
  auto make = [&] {
    auto m = std::make_unique<LevelsOff>();
    m->truth = rising;
    return m;
  };
  uncertainty::ConformalParams off, on;
  off.beyond_rule = false;
  auto m_off = uncertainty::with_conformal_metric(make, off), m_on = uncertainty::with_conformal_metric(make, on);
  m_off->fit(train), m_on->fit(train);
  int n = 0, in_off = 0, in_on = 0, lowered = 0;
  for (double b = 16; b < 256; b += 10)
    for (int e = 1; e <= 2 * last; ++e) {
      auto a = m_off->predict_interval(b, 1, e, 0.9), c = m_on->predict_interval(b, 1, e, 0.9);
      ASSERT_TRUE(a && c);
      auto lo_a = m_off->predict_bound(b, 1, e, 0.9, models::BoundSide::kLower);
      auto lo_c = m_on->predict_bound(b, 1, e, 0.9, models::BoundSide::kLower);
      auto hi_c = m_on->predict_bound(b, 1, e, 0.9, models::BoundSide::kUpper);
      ASSERT_TRUE(lo_a && lo_c && hi_c);
      if (e <= last) {
        EXPECT_DOUBLE_EQ(a->lo, c->lo) << b << " " << e;
        EXPECT_DOUBLE_EQ(a->hi, c->hi) << b << " " << e;
        EXPECT_DOUBLE_EQ(*lo_a, *lo_c) << b << " " << e;
        continue;
      }
      EXPECT_LE(c->lo, a->lo) << b << " " << e;
      EXPECT_LE(*lo_c, *lo_a) << b << " " << e;
      lowered += c->lo < a->lo - 1e-12;
      const double y = rising(b, e);
      ++n, in_off += y <= a->hi, in_on += y <= c->hi;
      EXPECT_GE(*hi_c, m_on->predict(b, 1, e));
    }
  std::printf("past every sample: the upper end covers %.3f without the rule, %.3f with it (%d points)\n",
              double(in_off) / n, double(in_on) / n, n);
  ASSERT_GT(n, 200);
  EXPECT_LT(double(in_off) / n, 0.1);
  EXPECT_GT(double(in_on) / n, 0.9);
  EXPECT_GT(lowered, n / 2);
  EXPECT_TRUE(dynamic_cast<const uncertainty::ConformalMetricModel&>(*m_on).beyond_rule().active());
  EXPECT_FALSE(dynamic_cast<const uncertainty::ConformalMetricModel&>(*m_off).beyond_rule().active());
}

// Too few samples in the latest third to rank: the rule stays off and says so.
TEST(Conformal, BeyondRuleIsOffWithTooFewLateSamples) {
  auto train = sampled_runs(12, 28);  // 36 samples, 12 of them in the forward fold (< min_per_bin 20)
  auto make = [] { return std::make_unique<ClimbModel>(); };
  uncertainty::ConformalParams off;
  off.beyond_rule = false;
  auto m_on = uncertainty::with_conformal_metric(make), m_off = uncertainty::with_conformal_metric(make, off);
  m_on->fit(train), m_off->fit(train);
  const auto& c_on = dynamic_cast<const uncertainty::ConformalMetricModel&>(*m_on);
  EXPECT_FALSE(c_on.beyond_rule().active());
  auto a = m_off->predict_interval(40, 1, 80, 0.9), c = m_on->predict_interval(40, 1, 80, 0.9);
  ASSERT_TRUE(a && c);
  EXPECT_DOUBLE_EQ(a->lo, c->lo);
  EXPECT_DOUBLE_EQ(a->hi, c->hi);
}

// Past the best metric any sample reached, the residuals calibrate nothing:
// the pessimistic end never promises better than the best measured, for
// either direction; the optimistic end and the point prediction are free.
TEST(Conformal, PessimisticEndIsHeldToTheBestMeasuredMetric) {
  for (auto dir : {MetricDirection::kMax, MetricDirection::kMin}) {
    SampleSet train = sampled_runs(60, 23);
    train.direction = dir;
    double best = dir == MetricDirection::kMax ? -1e9 : 1e9;
    for (auto& x : train.samples) {
      x.epochs = std::min(x.epochs, 8.0);  // the runs are measured early only
      const double acc = climb(x.batch, x.epochs);
      x.metric = dir == MetricDirection::kMax ? acc : 1 - acc;  // an error rate to minimise
      best = dir == MetricDirection::kMax ? std::max(best, *x.metric) : std::min(best, *x.metric);
    }
    // The noiseless surface in this direction (residuals 0): its prediction
    // late in training lies well past every sample.
    struct Surface : models::MetricModel {
      MetricDirection d;
      explicit Surface(MetricDirection dd) : d(dd) {}
      std::string name() const override { return "surface"; }
      void fit(const SampleSet&) override {}
      double predict(double b, int r, double e) const override {
        const double acc = climb(b * r, e);
        return d == MetricDirection::kMax ? acc : 1 - acc;
      }
    };
    auto make = [dir] { return std::make_unique<Surface>(dir); };
    uncertainty::ConformalParams held, free;
    free.hold_to_best_measured = false;
    auto mh = uncertainty::with_conformal_metric(make, held), mf = uncertainty::with_conformal_metric(make, free);
    mh->fit(train), mf->fit(train);
    const auto pessimistic = dir == MetricDirection::kMax ? models::BoundSide::kLower : models::BoundSide::kUpper;
    const double b = 256, e = 40;  // a plateau of 0.95 accuracy, past every sample
    const double y = mh->predict(b, 1, e);
    ASSERT_TRUE(dir == MetricDirection::kMax ? y > best + 0.05 : y < best - 0.05) << y << " " << best;
    auto ih = mh->predict_interval(b, 1, e, 0.9), iff = mf->predict_interval(b, 1, e, 0.9);
    auto bh = mh->predict_bound(b, 1, e, 0.9, pessimistic), bf = mf->predict_bound(b, 1, e, 0.9, pessimistic);
    ASSERT_TRUE(ih && iff && bh && bf);
    if (dir == MetricDirection::kMax) {
      EXPECT_GT(iff->lo, best);
      EXPECT_DOUBLE_EQ(ih->lo, best);
      EXPECT_DOUBLE_EQ(ih->hi, iff->hi);
      EXPECT_DOUBLE_EQ(*bh, best);
    } else {
      EXPECT_LT(iff->hi, best);
      EXPECT_DOUBLE_EQ(ih->hi, best);
      EXPECT_DOUBLE_EQ(ih->lo, iff->lo);
      EXPECT_DOUBLE_EQ(*bh, best);
    }
    EXPECT_DOUBLE_EQ(mh->predict(b, 1, e), mf->predict(b, 1, e));
    // Within the measured range nothing changes.
    auto near = mh->predict_interval(16, 1, 2, 0.9), nearf = mf->predict_interval(16, 1, 2, 0.9);
    EXPECT_DOUBLE_EQ(near->lo, nearf->lo);
    EXPECT_DOUBLE_EQ(near->hi, nearf->hi);
  }
}

TEST(ConformalResiduals, AnInfiniteRankIsNoBoundEvenAroundZero) {
  const double inf = std::numeric_limits<double>::infinity();
  auto iv = uncertainty::interval_around(0.0, inf, 0.9);
  EXPECT_EQ(iv.lo, -inf);
  EXPECT_EQ(iv.hi, inf);
  EXPECT_EQ(uncertainty::bound_at(0.0, inf, models::BoundSide::kUpper), inf);
  EXPECT_EQ(uncertainty::bound_at(0.0, inf, models::BoundSide::kLower), -inf);
  auto finite = uncertainty::interval_around(2.0, 0.5, 0.9);
  EXPECT_DOUBLE_EQ(finite.lo, 1.0);
  EXPECT_DOUBLE_EQ(finite.hi, 3.0);
}
