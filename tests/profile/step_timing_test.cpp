// Steady-state step timing in profiling: the step_timing protocol line, time
// trials with repeats (interference is noted and the lowest median kept),
// epoch time from steps, pinning, oversubscription, and reading a store
// wherever samples are read.
#include <gtest/gtest.h>

#include <cstdlib>

#include <memory>
#include <set>

#include "core/error.h"
#include "profile/process_group.h"
#include "profile/profile_plan.h"
#include "profile/profiler.h"
#include "profile/progress.h"
#include "profile/sample_store.h"
#include "profile/samples_file.h"
#include "profile/trial.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::profile;

namespace {

std::string step_line(double median, long steps_per_epoch, double overhead = 0.01) {
  return "{\"event\":\"step_timing\",\"step_time_median_s\":" + std::to_string(median) +
         ",\"step_time_ci95_s\":[" + std::to_string(median * 0.99) + "," + std::to_string(median * 1.01) +
         "],\"steps_per_epoch\":" + std::to_string(steps_per_epoch) + ",\"epoch_overhead_s\":" +
         std::to_string(overhead) + ",\"steps_timed\":100,\"step_outliers\":0}";
}

// A time command that prints the n-th median of `medians` on its n-th run.
std::string counting_time_cmd(const std::filesystem::path& dir, const std::vector<double>& medians) {
  std::string script = "n=$(cat " + (dir / "n").string() + " 2>/dev/null || echo 0); echo $((n+1)) > " +
                       (dir / "n").string() + "; case $n in ";
  for (size_t i = 0; i < medians.size(); ++i)
    script += std::to_string(i) + ") echo '" + step_line(medians[i], 100) + "';; ";
  script += "esac";
  tptest::write_file(dir / "time.sh", script);
  return "bash " + (dir / "time.sh").string() + " {batch} {workers}";
}

}  // namespace

TEST(StepTiming, ParsesTheStepTimingLineOfATimeTrial) {
  auto out = parse_trial_output("log\n" + step_line(0.004, 47, 0.002) + "\n{\"event\":\"done\"}\n", true);
  ASSERT_TRUE(out.problem.empty()) << out.problem;
  ASSERT_TRUE(out.step_timing);
  EXPECT_DOUBLE_EQ(out.step_timing->step_time_s, 0.004);
  EXPECT_EQ(out.step_timing->steps_per_epoch, 47);
  EXPECT_NEAR(out.step_timing->epoch_time_s(), 47 * 0.004 + 0.002, 1e-12);
  EXPECT_NEAR(out.step_timing->spread, 0.01, 1e-9);
}

// A CPU trainer's line: the wall median 0.006 s, the CPU median 0.004 s.
std::string cpu_line(const std::string& extra, int threads = 1) {
  return "{\"event\":\"step_timing\",\"device\":\"cpu\",\"threads\":" + std::to_string(threads) + extra +
         ",\"step_time_median_s\":0.006,\"step_time_ci95_s\":[0.0059,0.0061],\"step_cpu_median_s\":0.004,"
         "\"step_cpu_ci95_s\":[0.0039,0.0041],\"steps_per_epoch\":10}\n";
}

