// trainplan llm predict / memory / evaluate through the CLI: the output CSV
// keeps the input's columns, calibration, bad input exiting 2 with file,
// line and column, and the Korthikanti evaluation.
#include <gtest/gtest.h>

#include <tuple>

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../app/llm_measured_rows.h"
#include "io/csv.h"
#include "io/hardware_file.h"
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
  // -o - writes the same CSV to standard output, and nothing else there.
  auto piped = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb -o - --breakdown");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, tptest::read_file(out));
  // --configs - reads standard input: a pipe in, a pipe out.
  auto stdin_in = tptest::run_cli("llm predict --configs - --gpu a100-80gb -o - < " + in);
  ASSERT_EQ(stdin_in.exit_code, 0) << stdin_in.err;
  EXPECT_EQ(stdin_in.out, tptest::read_file(out));
  auto bad_stdin = tptest::run_cli("llm predict --configs - --gpu a100-80gb -o - < /dev/null");
  EXPECT_EQ(bad_stdin.exit_code, 2);
  EXPECT_NE(bad_stdin.err.find("stdin"), std::string::npos) << bad_stdin.err;
  auto both = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb -o - --json");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--out"), std::string::npos) << both.err;
  // A folder is named as one, where a file was expected or is to be written.
  auto folder = tptest::run_cli("llm predict --configs " + d.string() + " --gpu a100-80gb");
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_NE(folder.err.find("is a folder"), std::string::npos) << folder.err;
  auto into_folder = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb -o " + d.string());
  EXPECT_EQ(into_folder.exit_code, 2);
  EXPECT_NE(into_folder.err.find("is a folder"), std::string::npos) << into_folder.err;
}

// predict says by how much each configuration is over or under the GPU's
// memory: headroom = the GPU's memory less the prediction, negative over.
TEST(LlmCli, PredictSaysByHowMuchAConfigurationFitsOrNot) {
  auto d = tptest::temp_dir("llm_cli");
  auto in = tptest::write_file(d / "in.csv", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp\n"
                                             "8,32,2,2048,16,24,2048,2,4,1\n8,64,8,12288,96,96,2048,8,1,1\n");
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const double gpu_gib = 80e9 / (1024.0 * 1024 * 1024);
  for (const auto& row : j["rows"]) {
    EXPECT_NEAR(row["headroom_gib"].get<double>(), gpu_gib - row["memory_gib"].get<double>(), 1e-6);
    EXPECT_EQ(row["fits_memory"].get<bool>(), row["headroom_gib"].get<double>() >= 0);
    // Model FLOP utilisation against the A100's fp16 tensor peak (the default precision).
    EXPECT_NEAR(row["mfu"].get<double>(), row["model_tflops_per_gpu"].get<double>() / 312, 1e-12);
    EXPECT_GT(row["mfu"].get<double>(), 0.0);
    EXPECT_LT(row["mfu"].get<double>(), 1.0);
  }
  EXPECT_TRUE(j["rows"][0]["fits_memory"].get<bool>());
  EXPECT_FALSE(j["rows"][1]["fits_memory"].get<bool>());  // a 175B-wide model on 8 GPUs, no pipeline
  auto text = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb");
  EXPECT_NE(text.out.find("OVER "), std::string::npos) << text.out;
  // With -o the table is not printed: the row that does not fit is named on stderr.
  auto written = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb -o " + (d / "out.csv").string());
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_NE(written.err.find("1 of 2 configurations are predicted not to fit"), std::string::npos) << written.err;
  EXPECT_NE(written.err.find("line 3 ("), std::string::npos) << written.err;
  EXPECT_EQ(written.err.find("line 2 ("), std::string::npos) << written.err;
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
  // Within 2%: the prior toward the datasheet's fractions holds back a little
  // of the 30% (LlmTimeParams::fraction_prior_log_sd).
  EXPECT_NEAR(j["rows"][0]["iteration_time_s"].get<double>() / (1.3 * t0), 1, 0.02);
}

// --calibrate-gpu: rows measured on one GPU fitted there, their fractions then pricing another.
// Measured on the A100 at 1.3x its datasheet time, the H100 prediction carries the same slowdown
// (as the same fitted fractions and overheads on the H100's datasheet), not the A100's times.
TEST(LlmCli, CalibrationOnAnotherGpuMovesTheFittedFactors) {
  auto d = tptest::temp_dir("llm_cli");
  auto in = tptest::write_file(d / "in.csv", kConfigs);
  auto sheet = [&](const std::string& gpu) {
    return nlohmann::json::parse(tptest::run_cli("llm predict --configs " + in + " --gpu " + gpu + " --json").out)["rows"];
  };
  const auto a100 = sheet("a100-80gb"), h100 = sheet("h100");
  std::string measured = std::string(kConfigs).substr(0, std::string(kConfigs).find('\n')) + ",iteration_time_s\n" +
                         "gpt-a,8,32,2,2048,16,24,2048,2,4,1,none,false," +
                         std::to_string(1.3 * a100[0]["iteration_time_s"].get<double>()) + "\n" +
                         "gpt-b,16,64,1,4096,32,32,2048,4,2,2,selective,true," +
                         std::to_string(1.3 * a100[1]["iteration_time_s"].get<double>()) + "\n";
  auto m = tptest::write_file(d / "measured.csv", measured);
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + m +
                           " --calibrate-gpu a100-80gb --fit efficiency --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["calibration"]["gpu"], "a100-80gb");
  EXPECT_EQ(j["model"]["gpu"], "h100");
  EXPECT_EQ(j["model"]["fitted_factors"], 2);
  for (int i = 0; i < 2; ++i) {
    const double moved = j["rows"][i]["iteration_time_s"].get<double>();
    EXPECT_GT(moved, 1.1 * h100[i]["iteration_time_s"].get<double>()) << i;   // slower than the H100's datasheet
    EXPECT_LT(moved, 0.9 * 1.3 * a100[i]["iteration_time_s"].get<double>()) << i;  // faster than the A100 measured
  }
  // Named as the GPU the rows ran on, the calibration is the plain one.
  auto same = nlohmann::json::parse(
      tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + m + " --calibrate-gpu h100 --json").out);
  auto plain = nlohmann::json::parse(tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + m + " --json").out);
  EXPECT_EQ(same["rows"], plain["rows"]);
  // Its intervals would be the A100's cross-validated errors: refused.
  auto iv = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + m +
                            " --calibrate-gpu a100-80gb --interval 0.8");
  EXPECT_EQ(iv.exit_code, 2) << iv.err;
  EXPECT_NE(iv.err.find("option '--interval'"), std::string::npos) << iv.err;
}

