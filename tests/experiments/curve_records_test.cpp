#include "experiments/curve_records.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

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
  // Each error names the curve's file and the input that is wrong.
  auto expect_error = [](const io::ValidationCurve& c, long dataset_size, const experiments::RecordsParams& p,
                         const std::string& field) {
    try {
      experiments::curve_records(c, dataset_size, MetricDirection::kMax, p);
      ADD_FAILURE() << "accepted: " << field;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "validation-10.csv") << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
    }
  };
  expect_error(curve(kCurve), 0, {}, "dataset_size");
  expect_error(curve({0.1, 0.2, 0.3}), 100, {}, "metric");  // fewer than kMinRecordsEvaluations
  experiments::RecordsParams p;
  p.from = 0.9, p.to = 0.8;  // an empty window
  expect_error(curve(kCurve), 100, p, "window");
}

TEST(CurveRecords, BenchRecordsReadsEveryTraceWithCurves) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto r = tptest::run_cli("bench records --data " + tptest::shared_data_dir() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  namespace fs = std::filesystem;
  const std::vector<std::string> traces = {"cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"};
  ASSERT_EQ(doc["traces"].size(), traces.size()) << doc["traces"].dump();
  for (const auto& t : traces) {
    ASSERT_TRUE(doc["traces"].contains(t)) << t;
    const auto& jt = doc["traces"][t];
    // One entry per validation curve of the trace (pollux-t4/<t>/validation-<B>.csv:
    // every one has enough evaluations), each at its file's global batch.
    std::set<long> batches;
    for (const auto& f : fs::directory_iterator(fs::path(tptest::shared_data_dir()) / "pollux-t4" / t)) {
      const std::string n = f.path().filename().string();
      if (n.rfind("validation-", 0) == 0) batches.insert(std::stol(n.substr(11)));
    }
    ASSERT_GE(batches.size(), 6u) << t;
    ASSERT_EQ(jt["curves"].size(), batches.size()) << t;
    std::set<long> seen;
    double longest = 0;
    for (const auto& c : jt["curves"]) {
      seen.insert(c["global_batch"].get<long>());
      EXPECT_LE(c["window_from"].get<double>(), c["window_to"].get<double>()) << t;
      EXPECT_LE(c["window_to"].get<double>(), c["last_epoch"].get<double>() + 1e-9) << t;
      EXPECT_LE(c["window_records"].get<int>(), c["window_steps"].get<int>()) << t;
      EXPECT_LE(c["mean_flat_epochs"].get<double>(), c["longest_flat_epochs"].get<double>() + 1e-12) << t;
      EXPECT_GE(c["worse_steps"].get<double>(), 0.0) << t;
      EXPECT_LE(c["worse_steps"].get<double>(), 1.0) << t;
      longest = std::max(longest, c["longest_flat_epochs"].get<double>());
    }
    EXPECT_EQ(seen, batches) << t;
    // The trace's summary is over its curves.
    EXPECT_DOUBLE_EQ(jt["max_longest_flat_epochs"].get<double>(), longest) << t;
    EXPECT_EQ(jt["direction"], t == "deepspeech2" || t == "yolov3" ? "min" : "max") << t;  // WER and loss
  }
  EXPECT_FALSE(doc["traces"].contains("bert"));  // two evaluations a run: nothing to count
  auto bad = tptest::run_cli("bench records --data /nonexistent");
  EXPECT_EQ(bad.exit_code, 2);
  auto empty = tptest::run_cli("bench records --data " + tptest::shared_data_dir() + " --from 0.9 --to 0.5");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(empty.err, "", 0, "--from"));
}