TEST(StepTiming, AutoTakesTheCpuClockForOneWorkerAndTheWallWhereAStepWaitsForPeers) {
  auto one = parse_trial_output(cpu_line(",\"workers\":1"), true, StepClock::kAuto, 1);
  ASSERT_TRUE(one.step_timing);
  EXPECT_EQ(one.step_timing->clock, "cpu");
  EXPECT_DOUBLE_EQ(one.step_timing->step_time_s, 0.004);
  EXPECT_DOUBLE_EQ(one.step_timing->wall_step_time_s, 0.006);
  // Two workers, said by the trial or by the line: the all-reduce's waiting is in the wall time only.
  for (const auto& [extra, workers] : std::vector<std::pair<std::string, int>>{{"", 2}, {",\"workers\":2", 1}}) {
    auto two = parse_trial_output(cpu_line(extra), true, StepClock::kAuto, workers);
    ASSERT_TRUE(two.step_timing);
    EXPECT_EQ(two.step_timing->clock, "wall") << extra << " " << workers;
    EXPECT_DOUBLE_EQ(two.step_timing->step_time_s, 0.006);
  }
  // Asked for, the CPU clock is taken with peers too.
  auto asked = parse_trial_output(cpu_line(",\"workers\":2"), true, StepClock::kCpu, 2);
  EXPECT_DOUBLE_EQ(asked.step_timing->step_time_s, 0.004);
  // More than one thread: the wall.
  auto threads = parse_trial_output(cpu_line("", 2), true, StepClock::kAuto, 1);
  EXPECT_DOUBLE_EQ(threads.step_timing->step_time_s, 0.006);
}

TEST(StepTiming, ATimeTrialWithoutItsLineIsBadOutput) {
  auto out = parse_trial_output("{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1.0}\n", true);
  EXPECT_NE(out.problem.find("step_timing"), std::string::npos) << out.problem;
}

TEST(StepTiming, EpochLinesStepFieldsGiveTheMedianEpoch) {
  std::string text;
  for (double m : {0.010, 0.030, 0.011})  // one disturbed epoch
    text += "{\"event\":\"epoch\",\"epoch_time_s\":1.0,\"steps\":90,\"step_time_median_s\":" + std::to_string(m) +
            ",\"steps_timed\":90,\"step_outliers\":1}\n";
  auto out = parse_trial_output(text);
  ASSERT_TRUE(out.epoch_steps);
  EXPECT_DOUBLE_EQ(out.epoch_steps->step_time_s, 0.011);
  EXPECT_EQ(out.epoch_steps->steps_per_epoch, 90);
  EXPECT_EQ(out.epoch_steps->outliers, 3);
  EXPECT_EQ(out.epoch_steps->steps_timed, 270);
}

TEST(StepTiming, AgreeingRepeatsRunTwiceAndKeepTheLowest) {
  auto dir = tptest::temp_dir("time_agree");
  ProfileOptions o;
  o.time_template = CommandTemplate(counting_time_cmd(dir, {0.0101, 0.0100, 0.5}));
  auto rec = run_trial(CommandTemplate("false"), {32, 1, 0}, o);
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->status, TrialStatus::kOk) << rec->reason;
  ASSERT_TRUE(rec->timing);
  EXPECT_EQ(rec->timing->repeats.size(), 2u);  // within 5%: no third run
  EXPECT_DOUBLE_EQ(rec->timing->step_time_s, 0.0100);
  EXPECT_NEAR(*rec->epoch_time_s, 100 * 0.0100 + 0.01, 1e-9);
  EXPECT_EQ(rec->note.find("interference"), std::string::npos) << rec->note;
}

TEST(StepTiming, DisagreeingRepeatsGetATieBreakerAndANote) {
  auto dir = tptest::temp_dir("time_disagree");
  ProfileOptions o;
  o.time_template = CommandTemplate(counting_time_cmd(dir, {0.0150, 0.0100, 0.0102}));
  auto rec = run_trial(CommandTemplate("false"), {32, 1, 0}, o);
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->status, TrialStatus::kOk) << rec->reason;
  EXPECT_EQ(rec->timing->repeats, (std::vector<double>{0.0150, 0.0100, 0.0102}));
  EXPECT_DOUBLE_EQ(rec->timing->step_time_s, 0.0100);
  EXPECT_NEAR(rec->timing->spread, 0.25, 1e-9);  // half the 50% range
  EXPECT_NE(rec->note.find("interference"), std::string::npos) << rec->note;
}