// --interval: the intervals' columns follow the two fixed ones, hold the
// prediction, and come from the calibration's cross-validated errors; without
// --calibrate there is nothing to take them from.
TEST(LlmCli, IntervalsFromTheCalibrationsCrossValidation) {
  auto d = tptest::temp_dir("llm_cli");
  auto in = tptest::write_file(d / "in.csv", kConfigs);
  auto measured = tptest::write_file(d / "measured.csv",
                                     tptest::llm_measured_csv(trainplan::io::resolve_hardware("h100"), 0.6, 2.0));
  // One measured row 20% off the model, so that the errors are not all 0.
  {
    auto t = trainplan::io::CsvTable::read(measured);
    std::string text = tptest::read_file(measured);
    auto at = text.find('\n', text.find('\n') + 1);  // end of the first data row
    auto comma = text.rfind(',', at);
    auto time_comma = text.rfind(',', comma - 1);
    double v = std::stod(text.substr(time_comma + 1, comma - time_comma - 1));
    text.replace(time_comma + 1, comma - time_comma - 1, std::to_string(1.2 * v));
    measured = tptest::write_file(d / "measured.csv", text);
  }
  auto out = (d / "out.csv").string();
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + measured +
                           " --interval 0.8 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cross-validated (7 folds"), std::string::npos) << r.err;
  auto t = trainplan::io::CsvTable::read(out);
  const auto& h = t.header();
  ASSERT_GE(h.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(h.end() - 6, h.end()),
            (std::vector<std::string>{"iteration_time_s", "memory_gib", "iteration_time_lo_s", "iteration_time_hi_s",
                                      "memory_gib_lo", "memory_gib_hi"}));
  for (const auto& row : t.rows()) {
    const double p = t.positive(row, "iteration_time_s");
    EXPECT_LT(t.positive(row, "iteration_time_lo_s"), p);
    EXPECT_GT(t.positive(row, "iteration_time_hi_s"), p);
    // The widest cross-validated error is about the 20% put in (rank 7 of 7 at 80%).
    EXPECT_NEAR(t.positive(row, "iteration_time_hi_s") / p - 1, 0.2, 0.08);
    EXPECT_LE(t.positive(row, "memory_gib_lo"), t.positive(row, "memory_gib"));
  }
  auto j = nlohmann::json::parse(
      tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + measured + " --interval 0.8 --json").out);
  EXPECT_EQ(j["calibration"]["cv"]["folds"], 7);
  EXPECT_EQ(j["calibration"]["cv"]["time_errors"].size(), 7u);
  EXPECT_EQ(j["rows"][0]["iteration_time_interval_s"].size(), 2u);
  // A coverage is --confidence on every verb: here the same answer as --interval.
  auto as_confidence = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + measured +
                                       " --confidence 0.8 --json");
  ASSERT_EQ(as_confidence.exit_code, 0) << as_confidence.err;
  EXPECT_EQ(nlohmann::json::parse(as_confidence.out), j);
  auto bare = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --interval 0.8");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("--interval"), std::string::npos) << bare.err;
  // One measured configuration (twice) leaves nothing to cross-validate: the
  // interval columns a script reads by name are there, empty, and it is said.
  const std::string text = tptest::read_file(measured);
  const size_t first_row_end = text.find('\n', text.find('\n') + 1);
  const std::string first_row = text.substr(text.find('\n') + 1, first_row_end - text.find('\n'));
  auto one = tptest::write_file(d / "one.csv", text.substr(0, text.find('\n') + 1) + first_row + first_row);
  auto lone = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + one +
                              " --interval 0.8 -o " + out);
  ASSERT_EQ(lone.exit_code, 0) << lone.err;
  EXPECT_NE(lone.err.find("columns are empty"), std::string::npos) << lone.err;
  auto empty = trainplan::io::CsvTable::read(out);
  ASSERT_TRUE(empty.has_column("iteration_time_lo_s"));
  ASSERT_TRUE(empty.has_column("memory_gib_hi"));
  for (const auto& row : empty.rows()) {
    EXPECT_EQ(empty.text(row, "iteration_time_lo_s"), "");
    EXPECT_GT(empty.positive(row, "iteration_time_s"), 0);
  }
}

