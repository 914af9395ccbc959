// Where the simulated applications' step times come from (sim/step_time_source.h):
// another folder of traces, or the traces moved to another GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "core/error.h"
#include "core/median.h"
#include "io/gnuplot.h"
#include "io/hardware_file.h"
#include "sim/workload.h"
#include "test_util.h"

using namespace trainplan;
namespace fs = std::filesystem;

namespace {

// An application "toy" under root/sub: one GPU and two on a node, per-GPU
// batches 8 and 16, a step of `per_example` seconds a local example; with
// learning curves when `curves`.
fs::path toy(const fs::path& root, const std::string& sub, double per_example, bool curves) {
  const fs::path dir = root / sub / "toy";
  fs::create_directories(dir);
  std::string pl = "placement,local_bsz,step_time,sync_time\n";
  for (const std::string p : {"1", "2"})
    for (int b : {8, 16}) pl += fmt::format("{},{},{},0\n", p, b, per_example * b);
  tptest::write_file(dir / "placements.csv", pl);
  if (curves)
    for (int b : {8, 32})
      tptest::write_file(dir / ("validation-" + std::to_string(b) + ".csv"),
                         "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,0\n20,20,0.7,1,0\n");
  return root / sub;
}

TEST(StepTimeSource, AnotherFolderTimesTheStepsAndTheCurvesStay) {
  const auto root = tptest::temp_dir("steptimes_other");
  const fs::path own = toy(root, "own", 0.1, true);
  const fs::path other = toy(root, "other", 0.3, false);  // no curves: step times only
  sim::StepTimeSource src;
  src.kind = sim::StepTimeSource::Kind::kOtherTraces;
  src.other_traces = other.string();
  src.gpus_per_node = 2, src.nodes = 1;
  sim::AppSet mine(own.string()), moved(own.string(), src);
  const sim::AppModel* a = mine.find("toy");
  const sim::AppModel* b = moved.find("toy");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->epochs(), b->epochs());
  EXPECT_DOUBLE_EQ(a->total_work(), b->total_work());
  for (int gpus : {1, 2}) {
    const auto ea = a->execute(gpus, 1, 16 * gpus), eb = b->execute(gpus, 1, 16 * gpus);
    ASSERT_TRUE(ea && eb);
    EXPECT_NEAR(ea->step_s, 1.6, 1e-9);
    EXPECT_NEAR(eb->step_s, 4.8, 1e-9);
    EXPECT_NEAR(a->rate(gpus, 1, 16 * gpus, 0) / b->rate(gpus, 1, 16 * gpus, 0), 3.0, 1e-9);
  }
}

// A folder of step times may hold only the applications the workload runs:
// a job of one it lacks is refused naming the job's line and the folder, or
// left out with --skip-unrunnable; jobs of the others run.
TEST(StepTimeSource, AFolderWithoutTheApplicationIsNamedWhereAJobNeedsIt) {
  const auto root = tptest::temp_dir("steptimes_missing");
  const fs::path own = toy(root, "own", 0.1, true);
  fs::create_directories(root / "empty");
  sim::StepTimeSource src;
  src.kind = sim::StepTimeSource::Kind::kOtherTraces;
  src.other_traces = (root / "empty").string();
  sim::AppSet apps(own.string(), src);
  EXPECT_EQ(apps.find("toy"), nullptr);
  ASSERT_NE(apps.unavailable("toy"), nullptr);
  EXPECT_EQ(apps.names(), std::set<std::string>{"toy"});
  const std::string wl = tptest::write_file(root / "w.csv", "name,time,application,num_replicas,batch_size\nj1,0,toy,1,8\n");
  try {
    sim::jobs_from_workload(wl, apps, 1.0, 2);
    FAIL() << "a job of an application without step times was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), wl);
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "application");
    EXPECT_NE(std::string(e.what()).find((root / "empty" / "toy").string()), std::string::npos) << e.what();
  }
  std::vector<InputError> skipped;
  EXPECT_TRUE(sim::jobs_from_workload(wl, apps, 1.0, 2, &skipped).empty());
  EXPECT_EQ(skipped.size(), 1u);
}