// Consecutive time trials take their first runs in one round, then their
// other runs in turn (ProfileOptions::time_rounds); back to back without.
// Each trial is stored with all its runs, the first one's start as its own.
TEST(StepTiming, TimeTrialsTakeTheirFirstRunsInOneRound) {
  auto order_of_runs = [](bool rounds) {
    auto dir = tptest::temp_dir(rounds ? "time_rounds" : "time_back_to_back");
    const auto log = dir / "runs";
    tptest::write_file(dir / "time.sh", "echo $1 >> " + log.string() + "; echo '" + step_line(0.01, 100) + "'");
    tptest::write_file(dir / "train.sh", "echo '{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1,\"metric\":0.5}'");
    ProfileOptions o;
    o.time_rounds = rounds;
    o.pin = false;
    o.time_template = CommandTemplate("bash " + (dir / "time.sh").string() + " {batch}");
    SampleStore store((dir / "s.db").string());
    Progress quiet(stderr, false, true);
    const std::vector<TrialKey> order{{32, 1, 0}, {64, 1, 0}, {128, 1, 0}, {32, 1, 1}};
    const ProfileSummary sum =
        run_profile(CommandTemplate("bash " + (dir / "train.sh").string()), order, store, o, quiet);
    EXPECT_EQ(sum.ok, 4);
    for (const TrialKey& k : {TrialKey{32, 1, 0}, TrialKey{64, 1, 0}, TrialKey{128, 1, 0}}) {
      auto rec = store.find(k);
      EXPECT_TRUE(rec && rec->timing && rec->timing->repeats.size() == 2u) << to_string(k);
      EXPECT_TRUE(rec && rec->wall_s > 0 && !rec->started_at.empty());
    }
    return tptest::read_file(log);
  };
  EXPECT_EQ(order_of_runs(true), "32\n64\n128\n32\n64\n128\n");
  EXPECT_EQ(order_of_runs(false), "32\n32\n64\n64\n128\n128\n");
}

// A time command that takes {workers} {batches}, logs them, and prints a line
// for each batch (its median b / 10^4 s, times `slow` on the run numbered
// `slow_run` for batch `slow_batch`), leaving out `missing`.
std::filesystem::path batches_time_cmd(const std::filesystem::path& dir, int missing = 0, int slow_batch = 0,
                                       int slow_run = 0, double slow = 1) {
  const std::string log = (dir / "runs").string(), n = (dir / "n").string();
  tptest::write_file(
      dir / "time.sh",
      "n=$(cat " + n + " 2>/dev/null || echo 0); echo $((n+1)) > " + n + "; echo \"$1 $2\" >> " + log +
          "; for b in ${2//,/ }; do [ $b = " + std::to_string(missing) + " ] && continue; "
          "f=1; [ $b = " + std::to_string(slow_batch) + " ] && [ $n = " + std::to_string(slow_run) +
          " ] && f=" + std::to_string(slow) + "; m=$(awk \"BEGIN{print $b / 10000 * $f}\"); "
          "echo \"{\\\"event\\\":\\\"step_timing\\\",\\\"batch\\\":$b,\\\"step_time_median_s\\\":$m,"
          "\\\"steps_per_epoch\\\":$((1000 / b))}\"; done");
  return dir / "time.sh";
}