// Rows timed on one GPU and calibrated as if on a three times faster one: the
// products fit at a third of their datasheet share. The rows, of three model
// widths, show it: `auto` takes the efficiency fit and warns, passing over
// the fit of all (whose overheads beside the fractions do not excuse it) and
// saying why; a measured peak larger than the GPU's memory is called out by
// its line.
TEST(LlmCli, RowsOfASlowerGpuAndImpossibleMemoryAreCalledOut) {
  auto d = tptest::temp_dir("llm_cli_other_gpu");
  // Models of three widths, so that no overhead per iteration or layer can stand for slower products.
  std::string configs = "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp\n";
  for (int hidden : {1024, 2048, 4096})
    for (int tp : {1, 2, 4, 8})
      configs += "8,64,1," + std::to_string(hidden) + ",16,24,2048," + std::to_string(tp) + "," +
                 std::to_string(8 / tp) + ",1\n";
  auto c = tptest::write_file(d / "c.csv", configs);
  const auto measured = (d / "a100.csv").string();
  ASSERT_EQ(tptest::run_cli("llm predict --configs " + c + " --gpu a100-80gb -o " + measured).exit_code, 0);
  auto r = tptest::run_cli("llm predict --configs " + c + " --gpu h100 --calibrate " + measured + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto cal = nlohmann::json::parse(r.out)["calibration"];
  // The A100's rows are the H100's at a third of its peak fraction, on
  // every width alike: the efficiency fit, implausible by the peak rule,
  // predicts the held-out rows far better than any other, so auto takes it
  // and says so, pointing at --calibrate-gpu.
  EXPECT_EQ(cal["fitted"], "efficiency") << cal.dump(2);
  std::string warned;
  for (const auto& w : cal["warnings"]) warned += w.get<std::string>() + "\n";
  EXPECT_NE(warned.find("--fit auto chose efficiency although the peak fraction went to"), std::string::npos)
      << warned;
  EXPECT_NE(warned.find("--calibrate-gpu"), std::string::npos) << warned;
  std::string passed;
  for (const auto& p : cal["passed_over"]) passed += p.get<std::string>() + "\n";
  // The all-fit passed over by the peak rule (not the ceiling rule, which it is not held to).
  const size_t all_at = passed.find("all: the peak fraction went to");
  ASSERT_NE(all_at, std::string::npos) << passed;
  EXPECT_NE(passed.substr(all_at, passed.find('\n', all_at) - all_at).find("under half the datasheet's"),
            std::string::npos)
      << passed;

  auto big = tptest::write_file(d / "mem.csv", tptest::read_file(measured));
  std::string text = tptest::read_file(big);
  const size_t second = text.find('\n', text.find('\n') + 1) + 1;  // line 3
  const size_t end = text.find('\n', second);
  const std::string row = text.substr(second, end - second);
  text.replace(second, end - second, row.substr(0, row.rfind(',')) + ",1000000");
  tptest::write_file(d / "mem.csv", text);
  auto m = tptest::run_cli("llm predict --configs " + c + " --gpu a100-80gb --calibrate " + big + " --json");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  std::string warnings;
  const auto jm = nlohmann::json::parse(m.out);
  for (const auto& w : jm["calibration"]["warnings"]) warnings += w.get<std::string>() + "\n";
  EXPECT_NE(warnings.find(big + ":3: memory_gib 1e+06 is more than a100-80gb's 80 GB"), std::string::npos) << warnings;
}

// Rows of small, host-bound runs: the efficiency fit drives the fractions to
// their floor and warns that a larger model will be priced far too slow;
// --fit auto (the default) carries the cost as overhead and prices the large
// model near the datasheet's.
TEST(LlmCli, CalibrationOnHostBoundRowsWarnsAndAutoAvoidsIt) {
  auto d = tptest::temp_dir("llm_cli");
  std::string tiny = "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,iteration_time_s\n";
  for (int mb : {1, 2, 4})
    for (int tp : {1, 2})
      tiny += std::to_string(2 * tp) + ",16," + std::to_string(mb) + ",256,4,4,256," + std::to_string(tp) + ",2,1," +
              std::to_string(0.5 + 0.01 * mb) + "\n";
  auto m = tptest::write_file(d / "tiny.csv", tiny);
  auto big = tptest::write_file(d / "big.csv", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp\n"
                                               "8,64,1,4096,32,32,2048,8,1,1\n");
  auto sheet = nlohmann::json::parse(tptest::run_cli("llm predict --configs " + big + " --gpu a100-80gb --json").out);
  const double datasheet = sheet["rows"][0]["iteration_time_s"];
  auto eff = tptest::run_cli("llm predict --configs " + big + " --gpu a100-80gb --calibrate " + m + " --fit efficiency --json");
  ASSERT_EQ(eff.exit_code, 0) << eff.err;
  auto je = nlohmann::json::parse(eff.out);
  ASSERT_EQ(je["calibration"]["warnings"].size(), 1u);
  EXPECT_NE(je["calibration"]["warnings"][0].get<std::string>().find("floor"), std::string::npos);
  EXPECT_GT(je["rows"][0]["iteration_time_s"].get<double>(), 5 * datasheet);
  auto aut = tptest::run_cli("llm predict --configs " + big + " --gpu a100-80gb --calibrate " + m + " --json");
  ASSERT_EQ(aut.exit_code, 0) << aut.err;
  auto ja = nlohmann::json::parse(aut.out);
  EXPECT_EQ(ja["calibration"]["fitted"], "overheads");
  EXPECT_TRUE(ja["calibration"]["warnings"].empty());
  // It says what it passed over, and why.
  ASSERT_FALSE(ja["calibration"]["passed_over"].empty()) << aut.out;
  EXPECT_EQ(ja["calibration"]["passed_over"][0].get<std::string>().rfind("efficiency: the peak", 0), 0u) << aut.out;
  EXPECT_LT(ja["rows"][0]["iteration_time_s"].get<double>(), 1.5 * datasheet);
  auto text = tptest::run_cli("llm predict --configs " + big + " --gpu a100-80gb --calibrate " + m + " --fit efficiency");
  EXPECT_NE(text.err.find("warning: the peak, link, memory fractions went to the floor"), std::string::npos) << text.err;
}

// llm models lists the zoo: every name it gives is one --model takes.
TEST(LlmCli, ModelsListsTheZooThatModelTakes) {
  auto r = tptest::run_cli("llm models --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out)["models"];
  ASSERT_GE(j.size(), 15u);
  bool saw_175b = false;
  for (const auto& m : j) {
    EXPECT_FALSE(m["source"].get<std::string>().empty()) << m;
    auto mem = tptest::run_cli("llm memory --model " + m["name"].get<std::string>() + " --tp 1 --pp 1 --dp 1 --json");
    EXPECT_EQ(mem.exit_code, 0) << m["name"] << mem.err;
    if (m["name"] == "gpt3-175b") {
      saw_175b = true;
      EXPECT_NEAR(m["parameters"].get<double>() / 1e9, 174.6, 0.1);
    }
  }
  EXPECT_TRUE(saw_175b);
  auto text = tptest::run_cli("llm models");
  EXPECT_NE(text.out.find("llama3-70b"), std::string::npos) << text.out;
}

// What a calibration could not do, or finds doubtful in its rows, it says:
// a fit the rows cannot carry (and what it fitted instead), one
// configuration measured far apart, a layout the GPU could not hold.
TEST(LlmCli, CalibrationSaysWhatItCouldNotFitAndWhatItDoubts) {
  auto d = tptest::temp_dir("llm_cal_warn");
  const std::string header = "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,iteration_time_s\n";
  auto warnings_of = [&](const std::string& rows, const std::string& fit) {
    auto f = tptest::write_file(d / "m.csv", header + rows);
    auto r = tptest::run_cli("llm predict --configs " + f + " --gpu h100 --calibrate " + f + " --fit " + fit + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out)["calibration"];
    return std::make_pair(j["fitted"].get<std::string>(), j["warnings"].dump());
  };
  const std::string two = "8,64,1,4096,32,32,2048,4,1,2,6.0\n16,128,2,4096,32,32,2048,2,4,2,5\n";
  auto [fitted, w] = warnings_of(two, "overheads");
  EXPECT_EQ(fitted, "efficiency");
  EXPECT_NE(w.find("--fit overheads needs 3 distinct configurations, and these rows time as 2 distinct"), std::string::npos)
      << w;
  std::tie(fitted, w) = warnings_of(two, "efficiency");
  EXPECT_EQ(w.find("needs"), std::string::npos) << w;
  std::tie(fitted, w) = warnings_of("8,64,1,4096,32,32,2048,4,1,2,6.0\n8,64,1,4096,32,32,2048,4,1,2,2.0\n", "efficiency");
  EXPECT_NE(w.find("lines 2, 3 are one configuration measured 3x apart"), std::string::npos) << w;
  {  // Columns beside the configuration (a run's id) and another spelling of a value do not part repeats.
    auto f = tptest::write_file(d / "ids.csv", "run," + header.substr(0, header.size() - 1) + ",sequence_parallel\n" +
                                                   "a,8,64,1,4096,32,32,2048,4,1,2,6.0,false\nb,8,64,1,4096,32,32,2048,4,1,2,2.0,0\n");
    auto r = tptest::run_cli("llm predict --configs " + f + " --gpu h100 --calibrate " + f + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(nlohmann::json::parse(r.out)["calibration"]["warnings"].dump().find("lines 2, 3 are one configuration"),
              std::string::npos)
        << r.out;
  }
  std::tie(fitted, w) = warnings_of("1,64,1,12288,96,96,2048,1,1,1,500\n8,64,1,4096,32,32,2048,4,1,2,6.0\n", "efficiency");
  EXPECT_NE(w.find("m.csv:2: this layout needs"), std::string::npos) << w;
  EXPECT_EQ(w.find("m.csv:3"), std::string::npos) << w;
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
    std::filesystem::remove(d / "o.csv");
    auto r = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb -o " + (d / "o.csv").string());
    EXPECT_EQ(r.exit_code, 2) << c.row;
    EXPECT_NE(r.err.find(in + ":3: column '" + c.column + "'"), std::string::npos) << r.err;
    // Nothing else is lost: the good row is predicted, the bad one's cells are empty.
    const auto lines = tptest::lines(tptest::read_file(d / "o.csv"));
    ASSERT_EQ(lines.size(), 3u) << c.row;
    EXPECT_NE(lines[1].substr(lines[1].rfind(',') + 1), "") << lines[1];
    EXPECT_EQ(lines[2], c.row + ",,") << c.row;
    EXPECT_NE(r.err.find("1 of 2 rows not predicted"), std::string::npos) << r.err;
  }
  // A bad row's own time in the prediction's column is blanked: it would read as a prediction.
  auto timed = tptest::write_file(d / "timed.csv", header.substr(0, header.size() - 1) + ",iteration_time_s\n" +
                                                       "8,8,1,1024,16,24,2048,8,1,1,0.5\n8,8,1,1024,16,24,2048,3,1,1,0.7\n");
  auto blanked = tptest::run_cli("llm predict --configs " + timed + " --gpu a100-80gb -o " + (d / "t.csv").string());
  EXPECT_EQ(blanked.exit_code, 2);
  EXPECT_EQ(tptest::lines(tptest::read_file(d / "t.csv")).back(), "8,8,1,1024,16,24,2048,3,1,1,,");
  // A bad measured row is left out of the calibration; the rest calibrate, and the exit says so.
  auto good_in = tptest::write_file(d / "in.csv", header + "8,8,1,1024,16,24,2048,8,1,1\n");
  auto measured = tptest::write_file(
      d / "m.csv", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,iteration_time_s\n"
                   "8,8,1,1024,16,24,2048,8,1,1,0.5\n8,16,1,1024,16,24,2048,8,1,1,0.9\n8,8,1,1024,16,24,2048,8,1,1,-1\n"
                   "8,32,1,1024,16,24,2048,8,1,1,1.7\n");
  auto cal = tptest::run_cli("llm predict --configs " + good_in + " --gpu a100-80gb --calibrate " + measured + " --json");
  EXPECT_EQ(cal.exit_code, 2) << cal.err;
  EXPECT_NE(cal.err.find(measured + ":4: column 'iteration_time_s'"), std::string::npos) << cal.err;
  EXPECT_NE(cal.err.find("1 measured row left out of the calibration"), std::string::npos) << cal.err;
  const auto cj = nlohmann::json::parse(cal.out);
  EXPECT_EQ(cj["calibration"]["rows"], 3) << cj["calibration"];
  EXPECT_EQ(cj["rows"].size(), 1u);
  // Context parallelism on a GPU without fused attention kernels (a V100): the row is named by its cp.
  auto cp_rows = tptest::write_file(d / "cp.csv", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,cp\n"
                                                  "8,8,1,1024,16,24,2048,8,1,1,1\n16,8,1,1024,16,24,2048,8,1,1,2\n");
  auto v100 = tptest::run_cli("llm predict --configs " + cp_rows + " --gpu v100 --json");
  EXPECT_EQ(v100.exit_code, 2);
  EXPECT_NE(v100.err.find(cp_rows + ":3: column 'cp'"), std::string::npos) << v100.err;
  EXPECT_EQ(nlohmann::json::parse(v100.out)["rows"].size(), 1u);
  // Every row bad: nothing to write, and no file; every bad line is named.
  auto two_bad = tptest::write_file(d / "two-bad.csv", header + "8,8,1,1024,16,24,2048,3,1,1\n8,8,1,1024,16,24,2048,5,1,1\n");
  auto both = tptest::run_cli("llm predict --configs " + two_bad + " --gpu a100-80gb -o " + (d / "o2.csv").string());
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("no row is left: line 3 is also bad"), std::string::npos) << both.err;
  EXPECT_FALSE(std::filesystem::exists(d / "o2.csv"));
  auto all_bad = tptest::write_file(d / "all-bad.csv", header + "8,8,1,1024,16,24,2048,3,1,1\n");
  std::filesystem::remove(d / "o.csv");
  auto none = tptest::run_cli("llm predict --configs " + all_bad + " --gpu a100-80gb -o " + (d / "o.csv").string());
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find(all_bad + ":2: column 'gpus'"), std::string::npos) << none.err;
  EXPECT_FALSE(std::filesystem::exists(d / "o.csv"));
  auto in = tptest::write_file(d / "good.csv", header + "8,8,1,1024,16,24,2048,8,1,1\n");
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu a100-81gb -o " + (d / "o.csv").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpu"), std::string::npos) << r.err;
  // FP8 on a GPU without FP8 tensor cores: the row's precision is named, the other row predicted,
  // and --json lists what was left out.
  auto fp8 = tptest::write_file(d / "fp8.csv", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,precision\n"
                                               "8,8,1,1024,16,24,2048,8,1,1,bf16\n8,8,1,1024,16,24,2048,8,1,1,fp8\n");
  auto out = d / "fp8-out.csv";
  auto a100 = tptest::run_cli("llm predict --configs " + fp8 + " --gpu a100-80gb -o " + out.string());
  EXPECT_EQ(a100.exit_code, 2);
  EXPECT_NE(a100.err.find(fp8 + ":3: column 'precision'"), std::string::npos) << a100.err;
  EXPECT_NE(a100.err.find("FP8"), std::string::npos) << a100.err;
  ASSERT_TRUE(std::filesystem::exists(out));
  EXPECT_EQ(tptest::lines(tptest::read_file(out)).back(), "8,8,1,1024,16,24,2048,8,1,1,fp8,,");
  auto listed = tptest::run_cli("llm predict --configs " + fp8 + " --gpu a100-80gb --json");
  EXPECT_EQ(listed.exit_code, 2);
  const auto lj = nlohmann::json::parse(listed.out);  // one document: the answer, with what it left out
  EXPECT_EQ(lj["rows"].size(), 1u);
  ASSERT_EQ(lj["rejected"].size(), 1u);
  EXPECT_EQ(lj["rejected"][0]["line"], 3);
  EXPECT_EQ(lj["rejected"][0]["field"], "precision");
  EXPECT_EQ(lj["exit_code"], 2);  // the exit's error in the answer, as every failing --json answer has it
  EXPECT_NE(lj["error"].get<std::string>().find("1 of 2 rows not predicted"), std::string::npos) << listed.out;
  // On an H100 a large model's FP8 iteration is the shorter (a small one's
  // casts can cost more than its products save).
  auto large = tptest::write_file(d / "fp8-large.csv", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,precision\n"
                                                       "8,8,1,8192,64,8,4096,8,1,1,bf16\n8,8,1,8192,64,8,4096,8,1,1,fp8\n");
  auto h100 = tptest::run_cli("llm predict --configs " + large + " --gpu h100 --json");
  ASSERT_EQ(h100.exit_code, 0) << h100.err;
  auto j = nlohmann::json::parse(h100.out);
  EXPECT_LT(j["rows"][1]["iteration_time_s"].get<double>(), j["rows"][0]["iteration_time_s"].get<double>());
  auto plan = tptest::run_cli("llm plan --model gpt3-1.3b --tokens 1e9 --global-batch 64 --gpu a100-80gb --precision fp8");
  EXPECT_NE(plan.exit_code, 0);
  EXPECT_NE(plan.err.find("FP8"), std::string::npos) << plan.err;
}