TEST(StepTimeSource, OptionsThatCannotWorkTogetherAreRefused) {
  sim::StepTimeSource src;
  src.trials = "somewhere";
  EXPECT_THROW(sim::check_step_time_source(src), InputError);  // trials without a move
  src = {};
  src.target_trials = 3;
  EXPECT_THROW(sim::check_step_time_source(src), InputError);  // a draw from no trials
  src = {};
  src.kind = sim::StepTimeSource::Kind::kTransfer;
  src.to = io::resolve_hardware("a100-40gb");  // a node of 8
  src.gpus_per_node = 9;
  try {
    sim::check_step_time_source(src);
    FAIL() << "9 GPUs a node of 8 was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--gpus-per-node");
    EXPECT_NE(std::string(e.what()).find("hardware file"), std::string::npos) << e.what();
  }
  src.to.node.gpus_per_node = 0;  // a node size the hardware does not state
  src.gpus_per_node = 10;
  try {
    sim::check_step_time_source(src);
    FAIL() << "a 10-GPU node was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--gpus-per-node");
  }
  src.gpus_per_node = 9;
  EXPECT_NO_THROW(sim::check_step_time_source(src));
}

// Moved to the GPU it was measured on, a trace keeps its own steps as the
// source fit gives them: the table the move writes must put each step at its
// placement and batch (a placement or batch mixed up would be far off).
TEST(StepTimeSource, AMoveToTheSameGpuKeepsTheMeasuredSteps) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const fs::path data = fs::path(tptest::shared_data_dir()) / "pollux-t4";
  sim::StepTimeSource src;
  src.kind = sim::StepTimeSource::Kind::kTransfer;
  src.from = src.to = io::resolve_hardware("t4");
  src.gpus_per_node = 4, src.nodes = 4, src.max_gpus = 16;
  sim::AppSet measured(data.string()), moved(data.string(), src);
  for (const char* name : {"cifar10", "imagenet", "bert"}) {
    const sim::AppModel* a = measured.find(name);
    const sim::AppModel* b = moved.find(name);
    ASSERT_TRUE(a && b) << name;
    std::vector<double> off;
    for (int gpus : {1, 2, 4, 8, 16})
      for (int local : {a->min_local(), (a->min_local() + a->max_local()) / 2, a->max_local()}) {
        const auto ea = a->execute(gpus, 0, gpus * local), eb = b->execute(gpus, 0, gpus * local);
        if (!ea || !eb) continue;
        off.push_back(std::fabs(eb->step_s / ea->step_s - 1));
      }
    ASSERT_GE(off.size(), 10u) << name;
    EXPECT_LT(median(off), 0.10) << name;
  }
}

// A cluster of thousands of nodes: each GPU count's table holds the fewest
// nodes, the next seven, every doubling and the most, so its size grows with
// the log of the nodes, not with them; and no table goes past the GPUs the
// application's largest batch can use.
TEST(StepTimeSource, AHugeClusterKeepsTheTablesSmall) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const fs::path data = fs::path(tptest::shared_data_dir()) / "pollux-t4";
  sim::StepTimeSource src;
  src.kind = sim::StepTimeSource::Kind::kTransfer;
  src.from = io::resolve_hardware("t4");
  src.to = io::resolve_hardware("h100");
  src.gpus_per_node = 8, src.nodes = 4096, src.max_gpus = 8 * 4096;
  sim::AppSet apps(data.string(), src);
  for (const sim::AppModel* app : apps.all()) {
    const auto& rows = app->oracle().trace().placements;
    std::set<double> batches;
    int most = 0;
    for (const auto& r : rows) batches.insert(r.local_bsz), most = std::max(most, r.gpus);
    EXPECT_EQ(most, app->max_gpus(app->max_batch())) << app->name();
    // 8 + log2(4096) + 1 node counts per GPU count at most.
    EXPECT_LE(rows.size(), size_t(most) * 21 * batches.size()) << app->name();
    // A spread the table leaves out takes the time of the next wider one it holds.
    std::set<int> spreads;
    for (const auto& r : rows)
      if (r.gpus == most) spreads.insert(r.nodes);
    int missing = 0;
    for (int n = *spreads.begin(); n < *spreads.rbegin() && !missing; ++n)
      if (!spreads.count(n)) missing = n;
    if (!missing) continue;  // an application too small to leave one out
    const int wider = *spreads.upper_bound(missing);
    const auto between = app->execute(most, missing, most * app->min_local());
    const auto next = app->execute(most, wider, most * app->min_local());
    ASSERT_TRUE(between && next) << app->name();
    EXPECT_DOUBLE_EQ(between->step_s, next->step_s) << app->name() << " " << missing << " -> " << wider;
  }
}