// The time trials of one worker count run together where the time command
// takes {batches}: a run of each group is a repeat of each of its trials,
// in rounds of one run of each group (one group after the other without
// them); each trial keeps its own batch's line. Apart, a run per trial.
TEST(StepTiming, TheBatchesOfAWorkerCountAreTimedInOneRun) {
  auto runs_of = [](bool rounds, bool together) {
    auto dir = tptest::temp_dir(std::string("time_together") + (rounds ? "_rounds" : "") + (together ? "" : "_apart"));
    const auto script = batches_time_cmd(dir);
    tptest::write_file(dir / "train.sh", "echo '{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1,\"metric\":0.5}'");
    ProfileOptions o;
    o.time_rounds = rounds;
    o.time_batches_together = together;
    o.pin = false;
    o.time_template = CommandTemplate("bash " + script.string() + " {workers} {batches}");
    SampleStore store((dir / "s.db").string());
    Progress quiet(stderr, false, true);
    const std::vector<TrialKey> order{{32, 1, 0}, {64, 1, 0}, {32, 2, 0}, {64, 2, 0}, {32, 1, 1}};
    const ProfileSummary sum =
        run_profile(CommandTemplate("bash " + (dir / "train.sh").string()), order, store, o, quiet);
    EXPECT_EQ(sum.ok, 5);
    for (const TrialKey& k : {TrialKey{32, 1, 0}, TrialKey{64, 1, 0}, TrialKey{32, 2, 0}, TrialKey{64, 2, 0}}) {
      auto rec = store.find(k);
      if (!rec || !rec->timing) {
        ADD_FAILURE() << "no timing for " << to_string(k);
        continue;
      }
      EXPECT_EQ(rec->timing->repeats.size(), 2u) << to_string(k);
      EXPECT_NEAR(rec->timing->step_time_s, k.batch / 1e4, 1e-12) << to_string(k);
      EXPECT_EQ(rec->timing->steps_per_epoch, 1000 / k.batch);
      EXPECT_GT(rec->wall_s, 0);
    }
    return tptest::read_file(dir / "runs");
  };
  EXPECT_EQ(runs_of(true, true), "1 32,64\n2 32,64\n1 32,64\n2 32,64\n");
  EXPECT_EQ(runs_of(false, true), "1 32,64\n1 32,64\n2 32,64\n2 32,64\n");
  EXPECT_EQ(runs_of(true, false), "1 32\n1 64\n2 32\n2 64\n1 32\n1 64\n2 32\n2 64\n");
}

// Repeats of one batch that disagree bring one more run of its whole group,
// which every trial of the group keeps; a batch whose line a run left out
// is that trial's bad output, named, and the others stand.
TEST(StepTiming, ARunOfSeveralBatchesIsRepeatedOrFailedAsAWhole) {
  Progress quiet(stderr, false, true);
  const std::vector<TrialKey> order{{32, 1, 0}, {64, 1, 0}};
  auto profile = [&](const std::filesystem::path& dir, const std::filesystem::path& script) {
    ProfileOptions o;
    o.pin = false;
    o.time_template = CommandTemplate("bash " + script.string() + " {workers} {batches}");
    auto store = std::make_unique<SampleStore>((dir / "s.db").string());
    run_profile(CommandTemplate("false"), order, *store, o, quiet);
    return store;
  };
  auto dir = tptest::temp_dir("time_together_disagree");
  auto store = profile(dir, batches_time_cmd(dir, 0, 32, 1, 1.2));  // batch 32 20% slower in the second run
  EXPECT_EQ(tptest::read_file(dir / "runs"), "1 32,64\n1 32,64\n1 32,64\n");
  for (const TrialKey& k : order) {
    auto rec = store->find(k);
    ASSERT_TRUE(rec && rec->timing);
    EXPECT_EQ(rec->timing->repeats.size(), 3u) << to_string(k);
    EXPECT_NEAR(rec->timing->step_time_s, k.batch / 1e4, 1e-12);
  }
  EXPECT_NE(store->find(order[0])->note.find("interference"), std::string::npos);

  auto dir2 = tptest::temp_dir("time_together_missing");
  auto store2 = profile(dir2, batches_time_cmd(dir2, 64));
  auto ok = store2->find(order[0]), missing = store2->find(order[1]);
  ASSERT_TRUE(ok && missing);
  EXPECT_EQ(ok->status, TrialStatus::kOk);
  EXPECT_EQ(missing->status, TrialStatus::kBadOutput);
  EXPECT_NE(missing->reason.find("\"batch\":64"), std::string::npos) << missing->reason;
}