// Without --global-batch a pipeline runs pp micro-batches a replica: the
// first stage holds as many in flight as any longer iteration would.
TEST(LlmCli, MemoryWithoutAGlobalBatchFillsThePipeline) {
  const std::string args =
      "llm memory --model megatron-175b --tp 8 --pp 8 --recompute selective --sequence-parallel --json";
  auto unstated = tptest::run_cli(args), full = tptest::run_cli(args + " --global-batch 8"),
       longer = tptest::run_cli(args + " --global-batch 64");
  ASSERT_EQ(unstated.exit_code, 0) << unstated.err;
  auto u = nlohmann::json::parse(unstated.out), f = nlohmann::json::parse(full.out), l = nlohmann::json::parse(longer.out);
  EXPECT_DOUBLE_EQ(u["activations_gib"].get<double>(), f["activations_gib"].get<double>());
  EXPECT_DOUBLE_EQ(u["activations_gib"].get<double>(), l["activations_gib"].get<double>());
}

// Where the named parts make up the whole iteration (a middle stage is the
// slowest: no embedding or loss on it), "other" is 0, not the sum's rounding.
TEST(LlmCli, TheBreakdownsRemainderIsNotRoundingNoise) {
  const auto dir = tptest::temp_dir("llm_other");
  const auto in = tptest::write_file(
      dir / "in.csv",
      "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,cp,dp,pp,vocab,ffn_hidden,kv_groups,gated_mlp,"
      "first_stage_layers,last_stage_layers,recompute,sequence_parallel,distributed_optimizer,flash_attention,"
      "dropout,precision,overlap_grad_reduce,overlap_param_gather,tp_comm_overlap\n"
      "16384,2048,1,16384,128,126,131072,8,16,8,16,128256,53248,8,true,7,7,none,true,true,true,false,bf16,true,true,"
      "true\n");
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json row = nlohmann::json::parse(r.out)["rows"][0];
  const double named = row["compute_s"].get<double>() + row["memory_bound_s"].get<double>() +
                       row["tp_comm_s"].get<double>() + row["pp_comm_s"].get<double>() + row["bubble_s"].get<double>() +
                       row["dp_comm_s"].get<double>() + row["optimizer_s"].get<double>();
  ASSERT_NEAR(named, row["iteration_time_s"].get<double>(), 1e-9 * named) << "the row no longer tests the remainder";
  EXPECT_EQ(row["other_s"].get<double>(), 0.0);
}

