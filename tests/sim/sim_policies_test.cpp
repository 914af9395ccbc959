// Hand-checkable scenarios for every policy: one node of 4 GPUs, two jobs
// of a fixture application "lin" with linear scaling.
//
// Fixture: step time = local batch (seconds), no sync, on 1..4 GPUs of one
// node; gradient variance 0, so a step makes 1 unit of progress whatever
// the batch; two epochs of 10 units: work = 20 steps.
// With global batch 8 on g GPUs: local 8/g, step 8/g s, rate g/8 steps/s.
//   job A: arrives t=0,  2 GPUs, batch 8 -> step 4 s, alone 80 s.
//   job B: arrives t=10, 4 GPUs, batch 8 -> step 2 s, alone 40 s.
// Event-driven scheduling (interval 0), restart delay 0 unless stated.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "core/error.h"
#include "io/csv.h"
#include "sim/experiment.h"
#include "sim/metrics.h"
#include "sim/workload.h"
#include "test_util.h"

using namespace trainplan;
namespace fs = std::filesystem;

namespace {

// A folder holding one application `name` whose step takes `per_example`
// seconds per local example, no sync, on `least_gpus`..4 GPUs of one node,
// and two epochs of `epoch` steps each.
fs::path linear_trace(const std::string& name, double per_example, long epoch, int least_gpus = 1) {
  auto root = tptest::temp_dir("sim" + name);
  fs::create_directories(root / name);
  std::string pl = "placement,local_bsz,step_time,sync_time\n";
  for (int g = least_gpus; g <= 4; ++g)
    pl += fmt::format("{},1,{:.17g},0\n{},16,{:.17g},0\n", g, per_example, g, 16 * per_example);
  tptest::write_file(root / name / "placements.csv", pl);
  tptest::write_file(root / name / "scalability.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time\n");
  for (int b : {8, 16})
    tptest::write_file(root / name / ("validation-" + std::to_string(b) + ".csv"),
                       fmt::format("progress,iteration,metric,grad_sqr,grad_var\n{0},{0},0.5,1,0\n{1},{1},0.7,1,0\n",
                                   epoch, 2 * epoch + (epoch > 10 ? -3 : 0)));
  return root;
}

fs::path lin_trace_root() { return linear_trace("lin", 1.0, 10); }

struct Run {
  double jct_a, jct_b;
  sim::SimResult res;
};

// One node kind, the schedulers seeing the true speeds, a decision at every event.
sim::ExperimentOptions small_cluster(int nodes, int gpus_per_node, double restart = 0, double interval = 0) {
  sim::ExperimentOptions eo;
  eo.sim.nodes = nodes;
  eo.sim.gpus_per_node = gpus_per_node;
  eo.sim.restart_delay = restart;
  eo.sim.interval = interval;
  eo.oracle = true;
  return eo;
}

Run run(const std::string& policy, double restart = 0, std::vector<double> thresholds = {30}, double interval = 0,
        double pollux_p = -1) {
  static fs::path root = lin_trace_root();
  sim::AppSet apps(root.string());
  auto wl = tptest::write_file(root / "wl.csv",
                               "name,time,application,num_replicas,batch_size\nA,0,lin,2,8\nB,10,lin,4,8\n");
  auto jobs = sim::jobs_from_workload(wl, apps, 1.0, 4);
  sim::ExperimentOptions eo = small_cluster(1, 4, restart, interval);
  eo.policy.tiresias_thresholds = thresholds;
  eo.policy.pollux_p = pollux_p;
  sim::Experiment ex(apps.all(), eo);
  auto r = ex.run(policy, jobs);
  return {r.jobs[0].jct, r.jobs[1].jct, r};
}

}  // namespace

