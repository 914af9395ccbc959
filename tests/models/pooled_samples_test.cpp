// Pooling identical configurations (models/pooled_samples.h): the pooled
// metric points keep each configuration's weight, mean and spread, and the
// metric models fitted by least squares on them fit as they would on every
// sample; time models are fitted on one point per configuration.
#include "models/pooled_samples.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include "models/registry.h"

using namespace trainplan;
using models::PooledMetricSamples;

namespace {

Sample metric_sample(double b, int r, double e, double m) {
  Sample s;
  s.batch = b, s.workers = r, s.epochs = e, s.epoch_time_s = 1, s.metric = m;
  return s;
}

}  // namespace

TEST(PooledMetricSamples, KeepsEachConfigurationsWeightMeanAndSpread) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pick(0, 5);
  std::normal_distribution<double> noise(0, 0.05);
  std::vector<Sample> rows;
  std::map<std::tuple<double, int, double>, std::vector<double>> truth;  // the values of each configuration
  std::vector<std::tuple<double, int, double>> first_seen;
  for (int i = 0; i < 400; ++i) {
    const int c = pick(rng);
    const double b = 16 << (c % 3), e = 1 + c / 3;
    const int r = 1 + c % 2;
    const double m = 0.5 + 0.1 * c + noise(rng);
    rows.push_back(metric_sample(b, r, e, m));
    if (!truth.count({b, r, e})) first_seen.push_back({b, r, e});
    truth[{b, r, e}].push_back(m);
  }
  Sample no_metric = metric_sample(16, 1, 1, 0);
  no_metric.metric.reset();
  rows.insert(rows.begin() + 7, no_metric);  // left out, and moves the indices after it

  const PooledMetricSamples p(rows);
  EXPECT_EQ(p.samples(), 400u);
  EXPECT_EQ(p.values().size(), 400u);
  ASSERT_EQ(p.size(), first_seen.size());
  for (size_t i = 0; i < p.size(); ++i) {
    const auto& pt = p.points()[i];
    const auto key = std::tuple{pt.batch, pt.workers, pt.epochs};
    EXPECT_EQ(key, first_seen[i]) << "configurations in order of their first sample";
    const Sample& first = rows[pt.first];
    EXPECT_EQ(std::tuple(first.batch, first.workers, first.epochs), key);
    const std::vector<double>& v = truth[key];
    double mean = 0, ss = 0;
    for (double x : v) mean += x / double(v.size());
    for (double x : v) ss += (x - mean) * (x - mean);
    EXPECT_EQ(pt.w, double(v.size()));
    EXPECT_NEAR(pt.y, mean, 1e-12);
    EXPECT_NEAR(pt.ss, ss, 1e-10);
    for (double c : {-1.0, mean - 0.03, mean, mean + 0.01, 2.0}) {
      double dev = 0;
      for (double x : v) dev += std::abs(x - c);
      EXPECT_NEAR(p.abs_dev(i, c), dev, 1e-10);
    }
  }
}

TEST(PooledMetricSamples, OneSampleIsItsOwnValueExactly) {
  const std::vector<Sample> rows = {metric_sample(32, 1, 2, 0.123456789), metric_sample(64, 1, 2, 0.987654321)};
  const PooledMetricSamples p(rows);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p.points()[0].y, 0.123456789);
  EXPECT_EQ(p.points()[0].w, 1.0);
  EXPECT_EQ(p.points()[0].ss, 0.0);
  EXPECT_EQ(p.abs_dev(1, 0.5), std::abs(0.987654321 - 0.5));
}

TEST(PooledMetricSamples, ThinIndicesSpreadEvenlyAndKeepBothEnds) {
  EXPECT_EQ(models::thin_indices(4, 10), (std::vector<size_t>{0, 1, 2, 3}));
  const auto t = models::thin_indices(1000, 7);
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t.front(), 0u);
  EXPECT_EQ(t.back(), 999u);
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  EXPECT_EQ(std::adjacent_find(t.begin(), t.end()), t.end());
}

