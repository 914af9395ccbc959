// Tests of `trainplan-train --workload gpt`, run as subprocesses: tensor,
// pipeline and data parallelism each follow the one-process run's losses at
// equal global batch, the 1F1B pipeline runs several micro-batches, a time
// trial reports its figures, and bad layouts exit 2 naming the option.
// Skipped when the optional binary was not built.
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "profile/process_group.h"
#include "test_util.h"
#include "train/trainer_processes.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace tptrain;

constexpr const char* kCorpus = "/usr/share/common-licenses";

#define REQUIRE_GPT_TRAINER()                                                                            \
  do {                                                                                                    \
    if (trainer_path().empty())                                                                           \
      GTEST_SKIP() << "trainplan-train not built (configure with -DTRAINPLAN_WITH_TORCH=ON and build the " \
                      "trainplan-train target, or set TRAINPLAN_TRAIN_BIN)";                             \
    if (!fs::exists(kCorpus)) GTEST_SKIP() << "no corpus at " << kCorpus << " (Debian's base-files)";      \
  } while (0)

// The rank processes of one layout, sharing a FileStore (no port to race for).
std::vector<std::string> ranks_of(int tp, int pp, int dp, const std::string& args) {
  const fs::path store = tptest::temp_dir("gpt_store") / "store";
  std::vector<std::string> v;
  for (int k = 0; k < tp * pp * dp; ++k)
    v.push_back("--workload gpt --tp " + std::to_string(tp) + " --pp " + std::to_string(pp) + " --dp " +
                std::to_string(dp) + " --rank " + std::to_string(k) + " --store-path " + store.string() + " " + args);
  return v;
}

// Rank 0's losses, one per iteration; every rank must have exited 0.
std::vector<double> losses(int tp, int pp, int dp, const std::string& args) {
  auto runs = run_processes(ranks_of(tp, pp, dp, args));
  std::vector<double> v;
  for (size_t k = 0; k < runs.size(); ++k) EXPECT_EQ(runs[k].exit_code, 0) << "rank " << k << ": " << runs[k].err;
  if (runs.empty()) return v;
  for (const auto& e : events_named(runs[0], "iteration")) v.push_back(e.at("loss").get<double>());
  return v;
}

// Small and fast; 4 micro-batches of 2 sequences, so pipelines have work in flight.
const std::string kShape = "--layers 4 --hidden 64 --heads 4 --seq 32 --micro-batch 2 --global-batch 8 --iterations 4";
const std::string kSmall = kShape + " --seed 5";

TEST(TrainGpt, TensorPipelineAndDataParallelMatchOneProcessAtEqualGlobalBatch) {
  REQUIRE_GPT_TRAINER();
  const std::vector<double> one = losses(1, 1, 1, kSmall);
  ASSERT_EQ(one.size(), 4u);
  EXPECT_GT(one.front(), one.back()) << "the loss should fall over 4 Adam steps";
  struct Layout {
    int tp, pp, dp;
  };
  for (Layout l : {Layout{2, 1, 1}, Layout{1, 2, 1}, Layout{1, 1, 2}}) {
    const std::vector<double> other = losses(l.tp, l.pp, l.dp, kSmall);
    ASSERT_EQ(other.size(), one.size()) << "tp " << l.tp << " pp " << l.pp << " dp " << l.dp;
    for (size_t i = 0; i < one.size(); ++i)
      EXPECT_NEAR(other[i], one[i], 1e-4 * std::abs(one[i]))
          << "iteration " << i + 1 << " of tp " << l.tp << " pp " << l.pp << " dp " << l.dp;
  }
  // A different seed gives a different model, so the match above is not vacuous.
  const std::vector<double> seed6 = losses(1, 1, 1, kShape + " --seed 6");
  ASSERT_FALSE(seed6.empty());
  EXPECT_GT(std::abs(seed6.back() - one.back()), 1e-3);
}

