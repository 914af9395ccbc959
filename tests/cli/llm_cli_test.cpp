// trainplan llm predict / memory / evaluate through the CLI: the output CSV
// keeps the input's columns, calibration, bad input exiting 2 with file,
// line and column, and the Korthikanti evaluation.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "io/csv.h"
#include "test_util.h"

namespace {

const char* kConfigs =
    "model,gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,recompute,sequence_parallel\n"
    "gpt-a,8,32,2,2048,16,24,2048,2,4,1,none,false\n"
    "gpt-b,16,64,1,4096,32,32,2048,4,2,2,selective,true\n";

}  // namespace

TEST(LlmCli, PredictWritesTheInputWithTimeAndMemory) {
  auto d = tptest::temp_dir("llm_cli");
  auto in = tptest::write_file(d / "in.csv", kConfigs);
  auto out = (d / "out.csv").string();
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = trainplan::io::CsvTable::read(out);
  ASSERT_EQ(t.rows().size(), 2u);
  EXPECT_EQ(t.header().front(), "model");
  EXPECT_EQ(t.header()[t.header().size() - 2], "iteration_time_s");
  EXPECT_EQ(t.header().back(), "memory_gib");
  EXPECT_EQ(t.text(t.rows()[1], "model"), "gpt-b");
  for (const auto& row : t.rows()) {
    EXPECT_GT(t.positive(row, "iteration_time_s"), 0.05);
    EXPECT_GT(t.positive(row, "memory_gib"), 1);
    EXPECT_LT(t.positive(row, "memory_gib"), 80);
  }
}

TEST(LlmCli, CalibrationFitsMeasuredIterations) {
  auto d = tptest::temp_dir("llm_cli");
  auto in = tptest::write_file(d / "in.csv", kConfigs);
  auto j0 = nlohmann::json::parse(tptest::run_cli("llm predict --configs " + in + " --gpu h100 --json").out);
  double t0 = j0["rows"][0]["iteration_time_s"], t1 = j0["rows"][1]["iteration_time_s"];
  // Measured: both 30% slower than the datasheet prediction.
  std::string measured = std::string(kConfigs).substr(0, std::string(kConfigs).find('\n')) + ",iteration_time_s\n" +
                         "gpt-a,8,32,2,2048,16,24,2048,2,4,1,none,false," + std::to_string(1.3 * t0) + "\n" +
                         "gpt-b,16,64,1,4096,32,32,2048,4,2,2,selective,true," + std::to_string(1.3 * t1) + "\n";
  auto m = tptest::write_file(d / "measured.csv", measured);
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + m + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"]["fitted_factors"], 2);
  EXPECT_LT(j["calibration_mean_abs_relative_error"].get<double>(), 0.01);
  EXPECT_NEAR(j["rows"][0]["iteration_time_s"].get<double>() / (1.3 * t0), 1, 0.01);
}

TEST(LlmCli, BadInputExitsTwoNamingFileLineAndColumn) {
  auto d = tptest::temp_dir("llm_cli");
  std::string header = "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp\n";
  struct Case {
    std::string row, column;
  };
  for (const auto& c : {Case{"8,8,1,1024,16,24,2048,3,1,1", "gpus"}, Case{"6,6,1,1024,16,24,2048,3,2,1", "tp"},
                        Case{"8,12,5,1024,16,24,2048,8,1,1", "global_batch"},
                        Case{"8,8,1,1024,16,24,2048,8,1,one", "pp"}}) {
    auto in = tptest::write_file(d / "bad.csv", header + "8,8,1,1024,16,24,2048,8,1,1\n" + c.row + "\n");
    auto r = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb -o " + (d / "o.csv").string());
    EXPECT_EQ(r.exit_code, 2) << c.row;
    EXPECT_NE(r.err.find(in + ":3: column '" + c.column + "'"), std::string::npos) << r.err;
  }
  auto in = tptest::write_file(d / "good.csv", header + "8,8,1,1024,16,24,2048,8,1,1\n");
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu a100-81gb -o " + (d / "o.csv").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpu"), std::string::npos) << r.err;
}

TEST(LlmCli, MemoryBreaksDownAZooModel) {
  auto r = tptest::run_cli(
      "llm memory --model megatron-175b --tp 8 --pp 8 --virtual-stages 3 --global-batch 64 --recompute selective "
      "--sequence-parallel --gpu a100-80gb --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["activations_gib"].get<double>(), 12.35, 0.01);  // Korthikanti Figure 1
  EXPECT_GT(j["time"]["iteration_time_s"].get<double>(), 1);
  EXPECT_EQ(tptest::run_cli("llm memory --model gpt-9 --tp 1").exit_code, 2);
  EXPECT_EQ(tptest::run_cli("llm memory --model gpt3-175b --tp 5").exit_code, 2);
}

TEST(LlmCli, EvaluatesKorthikantiRuns) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto r = tptest::run_cli("llm evaluate --korthikanti " + tptest::shared_data_dir() + "/llm --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["iteration_time"]["rows"].size(), 8u);
  // Loose bounds: the measured errors are in docs/LLM.md; these catch a broken model.
  EXPECT_LT(j["iteration_time"]["max_abs_relative_error"].get<double>(), 0.15);
  EXPECT_LT(j["memory"]["mean_abs_relative_error"].get<double>(), 0.05);
}

TEST(LlmCli, EvaluatesThePublishedRunsAtScale) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto r = tptest::run_cli("llm evaluate --scale " + tptest::shared_data_dir() + "/llm --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& a100 = j["gpus"]["a100-80gb"];
  EXPECT_EQ(a100["iteration_time"]["rows"].size(), 7u);
  // Loose bounds (the figures are in docs/LLM.md): a broken model or reader breaks them.
  EXPECT_LT(a100["iteration_time"]["max_abs_relative_error"].get<double>(), 0.10);
  EXPECT_EQ(a100["iteration_time_calibrated_on_5"]["rows"].size(), 40u);  // 20 draws x the 2 other runs
  EXPECT_TRUE(j["gpus"].contains("a100-40gb"));
  auto missing = tptest::run_cli("llm evaluate --scale /nonexistent");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/published_megatron_scale_results.csv"), std::string::npos) << missing.err;
}