TEST(LlmCli, MemoryBreaksDownAZooModel) {
  auto r = tptest::run_cli(
      "llm memory --model megatron-175b --tp 8 --pp 8 --virtual-stages 3 --global-batch 64 --recompute selective "
      "--sequence-parallel --gpu a100-80gb --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["activations_gib"].get<double>(), 12.35, 0.01);  // Korthikanti Figure 1
  EXPECT_GT(j["time"]["iteration_time_s"].get<double>(), 1);
  // Whether it fits, as `llm predict` says it: the GPU's memory less the total, in GiB (the
  // A100's unmeasured: its 80 GB as 10^9 bytes).
  EXPECT_NEAR(j["headroom_gib"].get<double>(), 80e9 / (1024.0 * 1024 * 1024) - j["memory_gib"].get<double>(), 1e-9);
  EXPECT_EQ(j["fits_memory"].get<bool>(), j["headroom_gib"].get<double>() >= 0);
  EXPECT_EQ(j["plan_reserve_gib"].get<double>(), 2.0);
  auto text = tptest::run_cli(
      "llm memory --model megatron-175b --tp 8 --pp 8 --virtual-stages 3 --global-batch 64 --recompute selective "
      "--sequence-parallel --gpu a100-80gb");
  EXPECT_NE(text.out.find("GiB to spare"), std::string::npos) << text.out;
  // Within the GPU's memory but not its reserve: fits, and `llm plan` would not choose it. The
  // H100's memory is what its driver reported (81,559 MiB), not 80e9 bytes.
  const std::string tight_args = "llm memory --model llama2-7b --seq 7680 --tp 2 --flash-attention --distributed-optimizer --gpu h100";
  auto tight = tptest::run_cli(tight_args);
  ASSERT_EQ(tight.exit_code, 0) << tight.err;
  EXPECT_NE(tight.out.find("llm plan keeps 2 GiB free, so it would not choose this"), std::string::npos) << tight.out;
  EXPECT_NE(tight.out.find("79.65 GiB reported"), std::string::npos) << tight.out;
  auto tj = nlohmann::json::parse(tptest::run_cli(tight_args + " --json").out);
  EXPECT_NEAR(tj["gpu_capacity_gib"].get<double>(), 81559.0 / 1024, 1e-9);
  EXPECT_NEAR(tj["headroom_gib"].get<double>(), 81559.0 / 1024 - tj["memory_gib"].get<double>(), 1e-9);
  EXPECT_GT(tj["memory_gib"].get<double>(), 80e9 / (1024.0 * 1024 * 1024)) << "over what 80e9 bytes would hold";
  // Without dropout: Korthikanti's 34sbh + 5as²b less the masks and the attention dropout's output.
  auto nodrop = tptest::run_cli(
      "llm memory --model megatron-175b --tp 8 --pp 8 --virtual-stages 3 --global-batch 64 --recompute selective "
      "--sequence-parallel --no-dropout --json");
  ASSERT_EQ(nodrop.exit_code, 0) << nodrop.err;
  EXPECT_NEAR(nlohmann::json::parse(nodrop.out)["activations_gib"].get<double>(), 12.35 * 32 / 34, 0.01);
  // Context parallelism keeps half of each sequence's activations on each of two ranks.
  auto whole = tptest::run_cli("llm memory --model llama3-8b --flash-attention --no-dropout --json");
  auto halved = tptest::run_cli("llm memory --model llama3-8b --cp 2 --flash-attention --no-dropout --json");
  ASSERT_EQ(halved.exit_code, 0) << halved.err;
  EXPECT_NEAR(nlohmann::json::parse(halved.out)["activations_gib"].get<double>(),
              nlohmann::json::parse(whole.out)["activations_gib"].get<double>() / 2, 1e-6);
  EXPECT_EQ(tptest::run_cli("llm memory --model llama3-8b --cp 3").exit_code, 2);  // 2 x 3 does not divide 8,192
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
  // Calibrated on 5 of the 8, the other 3 predicted, 20 draws: as a held-out set is scored.
  EXPECT_EQ(j["iteration_time_calibrated_on_5"]["rows"].size(), 60u);
  EXPECT_LT(j["iteration_time_calibrated_on_5"]["mean_abs_relative_error"].get<double>(), 0.08);
}

// NVIDIA's NeMo tables: the dense H100 pre-training runs, FP8 and context
// parallelism among them, scored from the datasheet and calibrated.
TEST(LlmCli, EvaluatesNvidiasNemoRuns) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto r = tptest::run_cli("llm evaluate --nemo " + tptest::shared_data_dir() + "/llm --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& h100 = j["gpus"]["h100"];
  EXPECT_EQ(h100["iteration_time"]["rows"].size(), 18u);
  // Llama 3.1 405B's rows, whose 126 layers split unevenly over 8 x 8 chunks.
  int uneven = 0;
  for (const auto& row : h100["iteration_time"]["rows"])
    uneven += row["model"].get<std::string>().find("405B") != std::string::npos;
  EXPECT_EQ(uneven, 4);
  // Blackwell: DGX B200 and GB200 NVL72 runs scored on the catalog's b200 and gb200.
  EXPECT_EQ(j["gpus"]["b200"]["iteration_time"]["rows"].size(), 2u);
  EXPECT_EQ(j["gpus"]["gb200"]["iteration_time"]["rows"].size(), 7u);
  // Loose bounds (the figures are in docs/LLM.md): a broken FP8, overlap,
  // context-parallel or cross-node model breaks them (priced exposed, the
  // worst run was 85% off).
  EXPECT_LT(h100["iteration_time"]["mean_abs_relative_error"].get<double>(), 0.15);
  EXPECT_LT(h100["iteration_time"]["max_abs_relative_error"].get<double>(), 0.30);
  EXPECT_LT(h100["iteration_time_calibrated_on_5"]["mean_abs_relative_error"].get<double>(), 0.12);
  EXPECT_GT(j["left_out"]["mixture of experts"].get<int>(), 0);
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
  EXPECT_NE(missing.err.find("option '--scale': no such folder: '/nonexistent'"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("published_megatron_scale_results.csv"), std::string::npos) << missing.err;
}

// Iterations measured on an H100 and calibrated as if on an A100: no
// efficiency below the datasheet's peak explains them, so the calibration
// says to check the GPU, the unit and the layout; on the H100 it does not.
TEST(LlmCli, RowsFasterThanTheGpusPeakAreCalledOut) {
  auto d = tptest::temp_dir("llm_cli");
  auto in = tptest::write_file(d / "in.csv", kConfigs);
  auto measured = tptest::write_file(d / "measured.csv",
                                     tptest::llm_measured_csv(trainplan::io::resolve_hardware("h100"), 1.0, 0.0));
  auto wrong = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb --calibrate " + measured + " --json");
  ASSERT_EQ(wrong.exit_code, 0) << wrong.err;
  auto jw = nlohmann::json::parse(wrong.out);
  EXPECT_NEAR(jw["calibration"]["peak_fraction"].get<double>(), 1.0, 1e-3);
  bool called_out = false;
  for (const auto& w : jw["calibration"]["warnings"])
    called_out |= w.get<std::string>().find("faster than a100-80gb can run them") != std::string::npos;
  EXPECT_TRUE(called_out) << jw["calibration"].dump();
  auto right = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + measured + " --json");
  ASSERT_EQ(right.exit_code, 0) << right.err;
  EXPECT_TRUE(nlohmann::json::parse(right.out)["calibration"]["warnings"].empty()) << right.out;
}

// --breakdown adds where each row's time goes; its columns, "other"
// included, add up to the iteration time the JSON gives.
TEST(LlmCli, BreakdownsPartsAddUpToTheIteration) {
  auto d = tptest::temp_dir("llm_cli");
  auto in = tptest::write_file(d / "in.csv", kConfigs);
  auto j = nlohmann::json::parse(tptest::run_cli("llm predict --configs " + in + " --gpu h100 --json").out);
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --breakdown");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream text(r.out.substr(r.out.find("where the time goes")));
  std::string line;
  std::getline(text, line), std::getline(text, line);  // the title and the header
  for (const auto& row : j["rows"]) {
    ASSERT_TRUE(std::getline(text, line)) << r.out;
    std::istringstream cells(line);
    long at = 0;
    double x = 0, sum = 0;
    cells >> at;
    EXPECT_EQ(at, row["line"].get<long>());
    int n = 0;
    while (cells >> x) sum += x, ++n;
    EXPECT_EQ(n, 8) << line;
    EXPECT_NEAR(sum / row["iteration_time_s"].get<double>(), 1, 1e-3) << line;
    // The JSON's parts, "other_s" among them, add up the same way.
    double json_sum = 0;
    for (const char* part : {"compute_s", "memory_bound_s", "tp_comm_s", "pp_comm_s", "bubble_s", "dp_comm_s",
                             "optimizer_s", "other_s"})
      json_sum += row[part].get<double>();
    EXPECT_NEAR(json_sum / row["iteration_time_s"].get<double>(), 1, 1e-9) << row.dump();
  }
  // Writing the predictions to a file, it still says where the time goes.
  auto o = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --breakdown -o " + (d / "out.csv").string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("where the time goes"), std::string::npos) << o.out;
}

// -o never writes over a file the verb reads: the measured rows of
// --calibrate or the configurations, under any name (a link included).
TEST(LlmCli, TheOutputNeverReplacesAnInput) {
  auto d = tptest::temp_dir("llm_cli");
  auto in = tptest::write_file(d / "in.csv", kConfigs);
  auto measured = tptest::write_file(d / "measured.csv",
                                     tptest::llm_measured_csv(trainplan::io::resolve_hardware("h100"), 0.8, 1.0));
  std::filesystem::create_symlink(measured, d / "link.csv");
  const std::string before = tptest::read_file(measured);
  for (const std::string& out : {in, (d / "link.csv").string(), (d / "." / "measured.csv").string()}) {
    auto r = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + measured + " -o " + out);
    EXPECT_EQ(r.exit_code, 2) << out;
    EXPECT_NE(r.err.find("writing it would replace it"), std::string::npos) << r.err;
  }
  EXPECT_EQ(tptest::read_file(measured), before);
  EXPECT_EQ(tptest::read_file(in), kConfigs);
  // Measured rows given as configurations: their time gives way to the
  // prediction in the output, and the run says so.
  auto r = tptest::run_cli("llm predict --configs " + measured + " --gpu h100 -o " + (d / "out.csv").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("column 'iteration_time_s' is replaced by the prediction"), std::string::npos) << r.err;
  // Under the interface's name, however the file spelled it.
  const std::string text = tptest::read_file(measured);
  std::string shouted = text;
  shouted.replace(shouted.find("iteration_time_s"), std::string("iteration_time_s").size(), "Iteration_Time_S");
  const auto upper = tptest::write_file(d / "upper.csv", shouted);
  r = tptest::run_cli("llm predict --configs " + upper + " --gpu h100 -o -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string header = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(header.find(",iteration_time_s"), std::string::npos) << header;
  EXPECT_EQ(header.find("Iteration_Time_S"), std::string::npos) << header;
}

// A column is read in any case and with '-' or ' ' for '_'; one read under two
// spellings is refused; a near miss of a column's name is pointed out, since
// its values would otherwise go unread.
TEST(LlmCli, ColumnNamesInOtherSpellingsAreReadRefusedOrPointedOut) {
  auto d = tptest::temp_dir("llm_cli");
  const std::string base = "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,recompute,";
  const std::string row = "8,4,1,6144,64,48,2048,8,1,1,selective,true\n";
  auto predict = [&](const std::string& name, const std::string& column) {
    auto f = tptest::write_file(d / (name + ".csv"), base + column + "\n" + row);
    return tptest::run_cli("llm predict --configs " + f + " --gpu a100-80gb --json");
  };
  auto plain = predict("plain", "sequence_parallel"), dashed = predict("dashed", "Sequence-Parallel");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(dashed.exit_code, 0) << dashed.err;
  const auto memory = [](const tptest::CliResult& r) { return nlohmann::json::parse(r.out)["rows"][0]["memory_gib"]; };
  EXPECT_EQ(memory(plain), memory(dashed));
  auto slip = predict("slip", "sequence_paralel");
  ASSERT_EQ(slip.exit_code, 0) << slip.err;
  EXPECT_NE(memory(slip), memory(plain));  // read without sequence parallelism, as the note warns
  EXPECT_NE(slip.err.find("column 'sequence_paralel' is not read (did you mean 'sequence_parallel'?)"),
            std::string::npos) << slip.err;
  auto twice = tptest::write_file(d / "twice.csv", base + "TP\n8,4,1,6144,64,48,2048,8,1,1,selective,4\n");
  auto r = tptest::run_cli("llm predict --configs " + twice + " --gpu a100-80gb");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, twice, 1, "tp", {"'tp', 'TP'"})) << r.err;
}

