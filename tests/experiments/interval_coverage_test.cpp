// experiments::time_coverage / metric_coverage (the counts behind `bench intervals`).
#include "experiments/interval_coverage.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace trainplan;
using namespace trainplan::experiments;

namespace {

// Predicts 1; interval [0.9, 1.1]; lower bound 0.95, upper bound 1.05.
class FixedMetric : public models::MetricModel {
 public:
  std::string name() const override { return "fixed"; }
  void fit(const SampleSet&) override {}
  double predict(double, int, double) const override { return 1; }
  std::optional<models::Interval> predict_interval(double, int, double, double c) const override {
    return models::Interval{0.9, 1.1, c};
  }
  std::optional<double> predict_bound(double, int, double, double, models::BoundSide s) const override {
    return s == models::BoundSide::kLower ? 0.95 : 1.05;
  }
};

// Predicts 10 s with no interval or bound at all.
class NoIntervalTime : public models::TimeModel {
 public:
  std::string name() const override { return "bare"; }
  void fit(const SampleSet&) override {}
  double predict(double, int, int) const override { return 10; }
};

Sample make_sample(double b, int r, double e, double t, std::optional<double> m) {
  Sample s;
  s.batch = b, s.workers = r, s.epochs = e, s.epoch_time_s = t, s.metric = m, s.nodes = 1;
  return s;
}

}  // namespace

TEST(Coverage, CountsEachSideAndTheInterval) {
  SampleSet s;
  for (double y : {0.8, 0.92, 0.97, 1.0, 1.07, 1.2}) s.samples.push_back(make_sample(32, 1, 1, 1, y));
  s.samples.push_back(make_sample(32, 1, 2, 1, std::nullopt));  // no metric: not scored
  auto c = experiments::metric_coverage(FixedMetric(), s, 0.9);
  EXPECT_EQ(c.n, 6u);
  EXPECT_DOUBLE_EQ(c.rate(c.two_sided), 4.0 / 6);    // 0.92, 0.97, 1.0, 1.07
  EXPECT_DOUBLE_EQ(c.rate(c.above_lower), 4.0 / 6);  // 0.97, 1.0, 1.07, 1.2
  EXPECT_DOUBLE_EQ(c.rate(c.below_upper), 4.0 / 6);  // 0.8, 0.92, 0.97, 1.0
}

TEST(Coverage, TimeScoresDistinctConfigurationsAndMissingIntervalsMiss) {
  SampleSet s;
  s.samples.push_back(make_sample(32, 1, 1, 10, 0.5));
  s.samples.push_back(make_sample(32, 1, 2, 10, 0.6));  // same configuration: one point
  s.samples.push_back(make_sample(64, 2, 1, 6, 0.5));
  auto c = experiments::time_coverage(NoIntervalTime(), s, 0.9);
  EXPECT_EQ(c.n, 2u);
  EXPECT_EQ(c.two_sided, 0u);
  EXPECT_EQ(c.above_lower, 0u);
  EXPECT_EQ(c.below_upper, 0u);
  EXPECT_EQ(experiments::metric_coverage(FixedMetric(), SampleSet{}, 0.9).n, 0u);
}

// Runs sampled at {2, 5, 9} and {4}; the last epoch sampled anywhere is 9.
TEST(Coverage, EpochRegionsFollowTheSampledEpochs) {
  SampleSet train;
  for (double e : {2, 5, 9}) train.samples.push_back(make_sample(32, 1, e, 1, 0.5));
  train.samples.push_back(make_sample(64, 2, 4, 1, 0.5));
  train.samples.push_back(make_sample(128, 1, 20, 1, std::nullopt));  // no metric: not a sample of the metric
  experiments::EpochRegions r(train);
  using R = experiments::EpochRegion;
  EXPECT_EQ(r.of(32, 1, 1), R::kBefore);
  EXPECT_EQ(r.of(32, 1, 2), R::kAt);
  EXPECT_EQ(r.of(32, 1, 3), R::kBetween);
  EXPECT_EQ(r.of(32, 1, 9), R::kAt);
  EXPECT_EQ(r.of(32, 1, 10), R::kBeyondAll);
  EXPECT_EQ(r.of(64, 2, 6), R::kAfterRun);
  EXPECT_EQ(r.of(64, 2, 9), R::kAfterRun);
  EXPECT_EQ(r.of(64, 2, 12), R::kBeyondAll);
  EXPECT_EQ(r.of(32, 2, 3), R::kUnsampledRun);
  EXPECT_EQ(r.of(128, 1, 12), R::kBeyondAll);
  SampleSet test;
  for (double e : {1, 3, 4, 10}) test.samples.push_back(make_sample(32, 1, e, 1, 1.0));
  auto by = experiments::metric_coverage_by_region(FixedMetric(), r, test, 0.9);
  EXPECT_EQ(by.size(), 3u);
  EXPECT_EQ(by[R::kBetween].n, 2u);
  EXPECT_EQ(by[R::kBetween].interval_lo, 2u);
  EXPECT_EQ(by[R::kBeyondAll].n, 1u);
  EXPECT_EQ(by.count(R::kAt), 0u);
}

