#include "replay/replay_oracle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "core/error.h"
#include "io/pollux_trace.h"
#include "replay/sampler.h"
#include "sim/app_model.h"
#include "test_util.h"

using namespace trainplan;
namespace fs = std::filesystem;

namespace {

// A tiny trace written for the test: step time 0.1 + 0.01*b on one GPU,
// two curves at global batch 32 and 128, dataset of 320 examples.
fs::path tiny_trace(bool with_curves = true) {
  auto d = tptest::temp_dir("trace");
  tptest::write_file(d / "placements.csv",
                      "placement,local_bsz,step_time,sync_time\n"
                      "1,16,0.26,0\n1,32,0.42,0\n1,64,0.74,0\n"
                      "2,16,0.30,0.04\n2,32,0.46,0.04\n"
                      "22,16,0.40,0.14\n22,32,0.56,0.14\n");
  tptest::write_file(d / "scalability.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time\n");
  if (with_curves) {
    // At B=32, 10 iterations = 1 epoch of 320 examples.
    tptest::write_file(d / "validation-32.csv",
                        "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,2\n20,20,0.7,1,2\n30,30,0.6,1,2\n");
    tptest::write_file(d / "validation-128.csv",
                        "progress,iteration,metric,grad_sqr,grad_var\n10,5,0.3,1,2\n20,10,0.5,1,2\n");
  }
  return d;
}

}  // namespace

TEST(ReplayOracle, EpochTimeInterpolatesStepTimeOverBatch) {
  auto o = replay::ReplayOracle::from_dir(tiny_trace().string());
  EXPECT_EQ(o.dataset_size(), 320);  // 10 iterations x 32
  // b=16, r=1: 320/16 = 20 steps x 0.26 s.
  EXPECT_NEAR(*o.epoch_time(16, 1), 20 * 0.26, 1e-9);
  // b=24 interpolates between 0.26 and 0.42.
  EXPECT_NEAR(*o.step_time(24, 1), 0.34, 1e-9);
  // Two GPUs on one node use placement "2"; on two nodes "11" is absent.
  EXPECT_NEAR(*o.epoch_time(32, 2, 1), 320.0 / 64 * 0.46, 1e-9);
  EXPECT_FALSE(o.epoch_time(32, 2, 2).has_value());
  // Four GPUs on two nodes: placement "22".
  EXPECT_NEAR(*o.step_time(16, 4, 2), 0.40, 1e-9);
  // Outside the measured batch range: not feasible.
  EXPECT_FALSE(o.epoch_time(8, 1).has_value());
  EXPECT_FALSE(o.epoch_time(128, 1).has_value());
}

TEST(ReplayOracle, MetricIsBestSoFarAndInterpolatedInLogBatch) {
  auto o = replay::ReplayOracle::from_dir(tiny_trace().string());
  // At B=32: epochs 1,2,3 -> 0.5, 0.7, best-so-far 0.7 (not 0.6).
  // Exactly at the first evaluation (this once read before the curve's start).
  EXPECT_NEAR(*o.metric(32, 1), 0.5, 1e-12);
  EXPECT_NEAR(*o.metric(32, 2), 0.7, 1e-12);
  EXPECT_NEAR(*o.metric(32, 3), 0.7, 1e-12);
  EXPECT_NEAR(*o.metric(32, 1.5), 0.6, 1e-12);
  // Beyond the last evaluation it stays at the last value.
  EXPECT_NEAR(*o.metric(32, 50), 0.7, 1e-12);
  // At B=128: 5 iterations x 128 / 320 = 2 epochs per row.
  EXPECT_NEAR(*o.metric(128, 2), 0.3, 1e-12);
  EXPECT_NEAR(*o.metric(128, 4), 0.5, 1e-12);
  // B=64 is halfway in log2 between 32 and 128.
  EXPECT_NEAR(*o.metric(64, 2), 0.5 * (0.7 + 0.3), 1e-12);
  // Before the first evaluation: linear from the worst value (0.3) at e=0.
  EXPECT_NEAR(*o.metric(32, 0.5), 0.3 + (0.5 - 0.3) * 0.5, 1e-12);
  // Outside the measured global batches: not feasible.
  EXPECT_FALSE(o.metric(16, 2).has_value());
  EXPECT_FALSE(o.metric(256, 2).has_value());
}

