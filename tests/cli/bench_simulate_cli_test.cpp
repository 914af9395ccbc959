// `trainplan bench simulate`: our policies on the Pollux workloads against the
// published results, and its chart of mean JCT by load; `simulate --policy all`.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/gnuplot.h"
#include "test_util.h"

namespace {

// One workload at one load, two policies: the table names both against the
// published figures, and --plot draws the chart.
TEST(BenchSimulateCli, PlotDrawsEachPolicysMeanJctByLoad) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  if (!trainplan::io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  const auto dir = tptest::temp_dir("bench_sim_plot");
  const std::string png = (dir / "jct.png").string();
  const auto r = tptest::run_cli("bench simulate --data " + tptest::shared_data_dir() +
                                 " --workloads 1 --loads 1.0 --policy tiresias,pollux --plot " + png);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pollux: ours/published = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiresias: ours/published = "), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(png));
  EXPECT_GT(std::filesystem::file_size(png), 1000u);
}

// A chart name gnuplot cannot draw is refused before any simulation runs.
TEST(BenchSimulateCli, ABadChartNameIsRefusedFirst) {
  const auto dir = tptest::temp_dir("bench_sim_badplot");
  const auto r = tptest::run_cli("bench simulate --data " + dir.string() + " --plot " + (dir / "jct.txt").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--plot"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("load"), std::string::npos) << r.out;
}

// --policy all runs every registered policy, each once.
// A name given twice would run, and be summed or counted, twice; a space of
// millions of worker counts would run for hours in silence.
TEST(BenchSimulateCli, RepeatsAndHugeSpacesAreRefused) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const std::string d = tptest::shared_data_dir();
  tptest::expect_each_exits_two_naming("bench simulate --data " + d + " --loads 0.5 --workloads 1",
                                       {{" --policy fifo,fifo", "--policy"}, {" --policy fifo --loads 0.5,0.5", "--loads"},
                                        {" --policy fifo --min-gain 3", "--min-gain"},
                                        {" --policy fifo --tiresias-thresholds 100", "--tiresias-thresholds"},
                                        {" --policy tiresias --tiresias-thresholds 100,100", "--tiresias-thresholds"}});
  const auto ignored = tptest::run_cli("bench simulate --data " + d + " --policy optimus --time-model allreduce-local");
  EXPECT_EQ(ignored.exit_code, 2);
  EXPECT_NE(ignored.err.find("--time-model requires --fitted"), std::string::npos) << ignored.err;
  tptest::expect_each_exits_two_naming("bench coconfig --data " + d + "/pollux-t4",
                                       {{" --models auto,auto", "--models"}, {" --max-workers 65536", "--max-workers"}});
}

// bench simulate reads "all" as simulate does: every policy, those Pollux did not publish without a
// published figure.
TEST(BenchSimulateCli, PolicyAllRunsEveryPolicy) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const auto r = tptest::run_cli("bench simulate --data " + tptest::shared_data_dir() +
                                 " --loads 0.5 --workloads 1 --policy all --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string text = j.dump();
  for (const char* p : {"coconfig", "fifo", "optimus", "pollux", "srtf", "tiresias"})
    EXPECT_NE(text.find(std::string("\"") + p + "\""), std::string::npos) << p << ": " << text.substr(0, 2000);
}

TEST(SimulateCli, PolicyAllRunsEveryPolicy) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const std::string data = tptest::shared_data_dir();
  const auto r = tptest::run_cli("simulate --workload " + data + "/workloads/pollux-0.5/workload-1.csv --data " + data +
                                 "/pollux-t4 --policy all --oracle --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> ran;
  for (const auto& p : j["policies"]) ran.push_back(p["policy"]);
  EXPECT_EQ(ran, (std::vector<std::string>{"coconfig", "fifo", "optimus", "pollux", "srtf", "tiresias"}));
}

}  // namespace

