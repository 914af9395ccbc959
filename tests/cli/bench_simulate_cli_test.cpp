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
