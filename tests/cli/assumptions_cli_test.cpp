// What fit, predict and plan assume where the samples cannot tell, and that
// each assumption is said and can be set: the nodes workers span, the
// interconnect prior, the metric's range, how far an extrapolation in epochs
// was checked, and why a target past every trial cannot be met at a confidence.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace {

std::string example(const std::string& name) { return tptest::source_dir() + "/examples/" + name; }

// 48 samples, accuracy 0.95 - 0.6/(1 + x/4) with x = e * 528 / (400 + b r),
// at epochs 2, 10 and 30, all on one node with up to `max_workers` workers.
std::string accuracy_samples(int max_workers = 4) {
  std::string csv = "# trainplan: metric=max dataset_size=50000\nbatch,workers,epochs,epoch_time_s,metric,nodes\n";
  for (int b : {16, 32, 64, 128})
    for (int r = 1; r <= max_workers; r *= 2)
      for (int e : {2, 4, 6, 10, 30}) {
        const double t = 50000.0 / (b * r) * (0.01 + 0.0005 * b);
        const double x = e * 528.0 / (400 + b * r);
        const double m = (0.95 - 0.6 / (1 + x / 4)) * (1 + 0.01 * std::sin(7.0 * b + 13.0 * r + e));
        csv += std::to_string(b) + "," + std::to_string(r) + "," + std::to_string(e) + "," + std::to_string(t) + "," +
               std::to_string(m) + ",1\n";
      }
  auto d = tptest::temp_dir("assumptions");
  return tptest::write_file(d / "s.csv", csv);
}

nlohmann::json predict_json(const std::string& args) {
  auto r = tptest::run_cli("predict " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

}  // namespace

TEST(AssumptionsCli, PredictSaysHowWorkersWerePlacedAndTakesGpusPerNode) {
  // Single-machine samples with up to 2 workers: 4 workers on 2 nodes is an
  // assumption, and it says so.
  const std::string s = accuracy_samples(2);
  const std::string base = "--samples " + s + " --batch 32 --workers 4 --model isotonic-mi";
  auto j = predict_json(base);
  EXPECT_EQ(j["config"]["nodes"], 2);
  EXPECT_TRUE(j["config"]["nodes_assumed"].get<bool>());
  EXPECT_NE(j["config"]["nodes_from"].get<std::string>().find("--gpus-per-node"), std::string::npos);
  auto text = tptest::run_cli("predict " + base);
  EXPECT_NE(text.out.find("nodes: assumed"), std::string::npos) << text.out;
  // Set by the user: GPUs per node, or the node of a catalog entry.
  j = predict_json(base + " --gpus-per-node 4");
  EXPECT_EQ(j["config"]["nodes"], 1);
  EXPECT_FALSE(j["config"]["nodes_assumed"].get<bool>());
  j = predict_json(base + " --hardware a100-40gb");  // 8 GPUs a node
  EXPECT_EQ(j["config"]["nodes"], 1);
  EXPECT_NE(j["config"]["nodes_from"].get<std::string>().find("a100-40gb"), std::string::npos);
  // Within what the samples ran on one node, nothing is assumed.
  j = predict_json("--samples " + s + " --batch 32 --workers 2 --model isotonic-mi");
  EXPECT_EQ(j["config"]["nodes"], 1);
  EXPECT_FALSE(j["config"]["nodes_assumed"].get<bool>());
}

TEST(AssumptionsCli, FitNamesTheInterconnectPriorAndHardwareSetsIt) {
  // A CPU profile on one machine: the inter-node term comes from a prior.
  const std::string base = "fit --samples " + example("lenet-mnist-samples.csv") + " --time-model allreduce-physical --json";
  auto r = tptest::run_cli(base);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string d = nlohmann::json::parse(r.out)["time"]["describe"];
  EXPECT_NE(d.find("the default prior, not the samples' hardware (they ran on 'AMD EPYC x2 cores')"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("--hardware"), std::string::npos) << d;
  r = tptest::run_cli(base + " --hardware h100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  d = nlohmann::json::parse(r.out)["time"]["describe"];
  EXPECT_EQ(d.find("default prior"), std::string::npos) << d;
  EXPECT_NE(d.find("from the catalog's h100"), std::string::npos) << d;
  // A name that is neither in the catalog nor a file names the option.
  r = tptest::run_cli(base + " --hardware no-such-gpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--hardware"), std::string::npos) << r.err;
}

TEST(AssumptionsCli, MetricIntervalsStayInTheMetricsRange) {
  const std::string s = accuracy_samples();
  const std::string base = "--samples " + s + " --batch 32 --workers 2 --epochs 400 --model isotonic-mi --confidence 0.99";
  auto j = predict_json(base);
  auto iv = j["metric"]["interval"];
  ASSERT_TRUE(iv.is_object()) << j.dump(2);
  EXPECT_LE(iv["hi"].get<double>(), 1.0);
  EXPECT_GE(iv["lo"].get<double>(), 0.0);
  // A declared range clips both ends.
  j = predict_json(base + " --metric-range 0:0.9");
  EXPECT_LE(j["metric"]["interval"]["hi"].get<double>(), 0.9);
  auto bad = tptest::run_cli("predict " + base + " --metric-range 1:0");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(bad.err, "", 0, "--metric-range")) << bad.err;
}

TEST(AssumptionsCli, PredictSaysHowFarTheEpochExtrapolationWasChecked) {
  // Trials at 2, 4, 6, 10 and 30 epochs: the latest third of the samples by
  // count (beyond_holdout) is held out of the forward fold, which is fitted
  // up to 10 epochs and checked at 30, so a
  // prediction is backed to about 30 x 3 = 90 epochs.
  const std::string s = accuracy_samples();
  const std::string base = "--samples " + s + " --batch 32 --workers 2 --model isotonic-mi";
  auto j = predict_json(base + " --epochs 60");
  auto x = j["metric"]["extrapolation"];
  ASSERT_TRUE(x.is_object()) << j.dump(2);
  EXPECT_DOUBLE_EQ(x["trusted_through_epochs"].get<double>(), 90);
  EXPECT_FALSE(x["past_it"].get<bool>());
  EXPECT_EQ(x["forward_check"]["fitted_through_epochs"], 10);
  EXPECT_EQ(x["forward_check"]["scored_through_epochs"], 30);
  j = predict_json(base + " --epochs 200");
  EXPECT_TRUE(j["metric"]["extrapolation"]["past_it"].get<bool>());
  auto text = tptest::run_cli("predict " + base + " --epochs 200");
  EXPECT_NE(text.out.find("not backed by any measurement"), std::string::npos) << text.out;
}

TEST(AssumptionsCli, PlanAtAConfidenceSaysALongerTrialWouldHelp) {
  const std::string s = accuracy_samples();
  auto r = tptest::run_cli("plan --samples " + s +
                           " --target 0.97 --deadline 100000 --model isotonic-mi --confidence 0.9");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no trial reached the target"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("A longer trial"), std::string::npos) << r.err;
}
