// The fit and predict verbs: output, JSON and exit codes.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace {

// tptest::synthetic_samples_csv in a file.
std::string fixture(bool with_metric, double wobble = 0) {
  const std::string csv = tptest::synthetic_samples_csv(with_metric, wobble);
  auto d = tptest::temp_dir("fitpredict");
  return tptest::write_file(d / (with_metric ? (wobble > 0 ? "w.csv" : "s.csv") : "t.csv"), csv);
}

}  // namespace

TEST(FitCli, PrintsBothPartsAndInSampleMre) {
  const std::string args = "fit --samples " + fixture(true) + " --time-model isotonic-mi --metric-model global-batch";
  auto text = tptest::run_cli(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_FALSE(text.out.empty());
  auto r = tptest::run_cli(args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["n_samples"], 48);
  // Each part: the model asked for and its in-sample MRE, time on the 16
  // distinct (batch, workers, nodes), the metric on every sample.
  EXPECT_EQ(j["time"]["model"], "isotonic-mi");
  ASSERT_TRUE(j["time"]["in_sample_mre"].is_number()) << j.dump(2);
  EXPECT_GT(j["time"]["in_sample_mre"].get<double>(), 0);  // additive in b and r: not exact on 1/(b r)
  EXPECT_EQ(j["time"]["n_scored"], 16);
  EXPECT_EQ(j["metric"]["model"], "global-batch");
  ASSERT_TRUE(j["metric"]["in_sample_mre"].is_number()) << j.dump(2);
  EXPECT_LT(j["metric"]["in_sample_mre"].get<double>(), 0.01);
  EXPECT_EQ(j["metric"]["n_scored"], 48);
}

TEST(FitCli, JsonHasScoresAndOnlyTheNamedPart) {
  auto r = tptest::run_cli("fit --samples " + fixture(true) + " --metric-model global-batch --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["time"].is_null());
  EXPECT_EQ(j["metric"]["model"], "global-batch");
  EXPECT_LT(j["metric"]["in_sample_mre"].get<double>(), 0.01);
  EXPECT_EQ(j["metric"]["n_scored"].get<int>(), 48);
  r = tptest::run_cli("fit --samples " + fixture(true) + " --model optimus-curve --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["time"].is_null());  // optimus-curve has no time part
  EXPECT_EQ(j["metric"]["model"], "optimus-curve");
}

TEST(FitCli, BadInputExits2) {
  auto r = tptest::run_cli("fit --samples /nonexistent.csv --model isotonic-mi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: --samples: ", 0), 0u) << r.err;  // a usage error of the option
  r = tptest::run_cli("fit --samples " + fixture(true) + " --metric-model no-such-model");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, "", {"'no-such-model'"}));
  const std::string time_only = fixture(false);
  r = tptest::run_cli("fit --samples " + time_only + " --metric-model global-batch");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, time_only, 0, "metric"));
}

// Two configurations are too few for auto to hold any out: the message says
// how many there are and what to do, not only that nothing could be scored.
TEST(FitCli, TooSmallAGridForAutoSaysWhatToDo) {
  const auto d = tptest::temp_dir("fit-small");
  const auto csv = tptest::write_file(d / "two.csv",
                                      "batch,workers,epochs,epoch_time_s,metric\n16,1,1,2.0,0.8\n32,1,1,1.2,0.7\n");
  auto r = tptest::run_cli("fit --samples " + csv);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, csv, 0, "--model",
                                        {"2 distinct configuration(s)", "batches 16,32, workers 1, epochs 1",
                                         "--time-model", "larger grid", "--failed"}))
      << r.err;
}