TEST(SimPolicies, FixtureAppIsLinear) {
  sim::AppSet apps(lin_trace_root().string());
  const sim::AppModel* lin = apps.find("lin");
  ASSERT_NE(lin, nullptr);
  EXPECT_DOUBLE_EQ(lin->total_work(), 20);
  EXPECT_DOUBLE_EQ(lin->rate(2, 0, 8, 0), 2.0 / 8);
  EXPECT_DOUBLE_EQ(lin->rate(4, 0, 8, 1), 4.0 / 8);
  EXPECT_DOUBLE_EQ(lin->gain(16, 0), 1.0);
}

// A runs 0..80 on 2 GPUs; B needs 4, waits for A (no backfill), runs 80..120.
// JCT A = 80, B = 120 - 10 = 110.
TEST(SimPolicies, FifoHandComputed) {
  auto r = run("fifo");
  EXPECT_DOUBLE_EQ(r.jct_a, 80);
  EXPECT_DOUBLE_EQ(r.jct_b, 110);
  EXPECT_EQ(r.res.jobs[0].restarts, 0);
  // Each job's result holds the GPUs it finished on (the cluster's are free by then).
  EXPECT_EQ(r.res.jobs[0].gpus, 2);
  EXPECT_EQ(r.res.jobs[1].gpus, 4);
}

// With a 5 s restart delay: A 0..5 delay, 5..85 work; B 85..90 delay, 90..130.
// JCT A = 85, B = 120.
TEST(SimPolicies, FifoPaysRestartDelay) {
  auto r = run("fifo", 5);
  EXPECT_DOUBLE_EQ(r.jct_a, 85);
  EXPECT_DOUBLE_EQ(r.jct_b, 120);
}

// t=10: A has 70 s left, B 40 s: B preempts A and runs 10..50; A resumes at
// 50 with 70 s left -> 120. JCT A = 120, B = 40.
TEST(SimPolicies, SrtfHandComputed) {
  auto r = run("srtf");
  EXPECT_DOUBLE_EQ(r.jct_a, 120);
  EXPECT_DOUBLE_EQ(r.jct_b, 40);
  EXPECT_EQ(r.res.jobs[0].restarts, 1);
}

// Threshold 30 GPU-s. t=10: both in Q0, A entered first and keeps its 2 GPUs;
// B (4 GPUs) does not fit. A reaches 30 GPU-s at t=15 -> Q1, so B (Q0) runs
// from 15 and reaches 30 GPU-s after 7.5 s (t=22.5) -> Q1 behind A. A had
// 15 of its 80 s done and runs 22.5..87.5; B has 32.5 s left: 87.5..120.
// JCT A = 87.5, B = 110.
TEST(SimPolicies, TiresiasHandComputed) {
  auto r = run("tiresias");
  EXPECT_DOUBLE_EQ(r.jct_a, 87.5);
  EXPECT_DOUBLE_EQ(r.jct_b, 110);
  EXPECT_EQ(r.res.jobs[0].restarts, 1);
  EXPECT_EQ(r.res.jobs[1].restarts, 1);
}

// Threshold 100 GPU-s: B does not fit while A (Q0, first) runs; A reaches
// 100 GPU-s at t=50 (50 of 80 s done) -> Q1. B runs 50..75, when it reaches
// 100 GPU-s -> Q1 behind A. A runs 75..105; B's last 15 s: 105..120.
// JCT A = 105, B = 110.
TEST(SimPolicies, TiresiasLaterThreshold) {
  auto r = run("tiresias", 0, {100});
  EXPECT_DOUBLE_EQ(r.jct_a, 105);
  EXPECT_DOUBLE_EQ(r.jct_b, 110);
}

// With a threshold A never reaches before it ends (1000 GPU-s), 2D-LAS is
// FIFO within Q0 with skipping: same as fifo here. JCT A = 80, B = 110.
TEST(SimPolicies, TiresiasHighThresholdIsFifo) {
  auto r = run("tiresias", 0, {1000});
  EXPECT_DOUBLE_EQ(r.jct_a, 80);
  EXPECT_DOUBLE_EQ(r.jct_b, 110);
}