// A time trial whose steps spread to two speeds says so: its median moves with
// the share of slow steps. The CPU clock's line gives no percentiles, and a
// narrow spread says nothing.
TEST(StepTiming, WideStepsAreNoted) {
  auto dir = tptest::temp_dir("time_wide");
  auto run = [&](const std::string& name, double p10, double p90, const char* clock) {
    std::string line = step_line(0.004, 100);
    line.insert(line.size() - 1, ",\"step_time_p10_s\":" + std::to_string(p10) + ",\"step_time_p90_s\":" +
                                     std::to_string(p90) + ",\"step_cpu_median_s\":0.004");
    tptest::write_file(dir / name, "echo '" + line + "'");
    ProfileOptions o;
    o.step_clock = std::string(clock) == "cpu" ? StepClock::kCpu : StepClock::kWall;
    o.time_template = CommandTemplate("bash " + (dir / name).string() + " {batch}");
    auto rec = run_trial(CommandTemplate("false"), {32, 2, 0}, o);
    EXPECT_TRUE(rec && rec->status == TrialStatus::kOk);
    return rec ? rec->note : std::string();
  };
  const std::string wide = run("wide.sh", 0.0033, 0.0083, "wall");
  EXPECT_NE(wide.find("wide steps: p10 3.3 ms, p90 8.3 ms (x2.5)"), std::string::npos) << wide;
  EXPECT_EQ(run("narrow.sh", 0.0036, 0.0050, "wall").find("wide steps"), std::string::npos);
  EXPECT_EQ(run("cpu.sh", 0.0033, 0.0083, "cpu").find("wide steps"), std::string::npos);
}

// A time trial that stopped at its cap is kept and said; a line whose
// interval does not hold its median, or whose step count is past any count,
// is named as what is wrong with it, not as a missing line.
TEST(StepTiming, AnUnconvergedTrialIsSaidAndAnImpossibleLineIsNamed) {
  auto dir = tptest::temp_dir("time_unconverged");
  std::string line = step_line(0.01, 100);
  line.insert(line.size() - 1, ",\"converged\":false,\"step_ci_target\":0.02");
  tptest::write_file(dir / "time.sh", "echo '" + line + "'");
  ProfileOptions o;
  o.time_template = CommandTemplate("bash " + (dir / "time.sh").string() + " {batch} {workers}");
  auto rec = run_trial(CommandTemplate("false"), {32, 1, 0}, o);
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->status, TrialStatus::kOk) << rec->reason;
  // The kept repeat's interval, [0.0099, 0.0101] around 0.01: +-1.0%.
  EXPECT_NE(rec->note.find("stopped at its step cap or time limit before its median was known to +-2%: its interval "
                           "reached +-1.0%"),
            std::string::npos)
      << rec->note;
  auto outside = parse_trial_output(
      "{\"event\":\"step_timing\",\"step_time_median_s\":0.01,\"step_time_ci95_s\":[0.02,0.03],\"steps_per_epoch\":9}\n",
      true);
  EXPECT_NE(outside.problem.find("does not hold its median"), std::string::npos) << outside.problem;
  auto huge = parse_trial_output("{\"event\":\"step_timing\",\"step_time_median_s\":0.01,\"steps_per_epoch\":1e300}\n", true);
  EXPECT_NE(huge.problem.find("past any count"), std::string::npos) << huge.problem;
  auto nan = parse_trial_output("{\"event\":\"step_timing\",\"step_time_median_s\":-1,\"steps_per_epoch\":9}\n", true);
  EXPECT_NE(nan.problem.find("step_time_median_s is not a finite number > 0"), std::string::npos) << nan.problem;
}