namespace {

// Configurations measured unequal numbers of times (1 to 40), each
// measurement with its own noise, and the same measurements with every
// repeat's `nudge`d field moved by a relative 1e-9, so that nothing pools:
// least squares on the pooled points and on every sample then agree.
struct Repeated {
  SampleSet pooled, unpooled;
};
Repeated repeated_runs(bool nudge_epochs) {
  std::mt19937 rng(5);
  std::normal_distribution<double> z(0, 1);
  Repeated out;
  for (auto* s : {&out.pooled, &out.unpooled}) s->direction = MetricDirection::kMax, s->dataset_size = 50000;
  // Within the models' families, so that both fits reach the same optimum:
  // compute plus a ring all-reduce on one node; an Optimus loss curve.
  int config = 0;
  for (int b : {32, 64, 128, 256})
    for (int r : {1, 2, 3, 4})
      for (int e : {2, 5, 9, 14}) {
        const int repeats = 1 + (config * 7) % 40;
        ++config;
        for (int k = 0; k < repeats; ++k) {
          Sample s;
          s.batch = b, s.workers = r, s.nodes = 1, s.epochs = e;
          const double B = double(b) * r, steps = 50000.0 / B;
          s.epoch_time_s = steps * (0.004 + 0.0004 * b + 0.01 * (r - 1) / r) * (1 + 0.05 * z(rng));
          s.metric = 0.9 - 1 / (0.002 * (e * 50000.0 / B) + 2.5) + 0.01 * z(rng);
          out.pooled.samples.push_back(s);
          const double f = 1 + 1e-9 * k;
          if (nudge_epochs) s.epochs *= f;
          else s.batch *= f;
          out.unpooled.samples.push_back(s);
        }
      }
  return out;
}

}  // namespace

TEST(PooledFits, OptimusCurvesWeighAConfigurationByItsSamples) {
  const Repeated d = repeated_runs(/*nudge_epochs=*/true);
  for (const char* name : {"optimus-curve", "optimus-curve-shared"}) {
    auto a = models::ModelRegistry::instance().make_metric(name), b = models::ModelRegistry::instance().make_metric(name);
    a->fit(d.pooled);
    b->fit(d.unpooled);
    for (int bb : {32, 100, 256})
      for (int r : {1, 2, 4})
        for (double e : {1.0, 4.0, 14.0, 30.0})
          EXPECT_NEAR(a->predict(bb, r, e), b->predict(bb, r, e), 1e-5) << name << " b=" << bb << " r=" << r << " e=" << e;
  }
}

// The weights matter: fitted on one sample per configuration instead, the
// same models answer differently (so the two tests above can fail).
TEST(PooledFits, OneSamplePerConfigurationFitsDifferently) {
  const Repeated d = repeated_runs(true);
  SampleSet firsts = d.pooled;
  firsts.samples.clear();
  for (const auto& s : d.pooled.samples)
    if (firsts.samples.empty() || std::tie(s.batch, s.workers, s.epochs) !=
                                      std::tie(firsts.samples.back().batch, firsts.samples.back().workers,
                                               firsts.samples.back().epochs))
      firsts.samples.push_back(s);
  auto a = models::ModelRegistry::instance().make_time("allreduce-physical");
  auto b = models::ModelRegistry::instance().make_time("allreduce-physical");
  a->fit(d.pooled);
  b->fit(firsts);
  EXPECT_GT(std::abs(a->predict(100, 3, 0) / b->predict(100, 3, 0) - 1), 1e-3);
}