// t=0: A alone gets 1 GPU, then marginal gains take it to 4 (step 2 s).
// t=10: A has 5 of 20 steps; T_A(g) = 15*8/g, T_B(g) = 20*8/g. Each gets 1;
// then drops: B 1->2 80 > A 1->2 60 -> B=2; A 1->2 60 > B 2->3 26.7 -> A=2.
// A: 15 steps x 4 s = 60 s -> ends 70. B: 2 GPUs from 10, 15 steps by 70;
// at 70 B gets 4 GPUs, 5 steps x 2 s -> ends 80. JCT A = 70, B = 70.
TEST(SimPolicies, OptimusHandComputed) {
  auto r = run("optimus");
  EXPECT_DOUBLE_EQ(r.jct_a, 70);
  EXPECT_DOUBLE_EQ(r.jct_b, 70);
}

// A trace timed on no fewer than 2 GPUs: optimus starts the job on the
// fewest it runs on (it waited forever for one, and with scheduling ticks
// the simulation never ended), then gives it all 4: 20 steps of 2 s.
TEST(SimPolicies, OptimusStartsAJobOnTheFewestGpusItRunsOn) {
  const fs::path root = linear_trace("two", 1.0, 10, 2);
  sim::AppSet apps(root.string());
  auto wl = tptest::write_file(root / "wl.csv", "name,time,application,num_replicas,batch_size\nA,0,two,2,8\n");
  auto jobs = sim::jobs_from_workload(wl, apps, 1.0, 4);
  for (double interval : {0.0, 60.0}) {
    sim::Experiment ex(apps.all(), small_cluster(1, 4, 0, interval));
    auto r = ex.run("optimus", jobs);
    ASSERT_EQ(r.jobs.size(), 1u);
    EXPECT_DOUBLE_EQ(r.jobs[0].jct, 40) << interval;
    EXPECT_EQ(r.jobs[0].gpus, 4) << interval;
  }
}

// Goodput at batch b on g GPUs is g/b (gain 1), so the best batch is the
// smallest allowed, 8; scaling is linear, so both want all 4 GPUs.
// t=0: A gets 4 GPUs (step 2 s). t=10: A has 15 steps = 30 s left, B 40 s:
// A first (SRPT), ends 40; B runs 40..80. JCT A = 40, B = 70.
TEST(SimPolicies, CoconfigHandComputed) {
  auto r = run("coconfig");
  EXPECT_DOUBLE_EQ(r.jct_a, 40);
  EXPECT_DOUBLE_EQ(r.jct_b, 70);
  EXPECT_EQ(r.res.jobs[0].batch, 8);
}

// Speedup over one GPU is g on 1, 2 and 4 GPUs (linear scaling, gain 1) and
// 8/3 on 3 (batch 8 runs a local batch of 3 there). t=0: A alone takes 4.
// t=10: A (running on 4, so any other count costs it 10%) and B; with p = -1
// the allocation minimises 1/s_A + 1/s_B: (1,3) 1/0.9 + 3/8 = 1.49, (2,2)
// 1/1.8 + 1/2 = 1.06, (3,1) 1/2.4 + 1 = 1.42 -> (2,2). A has 15 steps left at
// 2/8 a second -> ends 70; B then takes 4 GPUs with 5 of its steps left -> 80.
// JCT A = 70, B = 70.
TEST(SimPolicies, PolluxHandComputed) {
  auto r = run("pollux");
  EXPECT_DOUBLE_EQ(r.jct_a, 70);
  EXPECT_DOUBLE_EQ(r.jct_b, 70);
  EXPECT_EQ(r.res.jobs[0].restarts, 1);
  EXPECT_EQ(r.res.jobs[1].restarts, 1);
  EXPECT_EQ(r.res.jobs[1].gpus, 4);
}

// p = 1 maximises the sum of speedups, to which a waiting job adds nothing: at
// t=10, A kept on 4 and B waiting gives 4, above (2,2) 3.8, (1,3) 3.57 and
// (3,1) 3.4. A's 15 steps at 2 s end at 40; B then runs 20 steps at 2 s -> 80.
// JCT A = 40, B = 70.
TEST(SimPolicies, PolluxWithAPositiveExponentMayLeaveAJobWaiting) {
  auto r = run("pollux", 0, {30}, 0, 1.0);
  EXPECT_DOUBLE_EQ(r.jct_a, 40);
  EXPECT_DOUBLE_EQ(r.jct_b, 70);
  EXPECT_EQ(r.res.jobs[0].restarts, 0);
}