// The judged use: a cluster of A100s simulated from T4 traces. Three A100
// steps of each application bring the policies' mean JCT and GPU-hours much
// nearer those of the A100 traces than the move alone, which is itself far
// nearer than the T4's steps unmoved; and the best policy is the same.
TEST(BenchSimulateGpuCli, ThreeTrialsBringTheSimulatedClusterNearTheMeasuredOne) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const auto r = tptest::run_cli("bench simulate-gpu --data " + tptest::shared_data_dir() +
                                 " --workloads 1,2 --seeds 1-2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("workload 2 "), std::string::npos) << "a line of progress per run off a terminal: " << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& e = j.at("errors");
  const double k = e.at("moved-k").at("median_abs_avg_jct_error"), none = e.at("moved-0").at("median_abs_avg_jct_error"),
               unmoved = e.at("unmoved").at("median_abs_avg_jct_error");
  EXPECT_LT(k, 0.25);
  EXPECT_LT(k, none / 2);
  EXPECT_LT(none, unmoved / 2);
  EXPECT_LT(e.at("moved-k").at("median_abs_gpu_hours_error").get<double>(), 0.15);
  EXPECT_EQ(e.at("moved-k").at("best_policy_agrees"), "2 of 2");
  EXPECT_GT(j.at("jobs").get<int>(), 250);
}