TEST(StepTiming, TimeTrialsGiveTheirConfigurationsEpochTimeInTheSamples) {
  auto dir = tptest::temp_dir("time_store");
  SampleStore store((dir / "s.db").string());
  TrialRecord time;
  time.key = {32, 2, 0};
  time.epoch_time_s = 0.41;
  time.timing = StepTiming{0.004, 0.0039, 0.0041, 100, 0.01, 300, 0, {0.004, 0.0041}, 0.0125};
  store.put(time);
  TrialRecord train;
  train.key = {32, 2, 3};
  train.epoch_time_s = 0.9;  // whole epochs, warm-up and all
  train.metric = 0.95;
  train.metric_name = "accuracy";
  store.put(train);
  TrialRecord only_time = time;
  only_time.key = {64, 1, 0};
  store.put(only_time);

  SampleSet set = SampleStore((dir / "s.db").string()).samples();
  ASSERT_EQ(set.samples.size(), 2u);
  const Sample* trained = nullptr;
  const Sample* timed = nullptr;
  for (const auto& s : set.samples) (s.metric ? trained : timed) = &s;
  ASSERT_TRUE(trained && timed);
  EXPECT_NEAR(trained->epoch_time_s, 100 * 0.004 + 0.01, 1e-12);
  EXPECT_NEAR(*trained->time_spread, 0.0125, 1e-12);
  EXPECT_EQ(trained->epochs, 3);
  EXPECT_EQ(timed->batch, 64);
  EXPECT_EQ(timed->epochs, 0);
  EXPECT_FALSE(timed->metric);
  // The step timing survives the round trip through the store.
  auto back = SampleStore((dir / "s.db").string()).find({32, 2, 0});
  ASSERT_TRUE(back && back->timing);
  EXPECT_EQ(back->timing->repeats, (std::vector<double>{0.004, 0.0041}));
}

TEST(StepTiming, PinPlanGivesDisjointCpusOrNothing) {
  const auto cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  auto plan = pin_plan(int(cpus.size()), 1);
  ASSERT_EQ(plan.size(), cpus.size());
  std::set<int> used;
  for (const auto& p : plan) {
    ASSERT_EQ(p.size(), 1u);
    EXPECT_TRUE(used.insert(p[0]).second);
  }
  EXPECT_TRUE(pin_plan(int(cpus.size()) + 1, 1).empty());
  EXPECT_TRUE(pin_plan(1, int(cpus.size()) + 1).empty());
}

TEST(StepTiming, APinnedProcessRunsOnItsCpu) {
  const int cpu = allowed_cpus().back();
  ProcessGroupOptions o;
  o.cpus = {{cpu}};
  auto r = run_process_group({"grep Cpus_allowed_list /proc/self/status"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.stdout0.find(":\t" + std::to_string(cpu) + "\n"), std::string::npos) << r.stdout0;
}

// A pinned process is told, in TRAINPLAN_HELPER_CPUS, every CPU the
// profiler may use (its helpers may run there); an unpinned one is not.
TEST(StepTiming, APinnedProcessIsToldTheCpusItsHelpersMayUse) {
  const auto cpus = allowed_cpus();
  std::string all;
  for (int c : cpus) all += (all.empty() ? "" : ",") + std::to_string(c);
  ProcessGroupOptions pinned;
  pinned.cpus = {{cpus.back()}};
  auto r = run_process_group({"echo \"[${TRAINPLAN_HELPER_CPUS-unset}]\""}, pinned);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.stdout0, "[" + all + "]\n");
  if (std::getenv("TRAINPLAN_HELPER_CPUS")) return;  // set outside this test: inherited as it is
  auto u = run_process_group({"echo \"[${TRAINPLAN_HELPER_CPUS-unset}]\""}, ProcessGroupOptions{});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u.stdout0, "[unset]\n");
}

TEST(StepTiming, MoreWorkersThanCpusIsRecordedAsOversubscribed) {
  ProfileOptions o;
  const int too_many = int(allowed_cpus().size()) + 1;
  auto rec = run_trial(CommandTemplate("echo '{{\"event\":\"epoch\",\"epoch_time_s\":1}}'"), {8, too_many, 1}, o);
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->oversubscribed);
  EXPECT_NE(rec->note.find("oversubscribed"), std::string::npos);
  auto fits = run_trial(CommandTemplate("echo '{{\"event\":\"epoch\",\"epoch_time_s\":1}}'"), {8, 1, 1}, o);
  EXPECT_FALSE(fits->oversubscribed);
}