namespace {

// A cluster of T4 and A100 nodes, each timed by its own measured traces: the
// simulate --cluster answer names both groups with their GPU-hours, and the
// bench's pollux aware of types beats it blind on workload 1 (its measured
// mean JCT 1.5x lower over the eight workloads, docs/SIMULATOR.md).
TEST(SimulateCli, AClusterOfTwoMeasuredGpuTypes) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const std::string d = tptest::shared_data_dir();
  const std::string jobs_csv = (tptest::temp_dir("sim_two_types") / "jobs.csv").string();
  const auto r = tptest::run_cli("simulate --workload " + d + "/workloads/pollux-1.0/workload-1.csv --data " + d +
                                 "/pollux-t4 --cluster t4=2x4,a100-40gb=1x8 --step-times a100-40gb=" + d +
                                 "/sia-a100 --policy tiresias,pollux --oracle --load-scale 0.5 --skip-unrunnable --json" +
                                 " --jobs-csv " + jobs_csv + " --price t4=1,a100-40gb=2.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto js = nlohmann::json::parse(r.out);
  ASSERT_EQ(js["cluster"]["groups"].size(), 2u);
  EXPECT_EQ(js["cluster"]["groups"][1]["gpu"], "a100-40gb");
  ASSERT_EQ(js["policies"].size(), 2u);
  for (const auto& p : js["policies"]) {
    ASSERT_EQ(p["gpu_hours_by_group"].size(), 2u) << p.dump();
    const double sum = p["gpu_hours_by_group"][0]["gpu_hours"].get<double>() +
                       p["gpu_hours_by_group"][1]["gpu_hours"].get<double>();
    EXPECT_NEAR(sum, p["gpu_hours"].get<double>(), 1e-6 * sum) << p.dump();
    EXPECT_GT(p["gpu_hours_by_group"][1]["gpu_hours"].get<double>(), 0) << p.dump();
    // --price: each group's GPU-hours at its GPU's price.
    EXPECT_NEAR(p["cost"].get<double>(), p["gpu_hours_by_group"][0]["gpu_hours"].get<double>() +
                                              2.5 * p["gpu_hours_by_group"][1]["gpu_hours"].get<double>(),
                1e-9 * sum) << p.dump();
  }
  EXPECT_EQ(js["cluster"]["groups"][1]["price_per_gpu_hour"], 2.5);
  EXPECT_NE(js["step_times"].get<std::string>().find("sia-a100"), std::string::npos) << js["step_times"];
  // The per-job CSV names the group's GPU each job finished on.
  const std::string csv = tptest::read_file(jobs_csv);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "policy,name,app,arrival,start,finish,jct,gpu_seconds,restarts,gpus,batch,met_deadline,gpu");
  EXPECT_NE(csv.find(",a100-40gb\n"), std::string::npos);
  EXPECT_NE(csv.find(",t4\n"), std::string::npos);
}

TEST(BenchSimulateCli, PolluxAwareOfGpuTypesBeatsItBlind) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const auto r = tptest::run_cli("bench simulate-types --data " + tptest::shared_data_dir() +
                                 " --workloads 1 --policy tiresias,pollux-blind,pollux --seeds 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("workload 1 "), std::string::npos) << "a line of progress per run off a terminal: " << r.err;
  const auto js = nlohmann::json::parse(r.out);
  ASSERT_EQ(js["policies"].size(), 3u);
  EXPECT_EQ(js["reference"], "pollux");
  const auto& blind = js["policies"][1];
  EXPECT_EQ(blind["policy"], "pollux-blind");
  EXPECT_GT(blind["avg_jct_over_reference_median"].get<double>(), 1.2) << blind.dump();
  EXPECT_GT(js["policies"][2]["share_of_gpu_hours_on_a100-40gb"].get<double>(),
            blind["share_of_gpu_hours_on_a100-40gb"].get<double>());
  EXPECT_GT(js["jobs"].get<int>(), 100);
  // The A100 group's steps moved from the T4: with no A100 step every policy is too fast; one seed's 3 trials.
  ASSERT_EQ(js["moved"]["moved-0"]["policies"].size(), 3u) << js["moved"].dump();
  for (const auto& p : js["moved"]["moved-0"]["policies"]) EXPECT_LT(p["avg_jct_error_median"].get<double>(), 0) << p.dump();
  EXPECT_EQ(js["moved"]["moved-k"]["arms"], 1);
}

}  // namespace
