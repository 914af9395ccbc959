// `trainplan samples compare`: two profiles' epoch times per configuration,
// with the median and worst difference, and the machine probes of two stores;
// and time_spread survives the CSV.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "io/sample_csv.h"
#include "profile/sample_store.h"
#include "test_util.h"

TEST(SamplesCompareCli, ReportsPerConfigurationAndWorstDifference) {
  auto dir = tptest::temp_dir("compare_cli");
  tptest::write_file(dir / "a.csv", "batch,workers,epochs,epoch_time_s,metric\n32,1,1,1.00,0.9\n32,1,2,1.00,0.95\n"
                                    "64,1,1,0.50,0.8\n64,2,1,0.30,0.7\n");
  tptest::write_file(dir / "b.csv", "batch,workers,epochs,epoch_time_s,metric\n32,1,1,1.02,0.9\n64,1,1,0.55,0.8\n"
                                    "128,1,1,0.2,0.6\n");
  auto r = tptest::run_cli("samples compare " + (dir / "a.csv").string() + " " + (dir / "b.csv").string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["configurations"], 2);  // (32,1) and (64,1) in common
  EXPECT_NEAR(j["max_diff"].get<double>(), 0.10, 1e-9);
  EXPECT_NEAR(j["median_diff"].get<double>(), 0.06, 1e-9);
  // No configuration in common: an error, and no table heading over nothing.
  tptest::write_file(dir / "c.csv", "batch,workers,epochs,epoch_time_s,metric\n16,4,1,1.0,0.9\n");
  auto apart = tptest::run_cli("samples compare " + (dir / "a.csv").string() + " " + (dir / "c.csv").string());
  EXPECT_EQ(apart.exit_code, 2);
  EXPECT_EQ(apart.out, "");
  EXPECT_NE(apart.err.find("no (batch, workers) in common"), std::string::npos) << apart.err;
  auto none = tptest::run_cli("samples compare " + (dir / "a.csv").string() + " " + dir.string());
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("directory"), std::string::npos) << none.err;
}

// Epochs of different sizes: the comparison says so, with the ratio their sizes alone would give.
TEST(SamplesCompareCli, EpochsOfDifferentSizesAreCalledOut) {
  auto dir = tptest::temp_dir("compare_sizes");
  const std::string rows = "batch,workers,epochs,epoch_time_s,metric\n32,1,1,1.00,0.9\n64,1,1,0.50,0.8\n";
  tptest::write_file(dir / "a.csv", "# trainplan: metric=max dataset_size=6000\n" + rows);
  tptest::write_file(dir / "b.csv", "# trainplan: metric=max dataset_size=12000\n" + rows);
  tptest::write_file(dir / "c.csv", "# trainplan: metric=max dataset_size=6000\n" + rows);
  auto r = tptest::run_cli("samples compare " + (dir / "a.csv").string() + " " + (dir / "b.csv").string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["dataset_sizes"], nlohmann::json({6000, 12000}));
  EXPECT_NE(j["warning"].get<std::string>().find("with 2.000"), std::string::npos) << j;
  auto same = tptest::run_cli("samples compare " + (dir / "a.csv").string() + " " + (dir / "c.csv").string() + " --json");
  EXPECT_TRUE(nlohmann::json::parse(same.out)["warning"].is_null()) << same.out;
}

TEST(SamplesCompareCli, ACommonFactorIsSetApartFromHowTheRelativeTimesRepeat) {
  auto dir = tptest::temp_dir("compare_common");
  tptest::write_file(dir / "a.csv", "batch,workers,epochs,epoch_time_s,metric\n32,1,1,1.0,0.9\n64,1,1,0.5,0.8\n"
                                    "128,1,1,0.25,0.7\n");
  // The second machine ran 20% slower throughout, and batch 128 10% more.
  tptest::write_file(dir / "b.csv", "batch,workers,epochs,epoch_time_s,metric\n32,1,1,1.2,0.9\n64,1,1,0.6,0.8\n"
                                    "128,1,1,0.33,0.7\n");
  auto r = tptest::run_cli("samples compare " + (dir / "a.csv").string() + " " + (dir / "b.csv").string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["median_diff"].get<double>(), 0.20, 1e-9);
  EXPECT_NEAR(j["max_diff"].get<double>(), 0.32, 1e-9);
  EXPECT_NEAR(j["common_ratio"].get<double>(), 1.20, 1e-9);
  EXPECT_NEAR(j["median_diff_after_common_ratio"].get<double>(), 0.0, 1e-9);
  EXPECT_NEAR(j["max_diff_after_common_ratio"].get<double>(), 0.10, 1e-9);
}