// Our pollux against the Pollux artifact's own simulator on its 8 workloads at
// load 1.0 (16 x 4 T4s, 60 s rounds, 30 s restarts, spread placement): the
// objective reproduces the published mean JCT (2,751 s) within 10%.
TEST(SimPolicies, PolluxReproducesThePublishedMeanJct) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const fs::path data = tptest::shared_data_dir();
  sim::AppSet apps((data / "pollux-t4").string());
  sim::ExperimentOptions eo;
  eo.sim.placement = sim::PlacementMode::kSpread;
  eo.oracle = true;
  sim::Experiment ex(apps.all(), eo);
  double ours = 0;
  for (int w = 1; w <= 8; ++w) {
    auto jobs = sim::jobs_from_workload((data / "workloads" / "pollux-1.0" / fmt::format("workload-{}.csv", w)).string(),
                                        apps, 1.0, 64);
    ours += sim::summarize(ex.run("pollux", jobs)).avg_jct / 8;
  }
  const auto published = nlohmann::json::parse(tptest::read_file(data / "pollux-results" / "pollux-1.0.json"));
  double theirs = 0;
  for (const auto& [name, avg] : published["avgs"].items()) theirs += avg.get<double>() / published["avgs"].size();
  EXPECT_NEAR(ours / theirs, 1.0, 0.10) << "ours " << ours << " s, published " << theirs << " s";
}

// A placement dip wider than a node: one job whose step takes 1 s per local
// example on one node (1-4 GPUs) and on three (12), but 100 s more on the two-
// and three-node spreads between (5-11 GPUs). Its efficient size stops at 4 (no
// step of up to 4 more GPUs is faster), and coconfig's spare GPUs must step
// over the whole dip: 12 GPUs, local batch 1, 20 steps of 1 s. On 4 GPUs (local
// batch 3) the job would take 60 s.
TEST(SimPolicies, CoconfigStepsOverAPlacementDipWiderThanANode) {
  auto root = tptest::temp_dir("simdip");
  fs::create_directories(root / "dip");
  std::string pl = "placement,local_bsz,step_time,sync_time\n";
  for (const std::string p : {"1", "2", "3", "4", "23", "33", "34", "44", "333", "334", "344", "444"}) {
    const double sync = (p.size() == 1 || p == "444") ? 0 : 100;
    // The step time holds the sync: local examples x 1 s, plus the sync on the slow spreads.
    pl += fmt::format("{0},1,{1},{3}\n{0},16,{2},{3}\n", p, 1 + sync, 16 + sync, sync);
  }
  tptest::write_file(root / "dip" / "placements.csv", pl);
  tptest::write_file(root / "dip" / "scalability.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time\n");
  for (int b : {12, 48})
    tptest::write_file(root / "dip" / ("validation-" + std::to_string(b) + ".csv"),
                       "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,0\n20,20,0.7,1,0\n");
  sim::AppSet apps(root.string());
  auto wl = tptest::write_file(root / "wl.csv", "name,time,application,num_replicas,batch_size\nA,0,dip,4,12\n");
  auto jobs = sim::jobs_from_workload(wl, apps, 1.0, 12);
  sim::Experiment ex(apps.all(), small_cluster(3, 4));
  const auto r = ex.run("coconfig", jobs);
  EXPECT_EQ(r.jobs[0].gpus, 12);
  EXPECT_DOUBLE_EQ(r.jobs[0].jct, 20);
}