// Measured rows the calibrated model cannot come near (a thousand times its
// time: another unit, another GPU) are reported, not silently fitted.
TEST(LlmCli, ACalibrationThatMissesItsOwnRowsSaysSo) {
  auto d = tptest::temp_dir("llm_cli");
  auto in = tptest::write_file(d / "in.csv", kConfigs);
  auto text = tptest::llm_measured_csv(trainplan::io::resolve_hardware("h100"), 0.001, 0.0);
  auto measured = tptest::write_file(d / "measured.csv", text);
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu h100 --calibrate " + measured + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool said = false;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& w : j["calibration"]["warnings"])
    said |= w.get<std::string>().find("misses its own measured rows") != std::string::npos;
  EXPECT_TRUE(said) << r.out;
}

// --gpu says what the runs of --korthikanti, --grid and --runs ran on; the
// other published sets name each run's GPU, so there it would be ignored.
TEST(LlmCli, EvaluateRefusesAGpuItWouldIgnore) {
  for (const char* set : {"--scale", "--neusight", "--nemo", "--megatron-ci"}) {
    auto r = tptest::run_cli(std::string("llm evaluate ") + set + " /nonexistent --gpu h100");
    EXPECT_EQ(r.exit_code, 2) << set;
    EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, "--gpu")) << set << ": " << r.err;
  }
  // A measured grid or set of runs names no GPU: scoring them on the A100 default would be silent, so --gpu is due.
  const std::string root = tptest::source_dir();
  for (const std::string set : {"--runs " + root + "/examples/h100/transformer-training.csv",
                                "--grid " + root + "/examples/cpu-gpt/grid.csv"}) {
    auto r = tptest::run_cli("llm evaluate " + set);
    EXPECT_EQ(r.exit_code, 2) << set;
    EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, "--gpu", {"ran on"})) << set << ": " << r.err;
  }
  // --interval and --fit where nothing reads them.
  for (const std::string extra : {" --interval 0.5", " --fit efficiency"}) {
    auto r = tptest::run_cli("llm evaluate --megatron-ci /nonexistent" + extra);
    EXPECT_EQ(r.exit_code, 2) << extra;
    EXPECT_NE(r.err.find(extra.substr(1, extra.find(' ', 1) - 1)), std::string::npos) << extra << ": " << r.err;
  }
}