// Every time model the registry makes fits on one point per configuration,
// the point `evaluate` scores it on: repeats of a configuration, however many
// and whatever their epochs, move the fit only through their epochs-weighted
// mean.
TEST(ConfigPooledTimeModel, RepeatsFitAsTheirConfigurationsMean) {
  SampleSet once;
  for (double b : {16.0, 32.0, 64.0, 128.0})
    for (int r : {1, 2, 4}) {
      Sample s;
      s.batch = b, s.workers = r, s.nodes = 1, s.epochs = 1;
      // Compute that falls with the workers, an all-reduce that grows with them, and a wobble.
      s.epoch_time_s = 60.0 / r + 0.5 * (r - 1) + 4.0 * 16 / b + 0.3 * std::sin(b * r);
      once.samples.push_back(s);
    }
  // The same configurations with the first read five more times at other
  // epochs. Counted by rows, it would weigh six times as much as the others.
  // (Equal times, so that the mean is the time to the last bit: the
  // all-reduce fit moves visibly with its data's last digits.)
  SampleSet repeated = once;
  const Sample first = once.samples[0];
  for (double epochs : {1.0, 2.0, 3.0, 2.0, 1.0}) {
    Sample s = first;
    s.epochs = epochs;
    repeated.samples.push_back(s);
  }
  ASSERT_EQ(models::distinct_time_configs(repeated).size(), once.size());
  EXPECT_EQ(models::distinct_time_configs(repeated).samples[0].epoch_time_s, first.epoch_time_s);
  // Unequal times pool to their epochs-weighted mean.
  SampleSet unequal = once;
  for (auto [epochs, dt] : std::vector<std::pair<double, double>>{{1, 5.0}, {2, -5.0}, {1, 5.0}}) {
    Sample s = first;
    s.epochs = epochs, s.epoch_time_s = first.epoch_time_s + dt;
    unequal.samples.push_back(s);
  }
  EXPECT_NEAR(models::distinct_time_configs(unequal).samples[0].epoch_time_s, first.epoch_time_s, 1e-12);
  // One worker with its nodes unknown is the same configuration as on one node.
  ASSERT_EQ(first.workers, 1);
  SampleSet unknown_nodes = once;
  Sample no_nodes = first;
  no_nodes.nodes = 0;
  unknown_nodes.samples.insert(unknown_nodes.samples.begin(), no_nodes);
  ASSERT_EQ(models::distinct_time_configs(unknown_nodes).size(), once.size());
  EXPECT_EQ(models::distinct_time_configs(unknown_nodes).samples[0].nodes, 1);
  for (const std::string name : {"allreduce-physical", "isotonic-mi", "per-batch-extrapolation"}) {
    auto a = models::ModelRegistry::instance().make_time(name);
    auto b = models::ModelRegistry::instance().make_time(name);
    a->fit(once);
    b->fit(repeated);
    for (const auto& s : once.samples)
      EXPECT_NEAR(a->predict(s.batch, s.workers, s.nodes), b->predict(s.batch, s.workers, s.nodes),
                  1e-9 * s.epoch_time_s)
          << name << " at batch " << s.batch << ", " << s.workers << " workers";
    EXPECT_NE(b->describe().find("pooled into 12 configurations"), std::string::npos) << name << ": " << b->describe();
    EXPECT_EQ(a->describe().find("pooled into 12 configurations"), std::string::npos) << name;
  }
}

// Hundreds of configurations on one node, their times exact to the
// millisecond (many batches, four worker counts): the non-negative least
// squares inside the all-reduce models once emptied its passive set here and
// crashed on a QR of no columns (a server's /fit took the process down).
TEST(ConfigPooledTimeModel, ManyExactConfigurationsFitWithoutACrash) {
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> batch(16, 512), epochs(1, 60), which(0, 3);
  SampleSet set;
  set.dataset_size = 60000;
  for (int i = 0; i < 710; ++i) {
    Sample s;
    s.batch = batch(rng), s.workers = 1 << which(rng), s.nodes = 1, s.epochs = epochs(rng);
    const double t = 60000.0 / (s.batch * s.workers) * 0.002 * (1 + 0.1 * s.workers) + 0.5;
    s.epoch_time_s = std::round(t * 1000) / 1000;
    set.samples.push_back(s);
  }
  for (const char* name : {"allreduce-local", "allreduce-physical"}) {
    auto m = models::ModelRegistry::instance().make_time(name);
    m->fit(set);
    for (int b : {16, 100, 512})
      for (int r : {1, 2, 8}) {
        const double got = m->predict(b, r, 0);
        EXPECT_TRUE(std::isfinite(got) && got > 0) << name << " b=" << b << " r=" << r << ": " << got;
      }
  }
}