TEST(SimPolicies, SummaryStatistics) {
  auto r = run("fifo");
  auto s = sim::summarize(r.res);
  EXPECT_DOUBLE_EQ(s.avg_jct, 95);
  EXPECT_DOUBLE_EQ(s.median_jct, 95);
  EXPECT_DOUBLE_EQ(s.makespan, 120);
  // A holds 2 GPUs for 80 s, B 4 GPUs for 40 s: 320 GPU-s of 4 x 120.
  EXPECT_NEAR(s.gpu_hours, 320.0 / 3600, 1e-12);
  EXPECT_NEAR(s.utilisation, 320.0 / 480, 1e-12);
}

TEST(SimPolicies, UnknownPolicyIsInputError) {
  EXPECT_THROW(sim::PolicyRegistry::instance().make("nope", {}), InputError);
  for (const char* p : {"fifo", "srtf", "tiresias", "optimus", "coconfig"})
    EXPECT_NO_THROW(sim::PolicyRegistry::instance().make(p, {}));
}

// Scheduling every 60 s: A starts at the t=0 tick and ends at 80; B (arrived
// at 10) cannot fit at the t=60 tick, and the GPUs A frees at 80 idle until
// the t=120 tick; B runs 120..160. JCT A = 80, B = 150.
TEST(SimPolicies, FifoOnSixtySecondTicks) {
  auto r = run("fifo", 0, {30}, 60);
  EXPECT_DOUBLE_EQ(r.jct_a, 80);
  EXPECT_DOUBLE_EQ(r.jct_b, 150);
}

// Tiresias on 60 s ticks (threshold 30 GPU-s): at t=60 A has 120 GPU-s -> Q1,
// B (Q0) preempts it and runs 60..100; A resumes at the t=120 tick with 20 s
// left -> 140. JCT A = 140, B = 90. (Also guards against a wake-up loop.)
TEST(SimPolicies, TiresiasOnSixtySecondTicks) {
  auto r = run("tiresias", 0, {30}, 60);
  EXPECT_DOUBLE_EQ(r.jct_a, 140);
  EXPECT_DOUBLE_EQ(r.jct_b, 90);
}

// Late in a long simulation the clock's resolution is coarse (at 1e11 s, 15
// microseconds), and an epoch boundary less than that away must still count
// as reached. Jobs of an application whose step times are no binary
// fractions (1.31 ms per example, 10,007 and 10,004 steps to its two epochs),
// arriving 2e9 s and more in, finish; with boundaries waited for at the same
// time, 54 of these 72 runs never return (the test then fails by ctest's
// timeout).
TEST(SimPolicies, ArrivalsPastTheLatestAreRefusedNamingTheLine) {
  // Nanoseconds since 1970 read as seconds: past kLatestSeconds, where the
  // clock could no longer move by a scheduling interval (the simulation
  // hung). Also after --load-scale.
  const fs::path root = lin_trace_root();
  sim::AppSet apps(root.string());
  auto wl = tptest::write_file(root / "ns.csv", "name,time,application,num_replicas,batch_size\nA,0,lin,2,8\n"
                                                "B,1764000000000000000,lin,4,8\n");
  try {
    sim::jobs_from_workload(wl, apps, 1.0, 4);
    FAIL() << "an arrival at 1.8e18 s was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field(), "time");
  }
  auto late = tptest::write_file(root / "late2.csv", "name,time,application,num_replicas,batch_size\nA,1e9,lin,2,8\n");
  EXPECT_NO_THROW(sim::jobs_from_workload(late, apps, 1.0, 4));
  EXPECT_THROW(sim::jobs_from_workload(late, apps, 1e-13, 4), InputError);
}