// Several GPUs: the same jobs on a cluster of each, side by side, each
// priced at its GPU-hours; the options that cannot apply to several refused.
TEST(SimulateCli, SeveralGpusAreComparedAndPriced) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const std::string data = tptest::shared_data_dir();
  const std::string base = "simulate --workload " + data + "/workloads/pollux-1.0/workload-1.csv --data " + data +
                           "/pollux-t4 --policy tiresias";
  auto r = tptest::run_cli(base + " --gpu a100-40gb,h100 --price a100-40gb=3,h100=5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("by_gpu").size(), 2u);
  const auto& a100 = j["by_gpu"][0]["policies"][0];
  const auto& h100 = j["by_gpu"][1]["policies"][0];
  EXPECT_EQ(j["by_gpu"][1]["gpu"], "h100");
  EXPECT_DOUBLE_EQ(a100["cost"].get<double>(), 3 * a100["gpu_hours"].get<double>());
  EXPECT_DOUBLE_EQ(h100["cost"].get<double>(), 5 * h100["gpu_hours"].get<double>());
  // Each GPU's run is that GPU's alone.
  auto one = tptest::run_cli(base + " --gpu h100 --json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(nlohmann::json::parse(one.out)["policies"][0]["avg_jct_s"], h100["avg_jct_s"]);
  EXPECT_LT(h100["avg_jct_s"].get<double>(), a100["avg_jct_s"].get<double>());
  // The GPU the traces were measured on runs on their own steps, not on a move onto itself.
  r = tptest::run_cli(base + " --gpu t4,h100 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto both = nlohmann::json::parse(r.out);
  auto plain = tptest::run_cli(base + " --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(both["by_gpu"][0]["policies"][0]["avg_jct_s"], nlohmann::json::parse(plain.out)["policies"][0]["avg_jct_s"]);
  EXPECT_FALSE(both["by_gpu"][0].contains("step_times")) << both["by_gpu"][0].dump();
  EXPECT_TRUE(both["by_gpu"][1].contains("step_times"));
  for (const std::string& bad : std::vector<std::string>{" --gpu h100,h100", " --gpu h100,h100-sxm", " --price 3",
                                                          " --gpu a100-40gb,h100 --trials " + data + "/sia-a100",
                                                          " --gpu a100-40gb,h100 --price v100=2"}) {
    r = tptest::run_cli(base + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
  }
}

// The bench's chart: drawn where gnuplot is; a name it cannot draw refused
// before any simulation.
TEST(BenchSimulateGpuCli, PlotDrawsEachArmAgainstTheMeasured) {
  const auto dir = tptest::temp_dir("bench_simgpu_plot");
  auto r = tptest::run_cli("bench simulate-gpu --data " + dir.string() + " --plot " + (dir / "x.txt").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--plot"), std::string::npos) << r.err;
  TRAINPLAN_REQUIRE_SHARED_DATA();
  if (!trainplan::io::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed";
  const std::string png = (dir / "arms.png").string();
  r = tptest::run_cli("bench simulate-gpu --data " + tptest::shared_data_dir() +
                      " --workloads 1 --seeds 1 --policy tiresias,pollux --plot " + png);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 1000u);
}

TEST(SimulateCli, AnotherGpuIsForWorkloadsAndOneSourceOfStepTimes) {
  const auto dir = tptest::temp_dir("sim_gpu_opts");
  const fs::path own = toy(dir, "own", 0.1, true);
  tptest::write_file(dir / "w.csv", "name,time,application,num_replicas,batch_size\nj1,0,toy,1,8\n");
  const std::string base = "simulate --workload " + (dir / "w.csv").string() + " --data " + own.string() +
                           " --nodes 1 --gpus-per-node 2 --policy fifo";
  auto r = tptest::run_cli(base + " --gpu nosuchgpu");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--gpu"), std::string::npos) << r.err;
  r = tptest::run_cli(base + " --gpu a100-40gb --step-times " + own.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = tptest::run_cli(base + " --trials " + own.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--gpu"), std::string::npos) << r.err;
  // Options that mean something only beside another: refused, not ignored.
  for (const std::string& lone : std::vector<std::string>{" --from-gpu v100", " --gpu a100-40gb --trials " + own.string() + " --seed 3",
                                 " --gpu a100-40gb --target-trials 2",
                                 " --gpu a100-40gb --trials " + own.string() + " --target-trials 0"}) {
    r = tptest::run_cli(base + lone);
    EXPECT_EQ(r.exit_code, 2) << lone << ": " << r.err;
  }
  r = tptest::run_cli(base + " --step-times " + (dir / "nowhere").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--step-times"), std::string::npos) << r.err;
  // A GPU with less memory than the source is told it may not hold the batches the traces ran.
  r = tptest::run_cli(base + " --gpu p4 --from-gpu t4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out).at("step_times").get<std::string>().find("may not hold"), std::string::npos)
      << r.out;
  // A job the step times cannot run: refused, or with --skip-unrunnable left out and counted.
  tptest::write_file(dir / "w2.csv", "name,time,application,num_replicas,batch_size\nj1,0,toy,1,8\nj2,5,toy,1,4096\n");
  const std::string two = "simulate --workload " + (dir / "w2.csv").string() + " --data " + own.string() +
                          " --nodes 1 --gpus-per-node 2 --policy fifo --json";
  r = tptest::run_cli(two);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("w2.csv:3"), std::string::npos) << r.err;
  r = tptest::run_cli(two + " --skip-unrunnable");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto kept = nlohmann::json::parse(r.out);
  EXPECT_EQ(kept.at("jobs_left_out"), 1);
  EXPECT_EQ(kept.at("policies")[0].at("jobs"), 1);
  // Every job left out: no simulation to report (its zero times would read as the best).
  tptest::write_file(dir / "w3.csv", "name,time,application,num_replicas,batch_size\nj2,5,toy,1,4096\n");
  r = tptest::run_cli("simulate --workload " + (dir / "w3.csv").string() + " --data " + own.string() +
                      " --nodes 1 --gpus-per-node 2 --policy fifo --skip-unrunnable");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("every job of the workload (1) is left out"), std::string::npos) << r.err;
  // Timed by its own folder taken as another: it runs, and says where its step times came from.
  r = tptest::run_cli(base + " --step-times " + own.string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out).at("step_times").get<std::string>().find(own.string()), std::string::npos);
}

}  // namespace