TEST(PredictCli, JsonGivesValuesInsideConformalIntervals) {
  auto r = tptest::run_cli("predict --samples " + fixture(true) +
                           " --batch 48 --workers 4 --epochs 20 --time-model isotonic-mi --metric-model global-batch "
                           "--confidence 0.8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  double t = j["epoch_time_s"]["value"], lo = j["epoch_time_s"]["interval"]["lo"], hi = j["epoch_time_s"]["interval"]["hi"];
  EXPECT_LE(lo, t);
  EXPECT_GE(hi, t);
  EXPECT_GT(t, 0);
  double m = j["metric"]["value"];
  EXPECT_LE(j["metric"]["interval"]["lo"].get<double>(), m);
  EXPECT_GE(j["metric"]["interval"]["hi"].get<double>(), m);
  // Known answer: the synthetic accuracy at B = 192, e = 20.
  double x = 20 * 528.0 / (400 + 192);
  EXPECT_NEAR(m, 0.95 - 0.6 / (1 + x / 4), 0.02);
  // Conformal on relative residuals (the default method): each interval is
  // the prediction times 1 -/+ q, at the coverage asked for.
  for (const auto* p : {&j["epoch_time_s"], &j["metric"]}) {
    const auto& iv = (*p)["interval"];
    EXPECT_EQ(iv["method"], "5-fold conformal, relative residuals");
    EXPECT_EQ(iv["coverage"].get<double>(), 0.8);
    const double v = (*p)["value"].get<double>();
    EXPECT_NEAR(iv["hi"].get<double>() - v, v - iv["lo"].get<double>(), 1e-9 * v) << iv;
  }
  EXPECT_EQ(j["config"]["nodes"].get<int>(), 1);
  EXPECT_NEAR(j["total_time_s"].get<double>(), 20 * t, 1e-6 * t);
  // Its interval, as the text's "time for 20 epochs" gives it: the epoch time's ends times the epochs.
  EXPECT_NEAR(j["total_time_interval_s"]["lo"].get<double>(), 20 * j["epoch_time_s"]["interval"]["lo"].get<double>(), 1e-9 * t);
  EXPECT_NEAR(j["total_time_interval_s"]["hi"].get<double>(), 20 * hi, 1e-9 * t);
  EXPECT_EQ(j["total_time_interval_s"]["coverage"].get<double>(), 0.8);
  // One-sided bounds at the same coverage: on the pessimistic side, inside the interval's ends.
  const auto& tb = j["epoch_time_s"]["one_sided_bound"];
  EXPECT_EQ(tb["side"], "upper");
  EXPECT_LE(tb["value"].get<double>(), hi + 1e-12);
  const auto& mb = j["metric"]["one_sided_bound"];
  EXPECT_EQ(mb["side"], "lower");  // accuracy: higher is better
  EXPECT_GE(mb["value"].get<double>(), j["metric"]["interval"]["lo"].get<double>() - 1e-12);
  EXPECT_EQ(mb["coverage"].get<double>(), 0.8);
}

// A configuration the samples measured: predict shows the measurement beside
// the models' values, and says when it falls outside their interval.
TEST(PredictCli, ShowsWhatThisConfigurationMeasured) {
  std::string csv = tptest::synthetic_samples_csv(true, 0);
  // Batch 32 on 2 workers measured three times slower than the rest predict.
  std::string slowed;
  for (const auto& line : tptest::lines(csv)) {
    if (line.rfind("32,2,", 0) == 0) {
      std::vector<std::string> f;
      std::stringstream in(line);
      for (std::string x; std::getline(in, x, ',');) f.push_back(x);
      f[3] = std::to_string(3 * std::stod(f[3]));
      slowed += f[0] + "," + f[1] + "," + f[2] + "," + f[3] + "," + f[4] + "," + f[5] + "\n";
    } else {
      slowed += line + "\n";
    }
  }
  const auto d = tptest::temp_dir("predictmeasured");
  const std::string file = tptest::write_file(d / "slowed.csv", slowed);
  const std::string common = " --time-model isotonic-mi --metric-model global-batch --confidence 0.5";
  auto r = tptest::run_cli("predict --samples " + file + " --batch 32 --workers 2 --epochs 10" + common + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& m = j["measured"];
  const double t_measured = 3 * 50000.0 / 64 * (0.01 + 0.0005 * 32);
  EXPECT_NEAR(m["epoch_time_s"].get<double>(), t_measured, 1e-3 * t_measured) << m;
  EXPECT_EQ(m["time_inside_interval"], false) << j.dump(2);
  const double x = 10 * 528.0 / (400 + 64);
  EXPECT_NEAR(m["metric"].get<double>(), 0.95 - 0.6 / (1 + x / 4), 1e-5) << m;
  EXPECT_EQ(m["metric_rows"], 1);
  const auto& miv = j["metric"]["interval"];
  EXPECT_EQ(m["metric_inside_interval"].get<bool>(),
            miv["lo"].get<double>() <= m["metric"].get<double>() && m["metric"].get<double>() <= miv["hi"].get<double>());
  auto text = tptest::run_cli("predict --samples " + file + " --batch 32 --workers 2 --epochs 10" + common);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("measured at this configuration: epoch time"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("OUTSIDE the interval"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("trust the measurement here"), std::string::npos) << text.out;
  // An epoch count no trial of it ran: its time is measured, its metric not.
  auto e = nlohmann::json::parse(
      tptest::run_cli("predict --samples " + file + " --batch 32 --workers 2 --epochs 11" + common + " --json").out);
  EXPECT_TRUE(e["measured"]["epoch_time_s"].is_number());
  EXPECT_TRUE(e["measured"]["metric"].is_null());
  // A configuration never measured: nothing.
  auto u = nlohmann::json::parse(
      tptest::run_cli("predict --samples " + file + " --batch 48 --workers 2 --epochs 10" + common + " --json").out);
  EXPECT_TRUE(u["measured"]["epoch_time_s"].is_null()) << u["measured"];
  EXPECT_TRUE(u["measured"]["metric"].is_null());
  auto ut = tptest::run_cli("predict --samples " + file + " --batch 48 --workers 2 --epochs 10" + common);
  EXPECT_EQ(ut.out.find("measured at this configuration"), std::string::npos) << ut.out;
}

// --target: the first epoch count that meets it, on the point prediction and
// on each end of the interval, checked against --epochs at the same point.
TEST(PredictCli, TargetGivesTheFirstEpochsThatMeetIt) {
  // With a 1% wobble, so that the held-out residuals, and the interval, have width.
  const std::string s = fixture(true, 0.01);
  const std::string at = " --batch 48 --workers 4 --time-model isotonic-mi --metric-model global-batch --confidence 0.8";
  auto r = tptest::run_cli("predict --samples " + s + at + " --target 0.8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& tt = j["to_target"];
  ASSERT_TRUE(tt["epochs"]["value"].is_number()) << tt.dump();
  const int e = tt["epochs"]["value"], lo = tt["epochs"]["lo"], hi = tt["epochs"]["hi"];
  EXPECT_LE(lo, e);
  EXPECT_GE(hi, e);
  EXPECT_LT(lo, hi);  // the interval has width here
  // Known answer: 0.95 - 0.6/(1 + x/4) >= 0.8 at x >= 12, x = e 528/592: e >= 13.45.
  EXPECT_NEAR(e, 14, 1);
  auto metric_at = [&](int epochs) {
    auto p = tptest::run_cli("predict --samples " + s + at + " --epochs " + std::to_string(epochs) + " --json");
    EXPECT_EQ(p.exit_code, 0) << p.err;
    return nlohmann::json::parse(p.out)["metric"];
  };
  EXPECT_GE(metric_at(e)["value"].get<double>(), 0.8);
  EXPECT_LT(metric_at(e - 1)["value"].get<double>(), 0.8);
  EXPECT_GE(metric_at(lo)["interval"]["hi"].get<double>(), 0.8);
  EXPECT_GE(metric_at(hi)["interval"]["lo"].get<double>(), 0.8);
  EXPECT_LT(metric_at(hi - 1)["interval"]["lo"].get<double>(), 0.8);
  EXPECT_NEAR(tt["total_time_s"]["value"].get<double>(), e * j["epoch_time_s"]["value"].get<double>(), 1e-6);
  EXPECT_FALSE(j.contains("total_time_s"));  // no --epochs: no fixed-epoch time
  // Out of reach: null epochs, and the text says so.
  auto far = tptest::run_cli("predict --samples " + s + at + " --target 0.99 --max-epochs 200 --json");
  ASSERT_EQ(far.exit_code, 0) << far.err;
  const auto jfar = nlohmann::json::parse(far.out)["to_target"];
  EXPECT_EQ(jfar["max_epochs"], 200);
  EXPECT_EQ(jfar["target"].get<double>(), 0.99);
  for (const char* k : {"value", "lo", "hi"}) {
    EXPECT_TRUE(jfar["epochs"][k].is_null()) << jfar.dump();
    EXPECT_TRUE(jfar["total_time_s"][k].is_null()) << jfar.dump();
  }
  EXPECT_EQ(tptest::run_cli("predict --samples " + s + at + " --target 0.99 --max-epochs 200").exit_code, 0);
  // A time-only profile cannot answer it.
  const std::string time_only = fixture(false);
  auto none = tptest::run_cli("predict --samples " + time_only + " --batch 64 --workers 2 --target 0.8 --model isotonic-mi");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(none.err, time_only, 0, "metric", {"--target"}));
}

// The epochs to a target are held to the runs measured at the configuration,
// as plan holds its choices: a shipped profile's trial of batch 16 on one
// worker reached 0.9455 after 2 epochs, so 0.95 takes at least 3, whatever the
// curve fitted to all trials says; plan on that batch agrees.
TEST(PredictCli, EpochsToATargetAreHeldToTheRunsMeasuredThere) {
  const std::string s = tptest::source_dir() + "/examples/lenet-mnist-1worker.csv";
  // The metric model named: the test is of the holding, whichever model the
  // cross-validation prefers on these ten samples.
  const std::string models = " --time-model allreduce-local --metric-model optimus-curve";
  auto r = tptest::run_cli("predict --samples " + s + models + " --batch 16 --workers 1 --target 0.95 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto tt = nlohmann::json::parse(r.out)["to_target"];
  ASSERT_TRUE(tt["epochs"]["value"].is_number()) << tt.dump();
  EXPECT_GE(tt["epochs"]["value"].get<int>(), 3) << tt.dump();
  EXPECT_GE(tt["held_to_runs"].get<int>(), 1) << tt.dump();
  auto p = tptest::run_cli("plan --samples " + s + models + " --batches 16 --max-workers 1 --target 0.95 --deadline 1h --json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(nlohmann::json::parse(p.out)["choice"]["epochs"], tt["epochs"]["value"]) << p.out;
}

// The interval's worse end never promises a metric better than the best
// sample (uncertainty/conformal.h): past it, predict says so, and a target past it
// is never met by that end.
TEST(PredictCli, WorseEndIsHeldAtTheBestSampledMetric) {
  const std::string s = fixture(true);
  const double best = 0.95 - 0.6 / (1 + 30 * 528.0 / 416 / 4);  // b 16, r 1, 30 epochs: 0.893
  const std::string at = " --batch 16 --workers 1 --time-model isotonic-mi";
  // global-batch-curve extrapolates past every sample after 200 epochs.
  auto r = tptest::run_cli("predict --samples " + s + at + " --metric-model global-batch-curve --epochs 200 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["best_sampled_metric"].get<double>(), best, 1e-6);
  EXPECT_GT(j["metric"]["value"].get<double>(), best + 0.01);
  EXPECT_DOUBLE_EQ(j["metric"]["interval"]["lo"].get<double>(), j["best_sampled_metric"].get<double>());
  EXPECT_DOUBLE_EQ(j["metric"]["one_sided_bound"]["value"].get<double>(), j["best_sampled_metric"].get<double>());
  // Inside the sampled range the lower end is the interval's own, below the best sample.
  auto inside = tptest::run_cli("predict --samples " + s + at + " --metric-model global-batch-curve --epochs 5 --json");
  ASSERT_EQ(inside.exit_code, 0) << inside.err;
  auto ji = nlohmann::json::parse(inside.out);
  EXPECT_NEAR(ji["best_sampled_metric"].get<double>(), best, 1e-6);
  EXPECT_LT(ji["metric"]["interval"]["lo"].get<double>(), ji["metric"]["value"].get<double>());
  EXPECT_LT(ji["metric"]["interval"]["lo"].get<double>(), ji["best_sampled_metric"].get<double>() - 0.01);
  // A target past the best sample: the point may reach it, the worse end never does.
  auto far = tptest::run_cli("predict --samples " + s + at + " --metric-model optimus-curve --target 0.93 --json");
  ASSERT_EQ(far.exit_code, 0) << far.err;
  auto jf = nlohmann::json::parse(far.out);
  EXPECT_TRUE(jf["to_target"]["epochs"]["value"].is_number()) << jf.dump();
  EXPECT_TRUE(jf["to_target"]["epochs"]["hi"].is_null()) << jf.dump();
  EXPECT_GT(jf["to_target"]["target"].get<double>(), jf["best_sampled_metric"].get<double>());
}

TEST(PredictCli, MoreFoldsThanConfigurationsNamesTheFoldsUsed) {
  // The fixture holds 16 configurations: 40 folds asked for deal them into 16.
  const std::string args = "predict --samples " + fixture(true) +
                           " --batch 64 --workers 8 --epochs 10 --time-model isotonic-mi --metric-model optimus-curve "
                           "--folds 40";
  auto r = tptest::run_cli(args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const auto* p : {&j["epoch_time_s"], &j["metric"]})
    EXPECT_EQ((*p)["interval"]["method"], "16-fold conformal, relative residuals");
  auto text = tptest::run_cli(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(16-fold conformal)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("40-fold"), std::string::npos) << text.out;
}

TEST(PredictCli, TextNamesTheIntervalMethod) {
  const std::string args = "predict --samples " + fixture(true) +
                           " --batch 64 --workers 8 --epochs 10 --time-model isotonic-mi --metric-model optimus-curve";
  auto text = tptest::run_cli(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_FALSE(text.out.empty());
  auto r = tptest::run_cli(args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // Each part's model, and its interval's method and coverage (0.9 by default).
  EXPECT_EQ(j["config"]["epochs"].get<double>(), 10.0);
  EXPECT_EQ(j["config"]["nodes"], 2);
  EXPECT_EQ(j["epoch_time_s"]["model"], "isotonic-mi");
  EXPECT_EQ(j["metric"]["model"], "optimus-curve");
  for (const auto* p : {&j["epoch_time_s"], &j["metric"]}) {
    EXPECT_EQ((*p)["interval"]["method"], "5-fold conformal, relative residuals");
    EXPECT_EQ((*p)["interval"]["coverage"].get<double>(), 0.9);
  }
}

TEST(PredictCli, SaysWhenTheIntervalCannotPromiseItsCoverage) {
  // Three configurations: three held-out residuals cannot give 90% ((3+1) x 0.9 > 3), and at a
  // measured configuration the interval rests on in-sample misses. Both are said, not hidden.
  auto d = tptest::temp_dir("fewconfigs");
  const std::string samples = tptest::write_file(d / "three.csv",
                                                 "# trainplan: metric=max dataset_size=12000\n"
                                                 "batch,workers,epochs,epoch_time_s,metric,nodes\n"
                                                 "256,1,1,0.917,0.59,1\n"
                                                 "16,1,1,1.150,0.95,1\n"
                                                 "256,4,1,0.281,0.15,1\n");
  const std::string base = "predict --samples " + samples + " --time-model per-batch-extrapolation ";
  auto away = tptest::run_cli(base + "--batch 64 --workers 2 --json");
  ASSERT_EQ(away.exit_code, 0) << away.err;
  auto j = nlohmann::json::parse(away.out)["epoch_time_s"]["interval"]["basis"];
  EXPECT_EQ(j["residuals"], 3);
  EXPECT_EQ(j["from"], "out-of-fold");
  EXPECT_FALSE(j["coverage_promised"].get<bool>());
  auto text = tptest::run_cli(base + "--batch 64 --workers 2");
  EXPECT_NE(text.out.find("too few to promise 90% (at most 75%)"), std::string::npos) << text.out;
  auto at = tptest::run_cli(base + "--batch 16 --workers 1 --json");
  ASSERT_EQ(at.exit_code, 0) << at.err;
  auto k = nlohmann::json::parse(at.out)["epoch_time_s"]["interval"]["basis"];
  EXPECT_EQ(k["from"], "in-sample");
  EXPECT_FALSE(k["coverage_promised"].get<bool>());
  // Sixteen configurations at a modest coverage, away from them: promised.
  auto many = tptest::run_cli("predict --samples " + fixture(true) +
                              " --batch 48 --workers 3 --time-model isotonic-mi --confidence 0.5 --json");
  ASSERT_EQ(many.exit_code, 0) << many.err;
  EXPECT_TRUE(nlohmann::json::parse(many.out)["epoch_time_s"]["interval"]["basis"]["coverage_promised"].get<bool>());
}

TEST(PredictCli, BadArgumentsExit2) {
  std::string s = fixture(true);
  EXPECT_EQ(tptest::run_cli("predict --samples " + s + " --batch 64 --workers 0 --model isotonic-mi").exit_code, 2);
  EXPECT_EQ(tptest::run_cli("predict --samples " + s + " --batch 64 --workers 2 --model isotonic-mi --confidence 1.5")
                .exit_code,
            2);
  EXPECT_EQ(tptest::run_cli("predict --samples " + s + " --workers 2").exit_code, 2);  // --batch is required
  const std::string time_only = fixture(false);
  auto r = tptest::run_cli("predict --samples " + time_only + " --batch 64 --workers 2 --epochs 5 --model isotonic-mi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, time_only, 0, "metric", {"--epochs"}));
  // Values that read as numbers but no configuration has: each names its option, none is dropped silently.
  tptest::expect_each_exits_two_naming("predict --samples " + s + " --model isotonic-mi ",
                                       {{"--batch inf --workers 2", "--batch"},
                                        {"--batch 64 --workers 2 --epochs -1", "--epochs"},
                                        {"--batch 64 --workers 2 --epochs nan", "--epochs"},
                                        {"--batch 64 --workers 2 --nodes 5", "--nodes"},
                                        {"--batch 64 --workers 2 --nodes 0", "--nodes"},
                                        // Options this prediction would not read.
                                        {"--batch 64 --workers 2 --max-epochs 5", "--max-epochs"},
                                        {"--batch 64 --workers 4 --nodes 2 --gpus-per-node 1", "--gpus-per-node"}});
}

TEST(PredictCli, TimeOnlyWithoutEpochs) {
  auto r = tptest::run_cli("predict --samples " + fixture(false) + " --batch 64 --workers 2 --time-model isotonic-mi --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["metric"].is_null());
  EXPECT_GT(j["epoch_time_s"]["value"].get<double>(), 0);
}

TEST(FitPredictCli, HelpExits0) {
  for (const char* v : {"fit --help", "predict --help"}) {
    auto r = tptest::run_cli(v);
    EXPECT_EQ(r.exit_code, 0) << v;
    EXPECT_NE(r.out.find("--samples"), std::string::npos) << v;
  }
}

// Past the last sampled epoch the interval's optimistic end is not
// calibrated (docs/lab/MODELS-METRIC.md): predict says so, in text and JSON,
// naming the run's own last epoch or, for a configuration never sampled, the
// last epoch of any.
TEST(PredictCli, SaysWhenTheEpochsArePastTheLastSampledOne) {
  const std::string f = fixture(true, 0.01);
  auto base = "predict --samples " + f + " --time-model allreduce-local --metric-model global-batch ";
  // A sampled configuration past its own last epoch (30), which is every configuration's.
  auto r = tptest::run_cli(base + "--batch 32 --workers 2 --epochs 50 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metric"]["last_sampled_epoch"]["of"], "this configuration");
  EXPECT_EQ(j["metric"]["last_sampled_epoch"]["epochs"].get<double>(), 30.0);
  EXPECT_TRUE(j["metric"]["last_sampled_epoch"]["past_it"].get<bool>());
  EXPECT_EQ(j["metric"]["last_sampled_epoch"]["of_any_configuration"]["epochs"].get<double>(), 30.0);
  EXPECT_TRUE(j["metric"]["last_sampled_epoch"]["of_any_configuration"]["past_it"].get<bool>());
  EXPECT_EQ(tptest::run_cli(base + "--batch 32 --workers 2 --epochs 50").exit_code, 0);
  // Within it: not past either.
  r = tptest::run_cli(base + "--batch 32 --workers 2 --epochs 20 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["metric"]["last_sampled_epoch"]["past_it"].get<bool>());
  EXPECT_FALSE(j["metric"]["last_sampled_epoch"]["of_any_configuration"]["past_it"].get<bool>());
  // A configuration never sampled: the last epoch of any.
  r = tptest::run_cli(base + "--batch 48 --workers 2 --epochs 40 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metric"]["last_sampled_epoch"]["epochs"].get<double>(), 30.0);
  EXPECT_EQ(j["metric"]["last_sampled_epoch"]["of"], "any configuration");
  EXPECT_TRUE(j["metric"]["last_sampled_epoch"]["past_it"].get<bool>());
  EXPECT_EQ(j["metric"]["last_sampled_epoch"]["of_any_configuration"]["epochs"].get<double>(), 30.0);
  EXPECT_TRUE(j["metric"]["last_sampled_epoch"]["of_any_configuration"]["past_it"].get<bool>());
  r = tptest::run_cli(base + "--batch 32 --workers 2 --epochs 10 --json");
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metric"]["last_sampled_epoch"]["of"], "this configuration");
  EXPECT_FALSE(j["metric"]["last_sampled_epoch"]["past_it"].get<bool>());
}

// Outside what the samples ran (batches 16..128, up to 8 workers, 50,000 examples) a prediction is
// the time model's extrapolation, which its interval does not cover: said in the text and the JSON.
TEST(PredictCli, SaysWhenTheQueryIsOutsideTheSamples) {
  const std::string base = "predict --samples " + fixture(true) + " --time-model isotonic-mi";
  auto inside = tptest::run_cli(base + " --batch 48 --workers 4 --json");
  ASSERT_EQ(inside.exit_code, 0) << inside.err;
  auto ji = nlohmann::json::parse(inside.out);
  EXPECT_FALSE(ji["past_most_workers"].get<bool>());
  EXPECT_FALSE(ji["batch_outside_sampled"].get<bool>());
  EXPECT_FALSE(ji["batch_past_dataset"].get<bool>());
  EXPECT_EQ(ji["sampled"]["most_workers"], 8);
  EXPECT_EQ(ji["sampled"]["most_nodes"], 2);
  EXPECT_FALSE(ji["past_most_nodes"].get<bool>());
  EXPECT_EQ(ji["dataset_size"], 50000);
  auto outside = tptest::run_cli(base + " --batch 5000 --workers 64 --json");
  ASSERT_EQ(outside.exit_code, 0) << outside.err;
  auto jo = nlohmann::json::parse(outside.out);
  EXPECT_TRUE(jo["past_most_workers"].get<bool>());
  EXPECT_GT(jo["config"]["nodes"].get<int>(), 2);
  EXPECT_TRUE(jo["past_most_nodes"].get<bool>());
  EXPECT_TRUE(jo["batch_outside_sampled"].get<bool>());
  EXPECT_TRUE(jo["batch_past_dataset"].get<bool>());
  auto text = tptest::run_cli(base + " --batch 5000 --workers 64");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("more workers than any sample ran (8)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("more nodes than any sample ran on (2)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("larger than the data set (50000 examples)"), std::string::npos) << text.out;
  EXPECT_EQ(tptest::run_cli(base + " --batch 48 --workers 4").out.find("note: "), std::string::npos);
}

// evaluate's transfer and trace options have no effect on a samples file: refused there.
TEST(EvaluateCli, OptionsOfAnotherModeAreRefused) {
  const std::string base = "evaluate --samples " + fixture(true) + " --models isotonic-mi";
  for (const char* option : {"--seeds 1-3", "--rows-out r.csv", "--target-trials 3", "--plan wide"}) {
    auto r = tptest::run_cli(base + " " + option);
    EXPECT_EQ(r.exit_code, 2) << option;
    const std::string name = std::string(option).substr(0, std::string(option).find(' '));
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
  }
  EXPECT_EQ(tptest::run_cli(base).exit_code, 0);
}

// A metric predicted past its range (a curve fitted on epochs 1 to 8 and
// asked at 0.01, where it passes below 0) is held to the range, as its
// interval is, and so inside that interval.
TEST(FitPredictCli, AMetricPredictionStaysWithinItsRange) {
  auto dir = tptest::temp_dir("predict_range");
  std::string csv = "# trainplan: metric=max dataset_size=50000\nbatch,workers,epochs,epoch_time_s,metric\n";
  for (int b : {32, 64, 128})
    for (int r : {1, 2})
      for (int e : {1, 2, 4, 8})
        csv += fmt::format("{},{},{},{:.4f},{:.4f}\n", b, r, e, 50000.0 / (b * r) * 0.01,
                           0.95 - 0.9 * std::exp(-0.5 * e) * (1 + 0.1 * (b / 64.0)));
  const auto path = tptest::write_file(dir / "steep.csv", csv);
  auto r = tptest::run_cli("predict --samples " + path + " --batch 32 --workers 1 --epochs 0.01 --metric-model "
                           "optimus-curve --time-model allreduce-local --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const double m = j["metric"]["value"].get<double>();
  EXPECT_GE(m, 0.0) << r.out;
  EXPECT_GE(m, j["metric"]["interval"]["lo"].get<double>()) << r.out;
  EXPECT_LE(m, j["metric"]["interval"]["hi"].get<double>()) << r.out;
}

// A file name that is not UTF-8 is printed in the JSON answer, replaced by
// U+FFFD, not an internal error (exit 1) after the fit; a transfer's origin is
// in fit's and predict's answers as in plan's.
TEST(FitCli, AJsonAnswerTakesANameThatIsNotUtf8AndSaysWhereTimesWerePredicted) {
  auto d = tptest::temp_dir("fitpredict_utf8");
  const std::string csv = tptest::synthetic_samples_csv(true, 0);
  const std::string odd = tptest::write_file(d / "n\xff" "ame.csv", csv);
  auto r = tptest::run_cli("fit --samples '" + odd + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["samples"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos);

  const std::string moved = tptest::write_file(
      d / "moved.csv", "# trainplan: metric=max times_predicted_from=t4 times_predicted_log_sd=0.2\n" +
                           csv.substr(csv.find('\n') + 1));  // in place of the fixture's own format line
  auto f = tptest::run_cli("fit --samples " + moved + " --json");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(nlohmann::json::parse(f.out)["times_predicted_from"], "t4");
  auto p = tptest::run_cli("predict --samples " + moved + " --batch 64 --workers 2 --json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(nlohmann::json::parse(p.out)["times_predicted_from"], "t4");
}

// A samples file concatenated with itself holds the same measurements: its metric interval is the
// same, not narrower, and claims no coverage the single file does not.
TEST(PredictCli, RowsRepeatedExactlyDoNotNarrowTheMetricInterval) {
  const auto d = tptest::temp_dir("predict-dup");
  const std::string text = tptest::read_file(tptest::source_dir() + "/examples/lenet-mnist-samples.csv");
  std::string rows;  // the data rows (after the comments and the header), once more
  {
    std::istringstream in(text);
    bool header = false;
    for (std::string l; std::getline(in, l);) {
      if (!header) {
        header = !l.empty() && l[0] != '#';
        continue;
      }
      rows += l + "\n";
    }
  }
  const auto twice = tptest::write_file(d / "twice.csv", text + rows);
  const std::string ask = " --batch 16 --workers 1 --epochs 8 --confidence 0.9 --json";
  auto once = tptest::run_cli("predict --samples " + tptest::source_dir() + "/examples/lenet-mnist-samples.csv" + ask);
  auto dup = tptest::run_cli("predict --samples " + twice + ask);
  ASSERT_EQ(once.exit_code, 0) << once.err;
  ASSERT_EQ(dup.exit_code, 0) << dup.err;
  const auto a = nlohmann::json::parse(once.out)["metric"]["interval"], b = nlohmann::json::parse(dup.out)["metric"]["interval"];
  // (The point model, fitted on every row, moves in the sixth figure; the residuals must not.)
  EXPECT_NEAR(b["hi"].get<double>() - b["lo"].get<double>(), a["hi"].get<double>() - a["lo"].get<double>(), 1e-4)
      << a << "\n" << b;
  EXPECT_EQ(b["basis"], a["basis"]) << a << "\n" << b;
}