TEST(SimPolicies, JobsArrivingLateInALongSimulationFinish) {
  const fs::path root = linear_trace("odd", 0.00131, 10007);
  sim::AppSet apps(root.string());
  int runs = 0;
  for (double start : {2e9, 1e11, 2.7e11, 1e13})
    for (int k = 0; k < 6; ++k) {
      // A at 0, B alone at `start` (the late arrival after an idle gap); or both late together.
      const bool alone = k % 2 == 0;
      const std::string a = fmt::format("{:.17g}", alone ? 0.37 * k : start + 0.37 * k),
                        b = fmt::format("{:.17g}", start + 10.1 + 0.37 * k);
      auto wl = tptest::write_file(root / "late.csv", "name,time,application,num_replicas,batch_size\nA," + a +
                                                          ",odd,3,8\nB," + b + ",odd,4,8\n");
      auto jobs = sim::jobs_from_workload(wl, apps, 1.0, 4);
      for (const char* policy : {"fifo", "tiresias", "srtf"}) {
        sim::ExperimentOptions eo;
        eo.sim.nodes = 1;
        eo.sim.gpus_per_node = 4;
        eo.sim.interval = k % 3 == 0 ? 60 : 0;  // on ticks, or at events
        eo.oracle = true;
        sim::Experiment ex(apps.all(), eo);
        auto r = ex.run(policy, jobs);
        ASSERT_EQ(r.jobs.size(), 2u);
        for (const auto& j : r.jobs) EXPECT_LT(j.jct, 1000) << policy << " at " << a;  // 20,011 steps of a few ms, and a wait
        ++runs;
      }
    }
  EXPECT_EQ(runs, 4 * 6 * 3);
}

// A cluster of two GPU types: node group 0 of the fixture's speed (a step
// takes its local batch in seconds), group 1 four times as fast, one node of
// 4 GPUs each. The same application "lin" on both (its curve the same).
namespace {

struct TwoTypes {
  fs::path slow = linear_trace("lin", 1.0, 10);
  fs::path fast = linear_trace("lin", 0.25, 10);
  sim::AppSet slow_apps{slow.string()}, fast_apps{fast.string()};

  std::vector<sim::JobSpec> jobs(const std::string& rows, std::vector<InputError>* skipped = nullptr) {
    auto wl = tptest::write_file(slow / "wl.csv", "name,time,application,num_replicas,batch_size\n" + rows);
    return sim::jobs_from_workload_on_groups(wl, {&slow_apps, &fast_apps}, 1.0, {4, 4}, skipped);
  }
  sim::SimResult run(const std::string& policy, const std::vector<sim::JobSpec>& jobs, bool aware = true) {
    sim::ExperimentOptions eo = small_cluster(1, 4);
    eo.sim.groups = {{"slow", 1, 4}, {"fast", 1, 4}};
    eo.policy.pollux_types = aware;
    std::vector<const sim::AppModel*> all = slow_apps.all();
    for (const auto* a : fast_apps.all()) all.push_back(a);
    sim::Experiment ex(all, eo);
    return ex.run(policy, jobs);
  }
};

}  // namespace

// A policy blind to types: A (4 GPUs, batch 8) takes the first group, slow:
// step 2 s, 20 steps, 40 s. B arrives at 10 to a full group 0 and takes the
// fast one: step 0.5 s, 10 s.
TEST(SimNodeGroups, BlindPolicyTakesTheFirstGroupWithRoom) {
  TwoTypes c;
  const auto r = c.run("fifo", c.jobs("A,0,lin,4,8\nB,10,lin,4,8\n"));
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_DOUBLE_EQ(r.jobs[0].jct, 40);
  EXPECT_EQ(r.jobs[0].group, 0);
  EXPECT_DOUBLE_EQ(r.jobs[1].jct, 10);
  EXPECT_EQ(r.jobs[1].group, 1);
  ASSERT_EQ(r.gpu_seconds_by_group.size(), 2u);
  EXPECT_DOUBLE_EQ(r.gpu_seconds_by_group[0], 4 * 40);
  EXPECT_DOUBLE_EQ(r.gpu_seconds_by_group[1], 4 * 10);
  EXPECT_EQ(r.total_gpus, 8);
}