TEST(ReplayOracle, ProgressAlignmentBlendsRowByRow) {
  replay::OracleOptions opts;
  opts.metric_alignment = replay::MetricAlignment::kProgress;
  auto o = replay::ReplayOracle::from_dir(tiny_trace().string(), opts);
  // Measured batches read as before.
  EXPECT_NEAR(*o.metric(32, 2), 0.7, 1e-12);
  EXPECT_NEAR(*o.metric(128, 2), 0.3, 1e-12);
  // B=64, halfway in log2: row 0 blends (1 epoch, 0.5) at B=32 with
  // (2 epochs, 0.3) at B=128: iterations 10 and 5 -> 7.5 -> 7.5*64/320 = 1.5
  // epochs, metric 0.4. Row 1: iterations 20 and 10 -> 15 -> 3 epochs, 0.6.
  // Only two rows: the shorter curve ends the blend.
  EXPECT_NEAR(*o.metric(64, 1.5), 0.4, 1e-12);
  EXPECT_NEAR(*o.metric(64, 3), 0.6, 1e-12);
  EXPECT_NEAR(*o.metric(64, 2.25), 0.5, 1e-12);
  EXPECT_NEAR(*o.metric(64, 10), 0.6, 1e-12);
  // Before the first blended row: linear from the worst value (0.3) at e=0.
  EXPECT_NEAR(*o.metric(64, 0.75), 0.35, 1e-12);
  // The default (equal data epochs) differs here: 0.5 * (0.7 + 0.3).
  auto d = replay::ReplayOracle::from_dir(tiny_trace().string());
  EXPECT_NEAR(*d.metric(64, 2), 0.5, 1e-12);
  EXPECT_NEAR(*o.metric(64, 2), 0.4 + 0.2 / 3, 1e-12);
}

TEST(ReplayOracle, TimeOnlyTraceHasNoMetric) {
  replay::OracleOptions opts;
  opts.dataset_size = 320;
  auto o = replay::ReplayOracle::from_dir(tiny_trace(false).string(), opts);
  EXPECT_TRUE(o.time_only());
  EXPECT_FALSE(o.metric(32, 1).has_value());
  auto plan = replay::named_plan("small", 3);
  plan.workers = {1, 2};
  auto res = replay::draw_samples(o, plan);
  EXPECT_FALSE(res.samples.has_metric());
  EXPECT_FALSE(res.samples.empty());
}

TEST(ReplayOracle, TimeOnlyTraceWithoutSizeIsAnError) {
  EXPECT_THROW(replay::ReplayOracle::from_dir(tiny_trace(false).string()), InputError);
}

// A curve's progress is the work the simulator runs a job to: positive,
// increasing and within any run; one global batch has one curve.
TEST(ReplayOracle, CurvesOfNoRunOrTwiceOneBatchAreRefused) {
  for (const char* rows : {"10,10,0.5\n-5,20,0.7\n", "10,10,0.5\n10,20,0.7\n", "10,10,0.5\n1e290,20,0.7\n"}) {
    auto d = tiny_trace();
    tptest::write_file(d / "validation-32.csv", std::string("progress,iteration,metric\n") + rows);
    const auto e = tptest::input_error_of([&] { io::read_pollux_trace(d.string()); });
    EXPECT_EQ(e.file(), (d / "validation-32.csv").string()) << rows;
    EXPECT_EQ(e.line(), 3) << rows;
    EXPECT_EQ(e.field(), "progress") << rows;
  }
  auto d = tiny_trace();
  tptest::write_file(d / "validation-0128.csv", "progress,iteration,metric\n10,5,0.3\n");
  const auto e = tptest::input_error_of([&] { io::read_pollux_trace(d.string()); });
  EXPECT_NE(e.message().find("the global batch 128 has a curve already"), std::string::npos) << e.message();
}

// The simulator runs each job through the application's epochs: a curve
// shorter than them would cut every job's work short, so it is named.
TEST(ReplayOracle, ACurveShorterThanTheApplicationsEpochsIsNamed) {
  const auto d = tptest::temp_dir("short_curve") / "cifar10";  // 100 epochs in Pollux
  std::filesystem::create_directories(d);
  for (const auto& e : std::filesystem::directory_iterator(tiny_trace())) std::filesystem::copy(e.path(), d / e.path().filename());
  auto oracle = std::make_shared<const replay::ReplayOracle>(replay::ReplayOracle::from_dir(d.string()));
  ASSERT_EQ(oracle->epoch_limit(), 100);
  const auto e = tptest::input_error_of([&] { sim::AppModel model(oracle); });
  EXPECT_NE(e.file().find("validation-"), std::string::npos) << e.file();
  EXPECT_NE(e.message().find("fewer than the application's 100 epochs"), std::string::npos) << e.message();
}

TEST(ReplayOracle, RejectsBadPlacement) {
  auto d = tiny_trace();
  tptest::write_file(d / "placements.csv", "placement,local_bsz,step_time,sync_time\n1,16,0.26,0\n1x,16,0.3,0\n");
  try {
    replay::ReplayOracle::from_dir(d.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field(), "placement");
  }
}

TEST(ReplayOracle, PlacementForSpreadsEvenly) {
  EXPECT_EQ(replay::ReplayOracle::placement_for(6, 2), "33");
  EXPECT_EQ(replay::ReplayOracle::placement_for(7, 2), "34");
  EXPECT_EQ(replay::ReplayOracle::placement_for(5, 3), "122");
  EXPECT_EQ(replay::ReplayOracle::placement_for(1, 2), "");
}