// What a run sheet holds beside its configurations does not cost them their
// predictions: a failed run's "OOM" or "pending" in the measured columns, a
// line of the wrong field count (named, the others predicted), a line that
// starts with '#' (a comment, said).
TEST(LlmCli, ARunSheetsOtherCellsAndLinesCostNoRowItsPrediction) {
  auto d = tptest::temp_dir("llm_cli_sheet");
  const std::string header =
      "run,gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,iteration_time_s,memory_gib\n";
  const std::string a = "\"  first run \",8,32,2,2048,16,24,2048,2,4,1,OOM,pending\n";
  const std::string b = "second,8,32,2,2048,16,24,2048,2,4,1,,0\n";
  const std::string wide = "third,8,32,2,2048,16,24,2048,2,4,1,,,x\n";  // one field too many
  const std::string hashed = "#4,8,32,2,2048,16,24,2048,2,4,1,,\n";
  auto in = tptest::write_file(d / "sheet.csv", header + a + b + wide + hashed);
  auto out = (d / "out.csv").string();
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb -o " + out);
  EXPECT_EQ(r.exit_code, 2) << r.err;  // the wide line is bad input
  EXPECT_TRUE(tptest::names_input_error(r.err, in, 4, "memory_gib",
                                         {"expected 13 fields as in the header, found 14",
                                          "the line's field 14, 'x', has none"})) << r.err;
  EXPECT_NE(r.err.find("line 5 starts with '#' and was read as a comment, not a configuration"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("1 whose fields do not match the header is in " + out +
                       " without predictions, cut or padded to its columns"),
            std::string::npos)
      << r.err;
  // Row for row with the input (the wide line in its place, cut to the header's columns, no prediction).
  auto t = trainplan::io::CsvTable::read(out);
  ASSERT_EQ(t.rows().size(), 3u);
  EXPECT_EQ(t.text(t.rows()[0], "run"), "first run");  // trimmed, inside quotes too (docs/FORMATS.md)
  EXPECT_EQ(t.text(t.rows()[2], "run"), "third");
  EXPECT_EQ(t.text(t.rows()[2], "iteration_time_s"), "");
  for (size_t i = 0; i < 2; ++i) EXPECT_GT(t.positive(t.rows()[i], "iteration_time_s"), 0);
  // As a calibration the same cells are what was measured, and are refused.
  auto cal = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb --calibrate " + in);
  EXPECT_EQ(cal.exit_code, 2);
  EXPECT_NE(cal.err.find("iteration_time_s"), std::string::npos) << cal.err;
}

// The output appends iteration_time_s and memory_gib whatever the input's own
// columns are called: a measured time under another name it reads as the time
// (Korthikanti's measured_iteration_time_s) stays as it was beside the
// prediction, and a line with fields past the header's passes through cut to
// the input's columns, its prediction cells empty, not filled by its surplus.
TEST(LlmCli, TheOutputAppendsItsColumnsAndCutsAWideLineToTheInputs) {
  auto d = tptest::temp_dir("llm_cli_own_columns");
  auto in = tptest::write_file(d / "in.csv",
                               "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,measured_iteration_time_s\n"
                               "8,32,2,2048,16,24,2048,2,4,1,1.5\n"
                               "8,32,2,2048,16,24,2048,2,4,1,1.5,5.5,7.25\n");
  auto out = (d / "out.csv").string();
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb -o " + out);
  EXPECT_EQ(r.exit_code, 2) << r.err;  // the wide line
  auto t = trainplan::io::CsvTable::read(out);
  EXPECT_EQ(t.header().back(), "memory_gib");
  ASSERT_EQ(t.header().size(), 13u);
  ASSERT_EQ(t.rows().size(), 2u);
  EXPECT_EQ(t.text(t.rows()[0], "measured_iteration_time_s"), "1.5");
  EXPECT_GT(t.positive(t.rows()[0], "iteration_time_s"), 0);
  EXPECT_NE(t.text(t.rows()[0], "iteration_time_s"), "1.5");
  EXPECT_EQ(t.text(t.rows()[1], "iteration_time_s"), "");
  EXPECT_EQ(t.text(t.rows()[1], "memory_gib"), "");
  EXPECT_NE(r.err.find("wrote 2 rows to " + out + " (1 predicted)"), std::string::npos) << r.err;
}

// Files the run reads are never its output, the hardware file included; what
// llm predict refuses on a GPU, llm memory refuses too; sizes past any run are
// refused, not wrapped.
TEST(LlmCli, TheGpuFileIsAnInputAndMemoryRefusesWhatPredictRefuses) {
  auto d = tptest::temp_dir("llm_cli_gpu_file");
  auto in = tptest::write_file(d / "in.csv", kConfigs);
  auto hw = tptest::write_file(d / "hw.csv", "name,base\nmy-a100,a100-80gb\n");
  auto r = tptest::run_cli("llm predict --configs " + in + " --gpu " + hw + " -o " + hw);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is the --gpu file"), std::string::npos) << r.err;
  EXPECT_EQ(tptest::read_file(hw), "name,base\nmy-a100,a100-80gb\n");
  // A catalog name is read from the catalog, not from a file of that name, which may then be the output.
  EXPECT_FALSE(trainplan::io::names_hardware_file("l4"));
  EXPECT_FALSE(trainplan::io::names_hardware_file("A100 40GB"));
  EXPECT_TRUE(trainplan::io::names_hardware_file("./l4"));
  EXPECT_TRUE(trainplan::io::names_hardware_file("my-gpu.csv"));
  auto cp = tptest::run_cli("llm memory --model gpt3-175b --tp 8 --cp 2 --pp 8 --gpu v100");
  EXPECT_EQ(cp.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(cp.err, "", 0, "--cp", {"fused attention"})) << cp.err;
  auto flash = tptest::run_cli("llm memory --model gpt3-175b --tp 8 --pp 8 --flash-attention --gpu t4");
  EXPECT_EQ(flash.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(flash.err, "", 0, "--flash-attention", {"t4"})) << flash.err;
  auto huge = tptest::run_cli("llm memory --model gpt3-125m --micro-batch 16777216 --dp 128");
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(huge.err, "", 0, "--micro-batch", {"give --global-batch"})) << huge.err;
  auto hex = tptest::write_file(d / "hex.csv", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,vocab\n"
                                               "8,32,2,2048,16,24,2048,2,4,1,0x10\n");
  auto h = tptest::run_cli("llm predict --configs " + hex + " --gpu a100-80gb");
  EXPECT_EQ(h.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(h.err, hex, 2, "vocab", {"0x10"})) << h.err;
}

// llm memory --overlap prices the iteration as llm plan --overlap does:
// tensor-parallel collectives overlap only with sequence parallelism, as
// Megatron-LM requires.
TEST(LlmMemoryCli, OverlapHidesTensorParallelCollectivesOnlyWithSequenceParallelism) {
  auto tp_comm = [](const std::string& extra) {
    auto r = tptest::run_cli("llm memory --model gpt3-6.7b --tp 4 --dp 2 --global-batch 16 --precision bf16 --gpu h100 "
                             "--json" + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["time"]["tp_comm_s"].get<double>();
  };
  EXPECT_DOUBLE_EQ(tp_comm(" --overlap"), tp_comm(""));
  EXPECT_LT(tp_comm(" --overlap --sequence-parallel"), 0.9 * tp_comm(" --sequence-parallel"));
}