TEST(SamplesFile, ReadsAStoreACsvAndRefusesADirectory) {
  auto dir = tptest::temp_dir("samples_file");
  {
    SampleStore store((dir / "p.db").string());
    TrialRecord r;
    r.key = {16, 1, 2};
    r.epoch_time_s = 3.0;
    r.metric = 0.9;
    store.put(r);
  }
  EXPECT_EQ(read_samples((dir / "p.db").string()).samples.at(0).epoch_time_s, 3.0);
  tptest::write_file(dir / "s.csv", "batch,workers,epochs,epoch_time_s,metric\n16,1,2,3.5,0.9\n");
  EXPECT_EQ(read_samples((dir / "s.csv").string()).samples.at(0).epoch_time_s, 3.5);
  try {
    read_samples(dir.string());
    FAIL() << "a directory was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos) << e.what();
  }
  SampleStore empty((dir / "empty.db").string());
  EXPECT_THROW(read_samples((dir / "empty.db").string()), InputError);
  // A file that is not a store (empty, or text) is refused as one and left as it was.
  for (const std::string content : {"", "hello\n"}) {
    const auto f = tptest::write_file(dir / "not-a-store.db", content);
    EXPECT_THROW(SampleStore(f, SampleStore::Open::kExisting), InputError);
    EXPECT_EQ(tptest::read_file(f), content);
  }
  EXPECT_THROW(SampleStore((dir / "absent.db").string(), SampleStore::Open::kExisting), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir / "absent.db"));
}

TEST(StepTiming, PlansPutTimeTrialsFirst) {
  auto order = with_time_trials({{32, 1, 2}, {64, 2, 1}, {32, 1, 1}});
  EXPECT_EQ(order, (std::vector<TrialKey>{{32, 1, 0}, {64, 2, 0}, {32, 1, 2}, {64, 2, 1}, {32, 1, 1}}));
  // Every (b, r) timed; each global batch trained once per epoch count, on
  // the most workers: 64 = 32 x 2 (not 64 x 1), 128 = 64 x 2.
  auto plan = time_and_global_batch_plan({{32, 64}, {1, 2}, {1, 3}});
  EXPECT_EQ(plan, (std::vector<TrialKey>{{32, 1, 0}, {64, 1, 0}, {32, 2, 0}, {64, 2, 0},
                                        {32, 1, 1}, {32, 2, 1}, {64, 2, 1},
                                        {32, 1, 3}, {32, 2, 3}, {64, 2, 3}}));
  // Longest only: one training trial per global batch, at the most epochs.
  auto longest = time_and_global_batch_plan({{32, 64}, {1, 2}, {1, 3}}, /*longest_only=*/true);
  EXPECT_EQ(longest, (std::vector<TrialKey>{{32, 1, 0}, {64, 1, 0}, {32, 2, 0}, {64, 2, 0},
                                           {32, 1, 3}, {32, 2, 3}, {64, 2, 3}}));
}

TEST(StepTiming, UnusableStepFieldsAndSizesOnEpochLinesAreNoted) {
  // The second epoch's median is a string: its steps cannot be used, so none of the epochs' are, and that is said.
  const std::string text =
      "{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1.0,\"steps\":90,\"step_time_median_s\":0.01,"
      "\"train_samples\":900}\n"
      "{\"event\":\"epoch\",\"epoch\":2,\"epoch_time_s\":1.1,\"steps\":90,\"step_time_median_s\":\"0.01\","
      "\"train_samples\":-3}\n";
  auto out = parse_trial_output(text);
  EXPECT_TRUE(out.problem.empty()) << out.problem;
  EXPECT_FALSE(out.epoch_steps);
  EXPECT_DOUBLE_EQ(*out.mean_epoch_time_s, 1.05);
  EXPECT_EQ(out.dataset_size, 900);
  EXPECT_NE(out.note.find("step fields of 1 epoch line(s)"), std::string::npos) << out.note;
  EXPECT_NE(out.note.find("stdout line 2"), std::string::npos) << out.note;
  EXPECT_NE(out.note.find("train_samples is -3"), std::string::npos) << out.note;
  // Lines whose fields are all usable are read without a note.
  auto clean = parse_trial_output(
      "{\"event\":\"epoch\",\"epoch_time_s\":1.0,\"steps\":90,\"step_time_median_s\":0.01,\"train_samples\":900}\n");
  EXPECT_TRUE(clean.note.empty()) << clean.note;
  EXPECT_TRUE(clean.epoch_steps);
}