// pollux aware of types puts a lone job on the fast group's 4 GPUs (batch 8:
// step 0.5 s, 20 steps, 10 s); blind, it decides 4 GPUs and the simulator
// gives it the first group, 40 s.
TEST(SimNodeGroups, PolluxAwareOfTypesChoosesTheFasterGroup) {
  TwoTypes c;
  const auto jobs = c.jobs("A,0,lin,1,8\n");
  const auto aware = c.run("pollux", jobs, true), blind = c.run("pollux", jobs, false);
  EXPECT_EQ(aware.jobs[0].group, 1);
  EXPECT_EQ(aware.jobs[0].gpus, 4);
  EXPECT_DOUBLE_EQ(aware.jobs[0].jct, 10);
  EXPECT_EQ(blind.jobs[0].group, 0);
  EXPECT_DOUBLE_EQ(blind.jobs[0].jct, 40);
}

// Two jobs at once, with the power mean at p = -1: both on the fast group,
// 2 GPUs each (speedups 2 and 2 over one fast GPU: -1/2 - 1/2 = -1), rather
// than a group each (4 fast GPUs and 4 slow ones, speedups 4 and 1: -1.25).
TEST(SimNodeGroups, PolluxAwareOfTypesMaximisesThePowerMeanOverGroups) {
  TwoTypes c;
  const auto r = c.run("pollux", c.jobs("A,0,lin,1,8\nB,0,lin,1,8\n"));
  for (const auto& j : r.jobs) {
    EXPECT_EQ(j.group, 1);
    EXPECT_EQ(j.gpus, 2);
  }
  EXPECT_DOUBLE_EQ(r.gpu_seconds_by_group[0], 0);
}

// A job whose request no group holds is refused with file, line and column,
// or left out and counted; one that only the larger group holds runs there.
TEST(SimNodeGroups, AJobRunsWhereSomeGroupHoldsItsRequest) {
  TwoTypes c;
  auto wl = tptest::write_file(c.slow / "big.csv", "name,time,application,num_replicas,batch_size\nA,0,lin,8,8\n");
  try {
    sim::jobs_from_workload_on_groups(wl, {&c.slow_apps, &c.fast_apps}, 1.0, {4, 4});
    ADD_FAILURE() << "8 GPUs on groups of 4 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), wl + ":2: column 'num_replicas': job 'A' needs 8 GPUs but the largest node group has 4 "
                                           "(--skip-unrunnable leaves such jobs out)");
  }
  // The largest group is named, not the first.
  try {
    sim::jobs_from_workload_on_groups(wl, {&c.slow_apps, &c.fast_apps}, 1.0, {4, 6});
    ADD_FAILURE() << "8 GPUs on groups of 4 and 6 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), wl + ":2: column 'num_replicas': job 'A' needs 8 GPUs but the largest node group has 6 "
                                           "(--skip-unrunnable leaves such jobs out)");
  }
  // The fixture times 1 to 4 GPUs: 4 runs on the second group alone.
  wl = tptest::write_file(c.slow / "four.csv", "name,time,application,num_replicas,batch_size\nA,0,lin,4,8\n");
  std::vector<InputError> skipped;
  auto kept = sim::jobs_from_workload_on_groups(wl, {&c.slow_apps, &c.fast_apps}, 1.0, {2, 4}, &skipped);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_TRUE(skipped.empty());
  EXPECT_EQ(kept[0].app_on(1), c.fast_apps.find("lin"));
  EXPECT_EQ(kept[0].app, c.slow_apps.find("lin"));
  kept = sim::jobs_from_workload_on_groups(wl, {&c.slow_apps, &c.fast_apps}, 1.0, {2, 2}, &skipped);
  EXPECT_TRUE(kept.empty());
  EXPECT_EQ(skipped.size(), 1u);
}

namespace {

// Asks for more GPUs of group 1 than it has.
class OverGroup : public sim::Policy {
 public:
  std::string name() const override { return "over-group"; }
  std::vector<sim::Decision> schedule(const sim::SchedInput& in) override {
    return {{(*in.jobs)[0]->id, in.groups[1].total_gpus + 1, 8, 1}};
  }
};

}  // namespace

// Names a group for the first job and none for the second.
class HalfNamed : public sim::Policy {
 public:
  std::string name() const override { return "half-named"; }
  std::vector<sim::Decision> schedule(const sim::SchedInput& in) override {
    return {{(*in.jobs)[0]->id, 1, 8, 1}, {(*in.jobs)[1]->id, 1, 8, -1}};
  }
};