TEST(TrainGpt, OneFOneBPipelineOfTwoStagesRunsFourMicroBatches) {
  REQUIRE_GPT_TRAINER();
  auto runs = run_processes(ranks_of(1, 2, 1, kSmall));
  ASSERT_EQ(runs.size(), 2u);
  for (size_t k = 0; k < runs.size(); ++k) ASSERT_EQ(runs[k].exit_code, 0) << "rank " << k << ": " << runs[k].err;
  auto it = events_named(runs[0], "iteration");
  ASSERT_EQ(it.size(), 4u);
  EXPECT_EQ(it[0].at("micro_batches").get<int>(), 4);
  EXPECT_EQ(it[0].at("pp").get<int>(), 2);
  EXPECT_TRUE(runs[1].out.empty()) << "only rank 0 prints";
  EXPECT_EQ(events_named(runs[0], "done").size(), 1u);
  // A combined layout: both pipeline stages tensor-parallel too.
  const std::vector<double> one = losses(1, 1, 1, kSmall), both = losses(2, 2, 1, kSmall);
  ASSERT_EQ(both.size(), one.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_NEAR(both[i], one[i], 1e-4 * std::abs(one[i]));
}

TEST(TrainGpt, ATimeTrialReportsTimeAndPeakMemoryPerRank) {
  REQUIRE_GPT_TRAINER();
  auto runs = run_processes(ranks_of(1, 2, 1, kSmall + " --time-only --warmup-iterations 1 --min-iterations 5 "
                                                       "--max-iterations 5"));
  ASSERT_EQ(runs.size(), 2u);
  for (size_t k = 0; k < runs.size(); ++k) ASSERT_EQ(runs[k].exit_code, 0) << "rank " << k << ": " << runs[k].err;
  auto ev = events_named(runs[0], "iteration_timing");
  ASSERT_EQ(ev.size(), 1u) << runs[0].out;
  const json& e = ev[0];
  EXPECT_GT(e.at("iteration_time_s").get<double>(), 0);
  EXPECT_LE(e.at("ci95")[0].get<double>(), e.at("iteration_time_s").get<double>());
  EXPECT_EQ(e.at("iterations_timed").get<int>(), 5);
  ASSERT_EQ(e.at("peak_memory_bytes_per_rank").size(), 2u);
  double mx = 0;
  for (const auto& p : e.at("peak_memory_bytes_per_rank")) mx = std::max(mx, p.get<double>());
  EXPECT_EQ(e.at("peak_memory_bytes").get<double>(), mx);
  // At least the stage's weights, gradients and two Adam moments (16 bytes a parameter).
  EXPECT_GE(mx, 16 * e.at("parameters_per_rank")[0].get<double>());
  EXPECT_EQ(e.at("global_batch").get<int>(), 8);
  EXPECT_EQ(e.at("micro_batch").get<int>(), 2);
  // Each group's seconds per iteration and rank: both stages waited for
  // the other's sends (activations forward, gradients back), the one-member
  // groups took none. A rank waits inside its iterations, so its mean wait
  // is at most the mean iteration (the slowest rank's), however long one
  // iteration stalled on a busy machine; the median is no such bound.
  ASSERT_EQ(e.at("pp_comm_s_per_rank").size(), 2u);
  for (const auto& s : e.at("pp_comm_s_per_rank")) {
    EXPECT_GT(s.get<double>(), 0);
    EXPECT_LE(s.get<double>(), e.at("iteration_time_mean_s").get<double>() * 1.01);
  }
  for (const char* group : {"tp_comm_s_per_rank", "dp_comm_s_per_rank"})
    for (const auto& s : e.at(group)) EXPECT_EQ(s.get<double>(), 0) << group;
}

// A 1F1B stage holds the micro-batches in flight, however many the
// iteration has: its sends are released as they are known to have arrived,
// and the training text is not counted (it is the data loader's).
TEST(TrainGpt, AStagesPeakMemoryDoesNotGrowWithTheMicroBatchCount) {
  REQUIRE_GPT_TRAINER();
  auto peaks = [](int global_batch) {
    const std::string shape = "--layers 4 --hidden 32 --heads 4 --seq 16 --micro-batch 1 --global-batch " +
                              std::to_string(global_batch) +
                              " --time-only --warmup-iterations 1 --min-iterations 3 --max-iterations 3";
    auto runs = run_processes(ranks_of(1, 2, 1, shape));
    for (size_t k = 0; k < runs.size(); ++k) EXPECT_EQ(runs[k].exit_code, 0) << "rank " << k << ": " << runs[k].err;
    auto ev = events_named(runs[0], "iteration_timing");
    EXPECT_EQ(ev.size(), 1u) << runs[0].out;
    return ev.empty() ? json::array() : ev[0].at("peak_memory_bytes_per_rank");
  };
  const json few = peaks(4), many = peaks(32);
  ASSERT_EQ(few.size(), 2u);
  ASSERT_EQ(many.size(), 2u);
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ(few[k].get<double>(), many[k].get<double>()) << "stage " << k;
  // The default text is 237 kB (1.9 MB as 64-bit tokens, as it was counted): far more than this stage's peak.
  EXPECT_LT(many[0].get<double>(), 1.5e6);
}

// A rank pinned to one CPU computes there. Its Gloo helpers may run on the
// CPUs the profiler names in TRAINPLAN_HELPER_CPUS (as `trainplan profile`
// does for the ranks it pins); without the variable, with a malformed one,
// or with TRAINPLAN_GLOO_HELPERS=pinned they stay on the rank's CPU, as
// whoever pinned it asked. The ranks inherit the test thread's mask at spawn.
TEST(TrainGpt, PinnedRanksLeaveTheirHelpersOnTheCpusTheProfilerShares) {
  REQUIRE_GPT_TRAINER();
  const std::vector<int> cpus = trainplan::profile::allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "this process may use one CPU: nothing to share";
  const std::string home = std::to_string(cpus[0]), shared = std::to_string(cpus[0]) + "," + std::to_string(cpus[1]);
  const std::string args = kSmall + " --time-only --warmup-iterations 1 --min-iterations 3 --max-iterations 3";
  auto timing = [&](const char* helper_cpus, const char* placement) {
    tptest::ScopedEnv a("TRAINPLAN_HELPER_CPUS", helper_cpus), b("TRAINPLAN_GLOO_HELPERS", placement);
    tptest::ScopedPin pin(cpus[0]);
    if (!pin.ok()) return json();
    auto runs = run_processes(ranks_of(2, 1, 1, args));
    for (size_t k = 0; k < runs.size(); ++k) EXPECT_EQ(runs[k].exit_code, 0) << "rank " << k << ": " << runs[k].err;
    auto ev = runs.empty() ? std::vector<json>{} : events_named(runs[0], "iteration_timing");
    return ev.size() == 1 ? ev[0] : json();
  };
  const json free = timing(shared.c_str(), nullptr);
  if (free.is_null()) GTEST_SKIP() << "the OS refuses to pin this thread, or no timing line";
  const json unset = timing(nullptr, nullptr), pinned = timing(shared.c_str(), "pinned"),
             malformed = timing("0-", nullptr);
  for (const json* e : {&free, &unset, &pinned, &malformed}) {
    ASSERT_TRUE(e->is_object());
    EXPECT_EQ(e->at("compute_thread_cpus"), home) << e->dump();
  }
  // The kernel writes "0-1" for two adjacent CPUs, "0,2" otherwise.
  bool some_shared = false;
  for (const auto& c : free.at("helper_thread_cpus")) some_shared = some_shared || c.get<std::string>() != home;
  EXPECT_TRUE(some_shared) << free.dump();
  for (const json* e : {&unset, &pinned, &malformed})
    EXPECT_EQ(e->at("helper_thread_cpus"), json::array({home})) << e->dump();
}

// --precision bf16 computes in bfloat16 from fp32 weights: the losses follow
// fp32's to bf16's precision without equalling them, and the bf16 messages
// between ranks (activations sent, partial sums reduced in fp32) give the same
// training in a tensor- and pipeline-parallel layout.
TEST(TrainGpt, Bf16ComputeTracksFp32AndCrossesRanks) {
  REQUIRE_GPT_TRAINER();
  const std::vector<double> fp32 = losses(1, 1, 1, kSmall);
  const std::vector<double> bf16 = losses(1, 1, 1, kSmall + " --precision bf16");
  const std::vector<double> bf16_tp_pp = losses(2, 2, 1, kSmall + " --precision bf16");
  ASSERT_EQ(fp32.size(), 4u);
  ASSERT_EQ(bf16.size(), fp32.size());
  ASSERT_EQ(bf16_tp_pp.size(), fp32.size());
  double largest_gap = 0;
  for (size_t i = 0; i < fp32.size(); ++i) {
    EXPECT_NEAR(bf16[i], fp32[i], 0.02 * std::abs(fp32[i])) << "iteration " << i + 1;
    EXPECT_NEAR(bf16_tp_pp[i], bf16[i], 0.02 * std::abs(bf16[i])) << "iteration " << i + 1;
    largest_gap = std::max(largest_gap, std::abs(bf16[i] - fp32[i]));
  }
  EXPECT_GT(largest_gap, 1e-5) << "bf16 losses equal fp32's: the products did not run in bf16";
  auto runs = run_processes(ranks_of(1, 1, 1, kSmall + " --precision bf16"));
  ASSERT_FALSE(events_named(runs[0], "iteration").empty()) << runs[0].err;
  EXPECT_EQ(events_named(runs[0], "iteration")[0].at("precision").get<std::string>(), "bf16");
  EXPECT_EQ(events_named(runs[0], "iteration")[0].at("device").get<std::string>(), "cpu");
}

TEST(TrainGpt, BadLayoutsExitTwoNamingTheOption) {
  if (trainer_path().empty()) GTEST_SKIP() << "trainplan-train not built";
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : {Case{"--tp 3 --heads 4", "--tp 3 must divide --heads 4"},
                        Case{"--pp 3 --layers 4", "--pp 3 must divide --layers 4"},
                        Case{"--heads 3 --hidden 64", "--heads 3 must divide --hidden 64"},
                        Case{"--dp 2 --micro-batch 2 --global-batch 6", "--global-batch 6 must be a multiple"},
                        Case{"--tp 2 --workers 3", "--workers 3 must equal"},
                        Case{"--precision fp8", "--precision: fp8 not in {fp32,bf16,amp-fp32-master}"},
                        // The data-parallel workloads' options are refused, not ignored.
                        Case{"--no-allreduce", "--no-allreduce is an option of the data-parallel workloads"},
                        Case{"--epochs 3", "--epochs is an option of the data-parallel workloads"}}) {
    auto runs = run_processes({"--workload gpt " + c.args});
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].exit_code, 2) << c.args << ": " << runs[0].err;
    EXPECT_NE(runs[0].err.find(c.expect), std::string::npos) << c.args << ": " << runs[0].err;
  }
  auto runs = run_processes({"--workload gpt --corpus /nonexistent/corpus"});
  EXPECT_EQ(runs[0].exit_code, 1);
  EXPECT_NE(runs[0].err.find("--corpus /nonexistent/corpus"), std::string::npos) << runs[0].err;
}

}  // namespace