TEST(StepTiming, AProtocolLinesPrefixMayHoldBraces) {
  auto out = parse_trial_output("[rank{0}] " + step_line(0.004, 47, 0.002) + "\n", true);
  ASSERT_TRUE(out.problem.empty()) << out.problem;
  ASSERT_TRUE(out.step_timing);
  EXPECT_DOUBLE_EQ(out.step_timing->step_time_s, 0.004);
  auto epoch = parse_trial_output("{host} {\"event\":\"epoch\",\"epoch_time_s\":2.5,\"metric\":0.5}\n");
  ASSERT_TRUE(epoch.mean_epoch_time_s);
  EXPECT_DOUBLE_EQ(*epoch.mean_epoch_time_s, 2.5);
}

// A budget bounds the time trials' runs too: on a fresh store nothing
// estimates them, so the first run of each group is taken, and a repeat
// whose group's last run would pass the budget is not started.
TEST(StepTiming, ABudgetBoundsTheTimeTrialsRuns) {
  auto dir = tptest::temp_dir("time_together_budget");
  const auto script = batches_time_cmd(dir);
  // Each run takes 0.6 s; a budget of 1 s holds the first run of the one group and not its repeat.
  tptest::write_file(dir / "slow.sh", "sleep 0.6; bash " + script.string() + " \"$@\"");
  ProfileOptions o;
  o.pin = false;
  o.time_repeats = 3;
  o.budget_s = 1.0;
  o.time_template = CommandTemplate("bash " + (dir / "slow.sh").string() + " {workers} {batches}");
  SampleStore store((dir / "s.db").string());
  Progress quiet(stderr, false, true);
  run_profile(CommandTemplate("false"), {{32, 1, 0}, {64, 1, 0}}, store, o, quiet);
  EXPECT_EQ(tptest::read_file(dir / "runs"), "1 32,64\n");
  auto rec = store.find(TrialKey{32, 1, 0});
  ASSERT_TRUE(rec && rec->timing);
  EXPECT_EQ(rec->timing->repeats.size(), 1u);
}

// An epoch line with an unusable time beside usable ones is named in the note
// (line and field), so that a trial short of its epochs says why.
TEST(StepTiming, AnEpochLineWithAnUnusableTimeIsNamed) {
  auto out = parse_trial_output("{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1e300,\"metric\":0.5}\n"
                                "{\"event\":\"epoch\",\"epoch\":2,\"epoch_time_s\":2,\"metric\":0.7}\n");
  EXPECT_EQ(out.epochs_reported, 1);
  EXPECT_NE(out.note.find("stdout line 1: epoch_time_s is 1e+300"), std::string::npos) << out.note;
}

// A metric is kept at the epoch its line names: a garbled line before it
// leaves that epoch without one rather than taking its place.
TEST(StepTiming, EpochMetricsStandAtTheEpochTheirLineNames) {
  auto out = parse_trial_output("{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1,\"metric\":0.5\n"
                                "{\"event\":\"epoch\",\"epoch\":2,\"epoch_time_s\":1,\"metric\":0.7}\n");
  ASSERT_EQ(out.epoch_metrics.size(), 2u);
  EXPECT_FALSE(out.epoch_metrics[0].has_value());
  EXPECT_DOUBLE_EQ(*out.epoch_metrics[1], 0.7);
}