TEST(Sampler, PaperPlanOnPolluxGives240SamplesForCifar) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto o = replay::ReplayOracle::from_dir(tptest::shared_data_dir() + "/pollux-t4/cifar10");
  auto res = replay::draw_samples(o, replay::named_plan("paper", 1));
  EXPECT_EQ(res.samples.size(), 240u);
  for (const auto& s : res.samples.samples) {
    EXPECT_GE(s.batch, 16);
    EXPECT_LE(s.batch, 256);
    EXPECT_GE(s.epochs, 1);
    EXPECT_LE(s.epochs, 40);
    EXPECT_GT(s.epoch_time_s, 0);
  }
  // Same seed, same samples.
  auto again = replay::draw_samples(o, replay::named_plan("paper", 1));
  EXPECT_EQ(again.samples.samples[17].batch, res.samples.samples[17].batch);
  EXPECT_EQ(again.samples.samples[17].epochs, res.samples.samples[17].epochs);
}

TEST(Sampler, RecordedCurvesAddTheLongestTrialsEpochsAndKeepTheTrials) {
  auto o = replay::ReplayOracle::from_dir(tiny_trace().string());
  replay::SamplingPlan plan;
  plan.workers = {1, 2};
  plan.n_batches = 2;
  plan.batch_lo = 16;
  plan.batch_hi = 32;
  plan.n_epochs = 2;
  plan.max_epochs = 6;
  plan.seed = 3;
  auto plain = replay::draw_samples(o, plan);
  plan.record_curves = true;
  auto res = replay::draw_samples(o, plan);
  EXPECT_TRUE(plain.samples.curve.empty());
  // The same trials.
  ASSERT_EQ(res.samples.size(), plain.samples.size());
  for (size_t i = 0; i < res.samples.size(); ++i) {
    EXPECT_EQ(res.samples.samples[i].batch, plain.samples.samples[i].batch);
    EXPECT_EQ(res.samples.samples[i].epochs, plain.samples.samples[i].epochs);
  }
  // Every epoch before each configuration's longest trial that no trial ran,
  // with the oracle's metric there.
  auto runs = res.samples.metric_runs();
  size_t expected = 0;
  for (const auto& [key, run] : runs) expected += static_cast<size_t>(run.back().first) - run.size();
  EXPECT_EQ(res.samples.curve.size(), expected);
  ASSERT_FALSE(res.samples.curve.empty());
  for (const auto& c : res.samples.curve) {
    const auto& run = runs.at({c.batch, c.workers});
    EXPECT_LT(c.epochs, run.back().first);
    for (const auto& [e, m] : run) EXPECT_NE(c.epochs, e);
    EXPECT_DOUBLE_EQ(*c.metric, *o.metric(c.global_batch(), c.epochs));
  }
}

TEST(SampleCli, BadWorkloadGivesExit2) {
  auto r = tptest::run_cli("sample --workload /nonexistent/dir");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, "/nonexistent/dir", 0, ""));
}

// sample -o onto the trace it reads would replace the trace; a row count must be 1 to 10^7 (a
// negative one read as unsigned is 2^64 - 5 rows); options --synthetic-rows does not use are refused.
TEST(SampleCli, RefusesWritingOverItsTraceAndAnImpossibleRowCount) {
  const auto d = tiny_trace();
  const std::string placements = tptest::read_file(d / "placements.csv");
  auto over = tptest::run_cli("sample --workload " + d.string() + " -o " + (d / "placements.csv").string());
  EXPECT_EQ(over.exit_code, 2);
  EXPECT_NE(over.err.find("--out"), std::string::npos) << over.err;
  EXPECT_EQ(tptest::read_file(d / "placements.csv"), placements);
  // Nor a new file in it, which the next read of the trace would take for a curve.
  auto into = tptest::run_cli("sample --workload " + d.string() + " -o " + (d / "validation-7.csv").string());
  EXPECT_EQ(into.exit_code, 2);
  EXPECT_NE(into.err.find("--workload folder"), std::string::npos) << into.err;
  EXPECT_FALSE(std::filesystem::exists(d / "validation-7.csv"));
  for (const char* n : {"-5", "0", "100000000"}) {
    auto r = tptest::run_cli(std::string("sample --synthetic-rows ") + n);
    EXPECT_EQ(r.exit_code, 2) << n;
    EXPECT_NE(r.err.find("--synthetic-rows"), std::string::npos) << r.err;
  }
  auto ignored = tptest::run_cli("sample --synthetic-rows 10 --metric min");
  EXPECT_EQ(ignored.exit_code, 2);
  EXPECT_NE(ignored.err.find("--metric"), std::string::npos) << ignored.err;
  EXPECT_EQ(tptest::run_cli("sample --synthetic-rows 10").exit_code, 0);
  // A data set of 0 examples given is refused, not read as "not given".
  for (const char* n : {"0", "-3"}) {
    auto zero = tptest::run_cli("sample --workload " + d.string() + " --dataset-size " + n);
    EXPECT_EQ(zero.exit_code, 2) << n;
    EXPECT_NE(zero.err.find("--dataset-size"), std::string::npos) << zero.err;
  }
}
