#include "experiments/curve_records.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::experiments;

namespace {

// Global batch 10 over 100 examples: 10 iterations per epoch, one evaluation an epoch.
io::ValidationCurve curve(const std::vector<double>& metric, double sign = 1) {
  io::ValidationCurve c;
  c.global_batch = 10;
  c.path = "validation-10.csv";
  for (size_t k = 0; k < metric.size(); ++k) {
    io::ValidationRow r;
    r.iteration = 10.0 * static_cast<double>(k + 1);
    r.metric = sign * metric[k];
    c.rows.push_back(r);
  }
  return c;
}

const std::vector<double> kCurve = {0.0, 0.5, 0.8, 0.79, 0.85, 0.84, 0.83, 0.9, 0.95, 1.0};

}  // namespace

TEST(CurveRecords, CountsRecordsAndFlatStretchesInTheWindow) {
  // Best so far: 0 .5 .8 .8 .85 .85 .85 .9 .95 1, of a range of 1. The window
  // opens at the first evaluation at 80% (epoch 3) and closes at the first at
  // 98% (epoch 10); records at epochs 5, 8, 9 and 10; the metric gets worse at 4, 6 and 7.
  auto r = experiments::curve_records(curve(kCurve), 100, MetricDirection::kMax);
  EXPECT_DOUBLE_EQ(r.last_epoch, 10);
  EXPECT_DOUBLE_EQ(r.window_from, 3);
  EXPECT_DOUBLE_EQ(r.window_to, 10);
  EXPECT_EQ(r.window_steps, 7);
  EXPECT_EQ(r.window_records, 4);
  EXPECT_DOUBLE_EQ(r.mean_flat_epochs, (2 + 3 + 1 + 1) / 4.0);
  EXPECT_DOUBLE_EQ(r.longest_flat_epochs, 3);
  EXPECT_DOUBLE_EQ(r.worse_steps, 3.0 / 7);
}

TEST(CurveRecords, AMetricToMinimiseGivesTheSameRecords) {
  auto up = experiments::curve_records(curve(kCurve), 100, MetricDirection::kMax);
  auto down = experiments::curve_records(curve(kCurve, -1), 100, MetricDirection::kMin);
  EXPECT_EQ(down.window_records, up.window_records);
  EXPECT_DOUBLE_EQ(down.mean_flat_epochs, up.mean_flat_epochs);
  EXPECT_DOUBLE_EQ(down.worse_steps, up.worse_steps);
  // Read in the wrong direction the curve has no record after its first evaluation.
  auto wrong = experiments::curve_records(curve(kCurve), 100, MetricDirection::kMin);
  EXPECT_EQ(wrong.window_records, 0);
}

TEST(CurveRecords, TheWindowMovesWithItsShares) {
  experiments::RecordsParams p;
  p.from = 0.5, p.to = 0.9;  // epoch 2 to the first evaluation at 90%, epoch 8
  auto r = experiments::curve_records(curve(kCurve), 100, MetricDirection::kMax, p);
  EXPECT_DOUBLE_EQ(r.window_from, 2);
  EXPECT_DOUBLE_EQ(r.window_to, 8);
  EXPECT_EQ(r.window_records, 3);  // epochs 3, 5 and 8
  EXPECT_DOUBLE_EQ(r.longest_flat_epochs, 3);
}

TEST(CurveRecords, BadInputNamesTheCurve) {
  EXPECT_THROW(experiments::curve_records(curve(kCurve), 0, MetricDirection::kMax), InputError);
  EXPECT_THROW(experiments::curve_records(curve({0.1, 0.2, 0.3}), 100, MetricDirection::kMax), InputError);
  experiments::RecordsParams p;
  p.from = 0.9, p.to = 0.8;
  try {
    experiments::curve_records(curve(kCurve), 100, MetricDirection::kMax, p);
    FAIL() << "an empty window was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("validation-10.csv"), std::string::npos) << e.what();
  }
}

TEST(CurveRecords, BenchRecordsReadsEveryTraceWithCurves) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto r = tptest::run_cli("bench records --data " + tptest::shared_data_dir() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  for (const char* t : {"cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}) {
    ASSERT_TRUE(doc["traces"].contains(t)) << t;
    for (const auto& c : doc["traces"][t]["curves"]) {
      EXPECT_LE(c["window_from"].get<double>(), c["window_to"].get<double>()) << t;
      EXPECT_LE(c["window_records"].get<int>(), c["window_steps"].get<int>()) << t;
      EXPECT_LE(c["mean_flat_epochs"].get<double>(), c["longest_flat_epochs"].get<double>() + 1e-12) << t;
    }
  }
  EXPECT_FALSE(doc["traces"].contains("bert"));  // two evaluations a run: nothing to count
  auto bad = tptest::run_cli("bench records --data /nonexistent");
  EXPECT_EQ(bad.exit_code, 2);
  auto empty = tptest::run_cli("bench records --data " + tptest::shared_data_dir() + " --from 0.9 --to 0.5");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("--from"), std::string::npos) << empty.err;
}