// Gives its one job more GPUs than any group holds, blind to groups.
class Nowhere : public sim::Policy {
 public:
  std::string name() const override { return "nowhere"; }
  std::vector<sim::Decision> schedule(const sim::SchedInput& in) override { return {{(*in.jobs)[0]->id, 8, 8}}; }
};

TEST(SimNodeGroups, APolicyThatOverfillsAGroupIsCaught) {
  TwoTypes c;
  const auto jobs = c.jobs("A,0,lin,1,8\n");
  sim::SimOptions so;
  so.groups = {{"slow", 2, 4}, {"fast", 1, 4}};
  so.restart_delay = 0, so.interval = 0;
  OverGroup policy;
  sim::OracleEstimator oracle;
  EXPECT_THROW(sim::simulate(jobs, policy, oracle, oracle, so), std::logic_error);
  so.groups = {{"slow", 0, 4}};
  EXPECT_THROW(sim::simulate(jobs, policy, oracle, oracle, so), InputError);
  // A group named for some jobs and not others: the blind one could take the named one's GPUs.
  so.groups = {{"slow", 1, 4}, {"fast", 1, 4}};
  HalfNamed half;
  EXPECT_THROW(sim::simulate(c.jobs("A,0,lin,1,8\nB,0,lin,1,8\n"), half, oracle, oracle, so), std::logic_error);
  // A blind decision no group holds, with every GPU free, would come round again at every tick.
  so.interval = 60;
  Nowhere nowhere;
  try {
    sim::simulate(jobs, nowhere, oracle, oracle, so);
    ADD_FAILURE() << "a decision placed nowhere on an idle cluster was not caught";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("job 'A' 8 GPUs"), std::string::npos) << e.what();
  }
}

// coconfig on two types: the first job in its order (both the same: A, by
// arrival) takes the fast group's 4 GPUs, where it finishes soonest (10 s);
// B the slow group's until then (5 of its 20 steps), and then, with no
// restart delay, the fast group's: 15 steps at 2 a second, done at 17.5 s.
TEST(SimNodeGroups, CoconfigSendsEachJobWhereItFinishesSoonest) {
  TwoTypes c;
  const auto r = c.run("coconfig", c.jobs("A,0,lin,1,8\nB,0,lin,1,8\n"));
  EXPECT_EQ(r.jobs[0].group, 1);
  EXPECT_EQ(r.jobs[0].gpus, 4);
  EXPECT_DOUBLE_EQ(r.jobs[0].jct, 10);
  EXPECT_EQ(r.jobs[1].group, 1);
  EXPECT_EQ(r.jobs[1].restarts, 1);
  EXPECT_DOUBLE_EQ(r.jobs[1].jct, 17.5);
  EXPECT_DOUBLE_EQ(r.gpu_seconds_by_group[0], 4 * 10);
}

// --jobs-csv keeps a job's name as the workload gave it: one with a comma or
// a quote is quoted, and the file reads back with its columns in place.
TEST(SimPolicies, TheJobsCsvQuotesANameWithACommaOrAQuote) {
  sim::SimResult r;
  r.policy = "fifo";
  for (const char* name : {"j,1", "say \"hi\"", "plain"}) {
    sim::JobResult j;
    j.name = name, j.app = "lin", j.batch = 8;
    r.jobs.push_back(j);
  }
  const auto path = (tptest::temp_dir("jobs_csv") / "jobs.csv").string();
  sim::write_jobs_csv(path, {r});
  const auto t = io::CsvTable::read(path);
  ASSERT_EQ(t.rows().size(), 3u);
  EXPECT_EQ(t.text(t.rows()[0], "name"), "j,1");
  EXPECT_EQ(t.text(t.rows()[1], "name"), "say \"hi\"");
  EXPECT_EQ(t.number(t.rows()[2], "batch"), 8);
}