TEST(SamplesCompareCli, TimeSpreadRoundTripsAndMustNotBeNegative) {
  auto set = trainplan::io::parse_samples_csv(
      "batch,workers,epochs,epoch_time_s,metric,time_spread\n32,1,1,1.0,0.9,0.02\n64,1,0,0.5,,\n", "t.csv");
  ASSERT_EQ(set.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(*set.samples[0].time_spread, 0.02);
  EXPECT_FALSE(set.samples[1].time_spread);
  auto again = trainplan::io::parse_samples_csv(trainplan::io::format_samples_csv(set), "again.csv");
  EXPECT_DOUBLE_EQ(*again.samples[0].time_spread, 0.02);
  EXPECT_TRUE(tptest::names_input_error(
      [] {
        try {
          trainplan::io::parse_samples_csv("batch,workers,epochs,epoch_time_s,metric,time_spread\n32,1,1,1,0.9,-1\n",
                                           "neg.csv");
        } catch (const std::exception& e) {
          return "error: " + std::string(e.what());
        }
        return std::string();
      }(),
      "neg.csv", 2, "time_spread"));
}

namespace {

// A store with a time trial of each (batch, 1 worker): epoch time t, machine probe p (0: none).
void write_store(const std::string& path, const std::vector<std::pair<int, double>>& batch_time, double probe) {
  trainplan::profile::SampleStore s(path);
  for (auto [b, t] : batch_time) {
    trainplan::profile::TrialRecord r;
    r.key = {b, 1, 0};
    trainplan::profile::StepTiming timing;
    timing.step_time_s = t / 100;
    timing.steps_per_epoch = 100;
    timing.probe_s = probe;
    r.timing = timing;
    r.epoch_time_s = timing.epoch_time_s();
    s.put(r);
  }
}

}  // namespace

TEST(SamplesCompareCli, StoresShowWhetherTheMachineChangedSpeed) {
  auto dir = tptest::temp_dir("compare_probe");
  const std::string a = (dir / "a.db").string(), b = (dir / "b.db").string(), c = (dir / "c.db").string(),
                    old = (dir / "old.db").string();
  write_store(a, {{32, 1.0}, {64, 0.8}}, 0.0020);
  write_store(b, {{32, 1.4}, {64, 1.1}}, 0.0030);  // the machine 1.5x slower
  write_store(c, {{32, 1.01}, {64, 0.81}}, 0.0021);
  write_store(old, {{32, 1.0}, {64, 0.8}}, 0.0);  // written without probes
  auto slower = tptest::run_cli("samples compare " + a + " " + b + " --json");
  ASSERT_EQ(slower.exit_code, 0) << slower.err;
  auto j = nlohmann::json::parse(slower.out);
  EXPECT_NEAR(j["machine_probe"]["ratio"].get<double>(), 1.5, 1e-9);
  EXPECT_TRUE(j["machine_probe"]["machine_speed_changed"].get<bool>());
  EXPECT_NEAR(j["rows"][0]["probe_second_s"].get<double>(), 0.003, 1e-12);
  auto text = tptest::run_cli("samples compare " + a + " " + b);
  EXPECT_NE(text.out.find("another speed"), std::string::npos) << text.out;
  auto same = nlohmann::json::parse(tptest::run_cli("samples compare " + a + " " + c + " --json").out);
  EXPECT_FALSE(same["machine_probe"]["machine_speed_changed"].get<bool>());
  auto none = nlohmann::json::parse(tptest::run_cli("samples compare " + a + " " + old + " --json").out);
  EXPECT_TRUE(none["machine_probe"].is_null());
  EXPECT_EQ(none["configurations"], 2);
}

// Profiles of different programs: said, as their times differ by the programs.
TEST(SamplesCompareCli, ProfilesOfDifferentWorkloadsAreCalledOut) {
  auto dir = tptest::temp_dir("compare_workloads");
  const std::string head = "# trainplan: metric=max dataset_size=6000\nbatch,workers,epochs,epoch_time_s,metric,model\n";
  tptest::write_file(dir / "a.csv", head + "32,1,1,1.00,0.9,lenet-mnist\n64,1,1,0.50,0.8,lenet-mnist\n");
  tptest::write_file(dir / "b.csv", head + "32,1,1,1.00,0.9,resnet\n64,1,1,0.50,0.8,resnet\n");
  tptest::write_file(dir / "c.csv", "# trainplan: metric=min dataset_size=6000\nbatch,workers,epochs,epoch_time_s,metric\n"
                                    "32,1,1,1.00,0.9\n64,1,1,0.50,0.8\n");
  auto r = tptest::run_cli("samples compare " + (dir / "a.csv").string() + " " + (dir / "b.csv").string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out)["warning"].get<std::string>().find("lenet-mnist and resnet"),
            std::string::npos)
      << r.out;
  auto ways = tptest::run_cli("samples compare " + (dir / "a.csv").string() + " " + (dir / "c.csv").string());
  ASSERT_EQ(ways.exit_code, 0) << ways.err;
  EXPECT_NE(ways.out.find("opposite ways"), std::string::npos) << ways.out;
  auto same = tptest::run_cli("samples compare " + (dir / "a.csv").string() + " " + (dir / "a.csv").string() + " --json");
  EXPECT_TRUE(nlohmann::json::parse(same.out)["warning"].is_null()) << same.out;
}

// One (batch, workers) on two node counts would be compared at the median of
// both, a time nobody measured: refused, naming the file and the column.
TEST(SamplesCompareCli, OneConfigurationOnTwoNodeCountsIsRefused) {
  auto dir = tptest::temp_dir("samples_compare_nodes");
  const std::string path = tptest::write_file(
      dir / "nodes.csv", "batch,workers,epochs,epoch_time_s,metric,nodes\n16,4,1,10,0.5,1\n16,4,1,20,0.5,2\n");
  auto r = tptest::run_cli("samples compare " + path + " " + path);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(tptest::names_input_error(r.err, path, 3, "nodes", {"ran on 1 and on 2 nodes"})) << r.err;
}
