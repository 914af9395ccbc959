// eval::time_coverage / metric_coverage (the counts behind `bench intervals`).
#include "eval/coverage.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace trainplan;

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
  auto c = eval::metric_coverage(FixedMetric(), s, 0.9);
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
  auto c = eval::time_coverage(NoIntervalTime(), s, 0.9);
  EXPECT_EQ(c.n, 2u);
  EXPECT_EQ(c.two_sided, 0u);
  EXPECT_EQ(c.above_lower, 0u);
  EXPECT_EQ(c.below_upper, 0u);
  EXPECT_EQ(eval::metric_coverage(FixedMetric(), SampleSet{}, 0.9).n, 0u);
}

TEST(Coverage, BenchIntervalsOnOneTraceAndItsErrors) {
  auto same = tptest::run_cli("bench intervals --data /nonexistent --seed 5 --holdout-seed 5");
  EXPECT_EQ(same.exit_code, 2) << same.err;
  EXPECT_NE(same.err.find("--holdout-seed"), std::string::npos) << same.err;
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
  auto bad = tptest::run_cli("bench intervals --data " + d.string() + " --points sometimes");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}