TEST(Coverage, BenchIntervalsOnOneTraceAndItsErrors) {
  auto same = tptest::run_cli("bench intervals --data /nonexistent --seed 5 --holdout-seed 5");
  EXPECT_EQ(same.exit_code, 2) << same.err;
  EXPECT_TRUE(tptest::names_input_error(same.err, "", 0, "", {"--holdout-seed", "--seed"}));
  auto conf = tptest::run_cli("bench intervals --data /nonexistent --confidence 1");
  EXPECT_EQ(conf.exit_code, 2) << conf.err;
  TRAINPLAN_REQUIRE_SHARED_DATA();
  namespace fs = std::filesystem;
  auto d = tptest::temp_dir("bench_intervals");
  fs::create_directory_symlink(fs::path(tptest::shared_data_dir()) / "pollux-t4" / "ncf", d / "ncf");
  auto r = tptest::run_cli("bench intervals --data " + d.string() +
                           " --time-model per-batch-extrapolation --metric-model global-batch --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["holdout_seed"], 1001);
  const auto& t = j["traces"]["ncf"];
  EXPECT_EQ(t["metric_model"], "global-batch");
  for (const char* part : {"time", "metric"}) {
    EXPECT_GT(t[part]["points"].get<int>(), 0) << part;
    for (const char* k : {"two_sided", "above_lower", "below_upper"}) {
      double v = t[part][k].get<double>();
      EXPECT_GE(v, 0.0) << part << " " << k;
      EXPECT_LE(v, 1.0) << part << " " << k;
    }
  }
  EXPECT_EQ(j["all"]["metric"]["points"], t["metric"]["points"]);

  // --points runs: every whole epoch up to ncf's limit of 10, on each sampled
  // configuration with a metric (one time point each).
  auto runs = tptest::run_cli("bench intervals --data " + d.string() +
                              " --time-model per-batch-extrapolation --metric-model global-batch --points runs --json");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  auto jr = nlohmann::json::parse(runs.out);
  EXPECT_EQ(jr["points"], "runs");
  EXPECT_FALSE(jr.contains("holdout_seed"));
  const auto& tr = jr["traces"]["ncf"];
  EXPECT_GT(tr["time"]["points"].get<int>(), 0);
  EXPECT_EQ(tr["metric"]["points"].get<int>(), 10 * tr["time"]["points"].get<int>());
  int in_regions = 0;
  for (const auto& [region, c] : tr["metric_by_region"].items()) {
    in_regions += c["points"].get<int>();
    for (const char* k : {"two_sided", "pessimistic_end", "optimistic_end"}) {
      EXPECT_GE(c[k].get<double>(), c["two_sided"].get<double>()) << region << " " << k;  // an end holds at least as often
      EXPECT_LE(c[k].get<double>(), 1.0) << region << " " << k;
    }
  }
  EXPECT_EQ(in_regions, tr["metric"]["points"].get<int>());
  EXPECT_TRUE(tr["metric_by_region"].contains("at a sampled epoch")) << tr["metric_by_region"].dump();
  EXPECT_EQ(jr["all"]["metric_by_region"], tr["metric_by_region"]);
  auto bad = tptest::run_cli("bench intervals --data " + d.string() + " --points sometimes");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}
