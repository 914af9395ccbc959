// Unit tests of the profiler's pure parts: the JSON-lines protocol, command
// templates, launch plans, sampling plans and the trial cost estimator.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <set>

#include "core/error.h"
#include "profile/command_template.h"
#include "profile/launcher.h"
#include "profile/profile_plan.h"
#include "profile/trial.h"

using namespace trainplan;
using namespace trainplan::profile;

TEST(ProfileOutput, MeanEpochTimeAndLastMetric) {
  auto out = parse_trial_output(
      "loading data...\n"
      "{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":2.0,\"metric\":0.5,\"metric_name\":\"accuracy\"}\n"
      "some log line with {braces}\n"
      "{\"event\":\"epoch\",\"epoch\":2,\"epoch_time_s\":4.0,\"metric\":0.75,\"metric_name\":\"accuracy\",\"train_samples\":6000}\n"
      "{\"event\":\"done\"}\n");
  EXPECT_TRUE(out.problem.empty()) << out.problem;
  EXPECT_EQ(out.epochs_reported, 2);
  EXPECT_DOUBLE_EQ(*out.mean_epoch_time_s, 3.0);
  EXPECT_DOUBLE_EQ(*out.last_metric, 0.75);
  EXPECT_EQ(out.metric_name, "accuracy");
  EXPECT_EQ(out.dataset_size.value_or(0), 6000);
  EXPECT_TRUE(out.saw_done);
  // The learning curve: the metric after each epoch, in order.
  ASSERT_EQ(out.epoch_metrics.size(), 2u);
  EXPECT_DOUBLE_EQ(*out.epoch_metrics[0], 0.5);
  EXPECT_DOUBLE_EQ(*out.epoch_metrics[1], 0.75);
}

TEST(ProfileOutput, RanksPrefixedLinesStillParse) {
  auto out = parse_trial_output("[rank0] {\"event\":\"epoch\",\"epoch_time_s\":1.5}\n");
  EXPECT_EQ(out.epochs_reported, 1);
  EXPECT_FALSE(out.last_metric.has_value());
  ASSERT_EQ(out.epoch_metrics.size(), 1u);
  EXPECT_FALSE(out.epoch_metrics[0].has_value());
}

// A diverged run printed by Python's json.dumps: NaN and Infinity are read
// as null, said in the note, and an epoch time that is NaN is the problem named.
TEST(ProfileOutput, NanFieldsAreReadAsAbsentAndSaid) {
  auto out = parse_trial_output(
      "{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1.5,\"metric\":0.5}\n"
      "{\"event\":\"epoch\",\"epoch\":2,\"epoch_time_s\":1.5,\"metric\":NaN}\n");
  EXPECT_TRUE(out.problem.empty()) << out.problem;
  EXPECT_EQ(out.epochs_reported, 2);
  EXPECT_FALSE(out.last_metric.has_value());
  EXPECT_NE(out.note.find("first: epoch 2"), std::string::npos) << out.note;
  EXPECT_TRUE(out.metric_diverged);
  // An overflow that the run came back from is said, but is no divergence.
  auto back = parse_trial_output(
      "{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1.5,\"metric\":Infinity}\n"
      "{\"event\":\"epoch\",\"epoch\":2,\"epoch_time_s\":1.5,\"metric\":40.1}\n");
  EXPECT_FALSE(back.metric_diverged);
  EXPECT_NE(back.note.find("first: epoch 1"), std::string::npos) << back.note;
  auto bad = parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":Infinity,\"metric\":0.5}\n");
  EXPECT_EQ(bad.epochs_reported, 0);
  EXPECT_NE(bad.problem.find("1 written as NaN or Infinity"), std::string::npos) << bad.problem;
}

// A metric sent as a string is not a number: taken as none, and said so, or
// plan would call the samples time-only with no hint why.
TEST(ProfileOutput, AMetricThatIsNotANumberIsSaid) {
  auto out = parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":1.5,\"metric\":\"0.9\"}\n");
  EXPECT_TRUE(out.problem.empty()) << out.problem;
  EXPECT_FALSE(out.last_metric.has_value());
  EXPECT_FALSE(out.metric_diverged);
  EXPECT_NE(out.note.find("the metric of 1 epoch(s) was not a number"), std::string::npos) << out.note;
  EXPECT_EQ(out.note.find("diverge"), std::string::npos) << out.note;
  EXPECT_TRUE(parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":1.5}\n").note.empty());
}

// A metric past +-1e12 would overflow the fits: taken as none, and said so.
TEST(ProfileOutput, AMetricPastATrillionIsTakenAsNoneAndSaid) {
  auto out = parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":1.5,\"metric\":1e308}\n"
                                "{\"event\":\"epoch\",\"epoch_time_s\":1.5,\"metric\":0.7}\n");
  EXPECT_TRUE(out.problem.empty()) << out.problem;
  EXPECT_EQ(out.epochs_reported, 2);
  ASSERT_EQ(out.epoch_metrics.size(), 2u);
  EXPECT_FALSE(out.epoch_metrics[0].has_value());
  EXPECT_EQ(out.last_metric, 0.7);
  EXPECT_NE(out.note.find("beyond +-1e+12"), std::string::npos) << out.note;
}

// An epoch line naming a key twice is skipped, as `watch` skips it, and said.
TEST(ProfileOutput, AnEpochLineNamingAKeyTwiceIsSkippedAndSaid) {
  auto out = parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":1.5,\"metric\":0.8,\"metric\":0.1}\n"
                                "{\"event\":\"epoch\",\"epoch_time_s\":1.5,\"metric\":0.7}\n");
  EXPECT_EQ(out.epochs_reported, 1);
  EXPECT_EQ(out.last_metric, 0.7);
  EXPECT_NE(out.note.find("named a key twice"), std::string::npos) << out.note;
  EXPECT_NE(out.note.find("'metric'"), std::string::npos) << out.note;
}

// A time trial whose steps make an epoch past 1e9 s (or past a double's
// range), or under 1e-9 s (a denormal median), is refused with its reason, as
// an epoch line's time is: the store would keep a time no reader takes back.
TEST(ProfileOutput, AStepTimingPastABillionSecondsAnEpochIsRefused) {
  auto out = parse_trial_output(
      "{\"event\":\"step_timing\",\"step_time_median_s\":1e300,\"steps_per_epoch\":1000000}\n", true);
  EXPECT_FALSE(out.step_timing);
  EXPECT_NE(out.problem.find("outside [1e-09, 1e+09] s"), std::string::npos) << out.problem;
  auto tiny = parse_trial_output(
      "{\"event\":\"step_timing\",\"step_time_median_s\":1e-320,\"steps_per_epoch\":100}\n", true);
  EXPECT_FALSE(tiny.step_timing);
  EXPECT_NE(tiny.problem.find("outside [1e-09, 1e+09] s"), std::string::npos) << tiny.problem;
  // In an epoch line the step fields are refused; its epoch time is kept.
  auto epoch = parse_trial_output("{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":2.5,\"steps\":100,"
                                  "\"step_time_median_s\":1e-320}\n");
  EXPECT_EQ(epoch.epochs_reported, 1);
  EXPECT_FALSE(epoch.epoch_steps);
  EXPECT_NE(epoch.note.find("outside [1e-09, 1e+09] s"), std::string::npos) << epoch.note;
  auto fine = parse_trial_output("{\"event\":\"step_timing\",\"step_time_median_s\":0.01,\"steps_per_epoch\":100}\n",
                                 true);
  EXPECT_TRUE(fine.step_timing);
}

// Two ranks printing their epochs: the numbers repeat, which says so.
TEST(ProfileOutput, RepeatedEpochNumbersAreCounted) {
  auto out = parse_trial_output(
      "{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1.5}\n{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1.5}\n"
      "{\"event\":\"epoch\",\"epoch\":2,\"epoch_time_s\":1.5}\n{\"event\":\"epoch\",\"epoch\":2,\"epoch_time_s\":1.5}\n");
  EXPECT_EQ(out.epochs_reported, 4);
  EXPECT_EQ(out.repeated_epochs, 2);
  EXPECT_EQ(parse_trial_output("{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1.5}\n").repeated_epochs, 0);
}

TEST(ProfileOutput, ProblemsAreNamed) {
  // None of these outputs is usable: no epoch with a time was counted.
  for (const char* out : {"hello\nworld\n", "{\"event\":\"done\"}\n", "{\"event\":\"epoch\",\"epoch_time_s\":-1}\n"}) {
    auto o = parse_trial_output(out);
    EXPECT_EQ(o.epochs_reported, 0) << out;
    EXPECT_FALSE(o.mean_epoch_time_s.has_value()) << out;
    EXPECT_FALSE(o.problem.empty()) << out;
  }
  EXPECT_TRUE(parse_trial_output("{\"event\":\"done\"}\n").saw_done);
  EXPECT_TRUE(parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":1.5}\n").problem.empty());
  // The problem names what the trainer's output lacked.
  EXPECT_NE(parse_trial_output("hello\nworld\n").problem.find("no JSON lines"), std::string::npos);
  EXPECT_NE(parse_trial_output("{\"event\":\"done\"}\n").problem.find("no {\"event\":\"epoch\""), std::string::npos);
  EXPECT_NE(parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":-1}\n").problem.find("finite positive"),
            std::string::npos);
  EXPECT_NE(parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":\"fast\"}\n{broken json\n").problem.find("finite positive"),
            std::string::npos);
  // And where: the first bad epoch line's stdout line and value, the first unreadable protocol line.
  EXPECT_NE(parse_trial_output("noise\n{\"event\":\"epoch\",\"epoch_time_s\":\"fast\"}\n")
                .problem.find("stdout line 2: epoch_time_s is \"fast\""),
            std::string::npos);
  const auto overflow = parse_trial_output("{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1e400}\n");
  EXPECT_NE(overflow.problem.find("could be read as JSON"), std::string::npos) << overflow.problem;
  EXPECT_NE(overflow.problem.find("stdout line 1"), std::string::npos) << overflow.problem;
  const auto cut = parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":1.5}\n{\"event\":\"epoch\",\"epoch_ti\n");
  EXPECT_TRUE(cut.problem.empty());
  EXPECT_NE(cut.note.find("1 line(s) naming an \"event\" were not JSON"), std::string::npos) << cut.note;
  // Beside another JSON line, the unreadable epoch line is still named.
  const auto beside = parse_trial_output("{\"event\":\"start\"}\n{\"event\":\"epoch\",\"epoch_time_s\":1e400}\n");
  EXPECT_NE(beside.problem.find("stdout line 2"), std::string::npos) << beside.problem;
  // An epoch of more than 1e9 s (30 years) is no measurement.
  const auto eon = parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":1e160}\n");
  EXPECT_EQ(eon.epochs_reported, 0);
  EXPECT_NE(eon.problem.find("at most 1e9 s"), std::string::npos) << eon.problem;
}

TEST(ProfileStatus, RoundTrips) {
  for (auto s : {TrialStatus::kOk, TrialStatus::kFailed, TrialStatus::kTimeout, TrialStatus::kBadOutput})
    EXPECT_EQ(parse_status(to_string(s)), s);
  EXPECT_FALSE(parse_status("weird").has_value());
}

TEST(ProfileTemplate, ExpandsPlaceholdersAndLiteralBraces) {
  CommandTemplate t("run --b {batch} --r {workers} --k {rank} --json '{{}}'");
  EXPECT_TRUE(t.per_rank());
  EXPECT_FALSE(t.uses("nodes"));
  EXPECT_EQ(t.expand({{"batch", "32"}, {"workers", "2"}, {"rank", "1"}}), "run --b 32 --r 2 --k 1 --json '{}'");
  EXPECT_FALSE(CommandTemplate("torchrun --nproc-per-node {workers} train.py").per_rank());
  // A multi-line example pasted as shown (with or without a trailing backslash) is one command.
  EXPECT_EQ(CommandTemplate("python3 train.py --batch {batch}\n  --epochs {epochs}").expand({{"batch", "8"}, {"epochs", "2"}}),
            "python3 train.py --batch 8   --epochs 2");
  EXPECT_EQ(CommandTemplate("python3 train.py \\\r\n--epochs {epochs}").expand({{"epochs", "2"}}),
            "python3 train.py  --epochs 2");
}

TEST(ProfileTemplate, RejectsUnknownAndUnclosedPlaceholders) {
  EXPECT_THROW(CommandTemplate("run {batchsize}"), InputError);
  EXPECT_THROW(CommandTemplate("run {batch"), InputError);
  EXPECT_THROW(CommandTemplate("   "), InputError);
  try {
    CommandTemplate("run {bogus}");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("{bogus}"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("{master_port}"), std::string::npos);
  }
}

TEST(ProfileLaunch, LocalStartsOneProcessPerRank) {
  CommandTemplate t("w {rank} of {workers} at {master_addr}:{master_port}");
  LaunchSettings s;
  auto lp = plan_launch(t, {16, 3, 1}, s, 4000);
  ASSERT_EQ(lp.commands.size(), 3u);
  EXPECT_EQ(lp.commands[0], "w 0 of 3 at 127.0.0.1:4000");
  EXPECT_EQ(lp.commands[2], "w 2 of 3 at 127.0.0.1:4000");
  EXPECT_FALSE(lp.label_filter);
  auto one = plan_launch(CommandTemplate("torchrun --nproc {workers} x.py"), {16, 4, 1}, s, 4000);
  EXPECT_EQ(one.commands.size(), 1u);
}

TEST(ProfileLaunch, AWrapRunsTheProgramThroughItsClientAndRecordsThePlainCommand) {
  LaunchSettings s;
  s.wrap = {"'/b/trainer'", "'/b/forkrun' '/t/socket'"};
  auto lp = plan_launch(CommandTemplate("'/b/trainer' --rank {rank} --workers {workers}"), {16, 2, 1}, s, 4000);
  ASSERT_EQ(lp.commands.size(), 2u);
  EXPECT_EQ(lp.commands[1], "'/b/forkrun' '/t/socket' '/b/trainer' --rank 1 --workers 2");
  EXPECT_EQ(lp.display, "'/b/trainer' --rank 0 --workers 2");
  // Another program, even one whose name starts the same, runs as written.
  auto other = plan_launch(CommandTemplate("'/b/trainer'2 --rank {rank}"), {16, 1, 1}, s, 4000);
  EXPECT_EQ(other.commands[0], "'/b/trainer'2 --rank 0");
  s.kind = LauncherKind::kSlurm;  // ranks on other nodes cannot reach a local socket
  auto slurm = plan_launch(CommandTemplate("'/b/trainer' --rank {rank}"), {16, 2, 1}, s, 4000);
  EXPECT_EQ(slurm.commands[0].find("forkrun"), std::string::npos) << slurm.commands[0];
}

TEST(ProfileLaunch, SlurmUsesSrunAndProcId) {
  CommandTemplate t("w {rank} b {batch} n {nodes}");
  LaunchSettings s;
  s.kind = LauncherKind::kSlurm;
  s.workers_per_node = 2;
  s.srun_args = {"--partition=debug"};
  auto lp = plan_launch(t, {64, 3, 2}, s, 4000);
  ASSERT_EQ(lp.commands.size(), 1u);
  const auto& c = lp.commands[0];
  EXPECT_EQ(c.rfind("srun --ntasks=3", 0), 0u) << c;
  EXPECT_NE(c.find("--label"), std::string::npos);
  EXPECT_NE(c.find("'--partition=debug'"), std::string::npos);
  // The nodes {nodes} says, --workers-per-node ranks on each.
  EXPECT_NE(c.find(" --nodes=2 --ntasks-per-node=2 "), std::string::npos) << c;
  EXPECT_TRUE(lp.label_filter);
  // On the node, bash puts the task's rank where {rank} was, inside quotes too, and runs the script with bash.
  auto quoted = plan_launch(CommandTemplate("echo '{rank}' \"r{rank}\" {batch}; [[ {rank} -ge 0 ]] && echo bash"),
                            {64, 3, 2}, s, 4000);
  const std::string& q = quoted.commands[0];
  const size_t on_node = q.find(" /bin/bash -c ");
  ASSERT_NE(on_node, std::string::npos) << q;
  FILE* p = popen(("SLURM_PROCID=5" + q.substr(on_node)).c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  for (int ch; (ch = fgetc(p)) != EOF;) out += char(ch);
  EXPECT_EQ(pclose(p), 0);
  EXPECT_EQ(out, "5 r5 64\nbash\n");
}

TEST(ProfileLaunch, Rank0LinesKeepsOnlyTaskZero) {
  EXPECT_EQ(rank0_lines("0: a\n1: b\n 0: c\n10: d\nnoise\n"), "a\nc\n");
}

TEST(ProfileLaunch, ShellQuoteSurvivesSingleQuotes) { EXPECT_EQ(shell_quote("it's"), "'it'\\''s'"); }

TEST(ProfileLaunch, FreePortIsUsable) {
  int p = free_loopback_port();
  EXPECT_GT(p, 0);
  EXPECT_LT(p, 65536);
}

TEST(ProfilePlan, GridIsTheFullProduct) {
  auto g = normalise({{64, 16, 16, 32}, {2, 1}, {1}});
  EXPECT_EQ(g.batches, (std::vector<int>{16, 32, 64}));
  auto t = grid_trials(g);
  EXPECT_EQ(t.size(), 6u);
  EXPECT_EQ(t.front(), (TrialKey{16, 1, 1}));
  auto p = paper_grid();
  EXPECT_EQ(grid_trials(p).size(), 240u);
  EXPECT_EQ(p.batches.front(), 16);
  EXPECT_EQ(p.batches.back(), 256);
  EXPECT_THROW(normalise({{}, {1}, {1}}), InputError);
  EXPECT_THROW(normalise({{0}, {1}, {1}}), InputError);
}

TEST(ProfilePlan, BudgetOrderStartsAtCornersAndIsAPermutation) {
  GridSpec g = normalise({{16, 32, 64, 128}, {1, 2, 4}, {1, 3, 5}});
  auto order = budget_order(g);
  auto grid = grid_trials(g);
  ASSERT_EQ(order.size(), grid.size());
  EXPECT_EQ(std::set<TrialKey>(order.begin(), order.end()), std::set<TrialKey>(grid.begin(), grid.end()));
  std::set<TrialKey> first4(order.begin(), order.begin() + 4);
  EXPECT_EQ(first4, (std::set<TrialKey>{{16, 1, 1}, {128, 1, 1}, {16, 4, 1}, {128, 4, 1}}));
  EXPECT_EQ(order[4], (TrialKey{16, 1, 5}));
  EXPECT_EQ(order[5], (TrialKey{128, 1, 5}));
}

TEST(ProfilePlan, ParsesListsAndDurations) {
  EXPECT_EQ(parse_int_list("1, 2,4", "--workers"), (std::vector<int>{1, 2, 4}));
  EXPECT_THROW(parse_int_list("1,x", "--workers"), InputError);
  EXPECT_THROW(parse_int_list("1.5", "--workers"), InputError);
  EXPECT_DOUBLE_EQ(parse_duration("180s", "--budget"), 180);
  EXPECT_DOUBLE_EQ(parse_duration("3m", "--budget"), 180);
  EXPECT_DOUBLE_EQ(parse_duration("1h30m", "--budget"), 5400);
  EXPECT_DOUBLE_EQ(parse_duration("90", "--budget"), 90);
  EXPECT_DOUBLE_EQ(parse_duration("60d", "--deadline"), 60 * 86400.0);
  EXPECT_DOUBLE_EQ(parse_duration("1d12h", "--deadline"), 36 * 3600.0);
  EXPECT_DOUBLE_EQ(parse_duration("2w", "--deadline"), 14 * 86400.0);
  EXPECT_DOUBLE_EQ(parse_duration("1w3d", "--deadline"), 10 * 86400.0);
  EXPECT_THROW(parse_duration("3d1w", "--deadline"), InputError);
  EXPECT_THROW(parse_duration(".", "--budget"), InputError);
  EXPECT_THROW(parse_duration("1.2.3h", "--budget"), InputError);
  EXPECT_THROW(parse_duration("soon", "--budget"), InputError);
  EXPECT_THROW(parse_duration("3x", "--budget"), InputError);
  EXPECT_THROW(parse_duration("0", "--budget"), InputError);
  // A trailing bare number could be minutes or seconds; units once each, largest first.
  for (const char* text : {"2h30", "1h30", "3m3m", "1s1h", "30s2m", ""}) EXPECT_THROW(parse_duration(text, "--deadline"), InputError) << text;
  EXPECT_DOUBLE_EQ(parse_duration("1.5s", "--stall"), 1.5);
}

TEST(ProfileCost, RecoversAPowerLawAndOverhead) {
  CostEstimator est;
  EXPECT_FALSE(est.estimate({16, 1, 1}).has_value());
  // t_epoch = 8 * b^-0.5 * r^-1, overhead 3 s.
  for (int b : {16, 64, 256})
    for (int r : {1, 2, 4}) {
      TrialRecord rec;
      rec.key = {b, r, 2};
      rec.epoch_time_s = 8 / std::sqrt(b) / r;
      rec.wall_s = 3 + 2 * *rec.epoch_time_s;
      est.add(rec);
    }
  double want = 3 + 5 * 8 / std::sqrt(32.0) / 3;
  EXPECT_NEAR(*est.estimate({32, 3, 5}), want, 0.05 * want);
}

// A resumed store's trials taken at once fit as the same trials one by one.
TEST(ProfileCost, TrialsTakenAtOnceFitAsOneByOne) {
  CostEstimator one_by_one, at_once;
  std::vector<TrialRecord> records;
  for (int b : {16, 64, 256})
    for (int r : {1, 2, 4}) {
      TrialRecord rec;
      rec.key = {b, r, 2};
      rec.epoch_time_s = 8 / std::sqrt(b) / r * (1 + 0.01 * r);
      rec.wall_s = 3 + 2 * *rec.epoch_time_s;
      records.push_back(rec);
      one_by_one.add(rec);
    }
  at_once.add_all(records);
  EXPECT_EQ(at_once.count(), one_by_one.count());
  for (const TrialKey k : {TrialKey{32, 3, 5}, TrialKey{16, 1, 0}, TrialKey{512, 8, 1}})
    EXPECT_DOUBLE_EQ(*at_once.estimate(k), *one_by_one.estimate(k));
}

TEST(ProfileCost, FailuresOnlyGiveTheirMeanWallTime) {
  CostEstimator est;
  TrialRecord a;
  a.status = TrialStatus::kTimeout;
  a.wall_s = 10;
  est.add(a);
  EXPECT_DOUBLE_EQ(*est.estimate({16, 1, 1}), 10);
}

// What a line cannot say is said: an epoch line that names a key twice is
// the reason when nothing else was read, and a metric name with control
// characters (a NUL would cut every message quoting it) is not taken.
TEST(ProfileOutput, TwiceNamedKeysAndControlCharactersInNamesAreSaid) {
  auto twice = parse_trial_output("{\"event\":\"epoch\",\"epoch_time_s\":1,\"epoch_time_s\":2}\n");
  EXPECT_NE(twice.problem.find("named a key twice"), std::string::npos) << twice.problem;
  auto nul = parse_trial_output(
      "{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1.5,\"metric\":0.5,\"metric_name\":\"acc\\u0000x\"}\n");
  EXPECT_EQ(nul.epochs_reported, 1);
  EXPECT_TRUE(nul.metric_name.empty()) << nul.metric_name;
  EXPECT_NE(nul.note.find("control characters"), std::string::npos) << nul.note;
}

// A Slurm trial's failure is said from srun's and slurmstepd's own lines:
// the first task that ended badly (not one --kill-on-bad-exit terminated),
// else a cancelled step and its cause, else a job srun could not start.
TEST(ProfileLaunch, SlurmFailuresAreReadFromSrunsMessages) {
  const std::string cancel = "slurmstepd: error: *** STEP 12.0 ON vm CANCELLED AT 2026-12-07T01:00:00 ***\n";
  EXPECT_EQ(slurm_failure("srun: error: vm: task 1: Exited with exit code 3\n" + cancel +
                          "srun: error: vm: task 0: Terminated\n"),
            "rank 1 exited with status 3");
  EXPECT_EQ(slurm_failure("srun: error: vm: tasks 0-1: Exited with exit code 1\n" + cancel), "ranks 0-1 exited with status 1");
  EXPECT_EQ(slurm_failure("srun: error: vm: task 0: Terminated\nsrun: error: vm: task 2: Segmentation fault (core "
                          "dumped)\n" + cancel),
            "rank 2: Segmentation fault (core dumped)");
  EXPECT_EQ(slurm_failure("srun: error: vm: task 0: Terminated\n" + cancel),
            "the Slurm job step was cancelled (scancel, or a limit of the job)");
  EXPECT_EQ(slurm_failure("slurmstepd: error: *** STEP 7.0 ON vm CANCELLED AT 2026-12-07T01:00:00 DUE TO TIME LIMIT "
                          "***\n"),
            "the Slurm job step was cancelled due to time limit");
  EXPECT_EQ(slurm_failure("srun: error: Unable to allocate resources: Invalid partition name specified\n"),
            "srun could not start the job: Unable to allocate resources: Invalid partition name specified");
  EXPECT_FALSE(slurm_failure("some other text\n").has_value());
}

// A trial that timed out in Slurm's queue says so, with srun's reason where
// it gave one; one that was allocated and then ran out of time does not.
TEST(ProfileLaunch, ATrialThatNeverLeftSlurmsQueueSaysSo) {
  const auto impossible = slurm_never_started(
      "srun: Requested partition configuration not available now\nsrun: job 149 queued and waiting for resources\n");
  ASSERT_TRUE(impossible.has_value());
  EXPECT_NE(impossible->find("never left the queue (srun: Requested partition configuration not available now)"),
            std::string::npos)
      << *impossible;
  EXPECT_NE(impossible->find("--workers-per-node"), std::string::npos) << *impossible;
  const auto busy = slurm_never_started("srun: job 150 queued and waiting for resources\n");
  ASSERT_TRUE(busy.has_value());
  EXPECT_NE(busy->find("inside an allocation"), std::string::npos) << *busy;
  EXPECT_FALSE(slurm_never_started("srun: job 151 queued and waiting for resources\n"
                                   "srun: job 151 has been allocated resources\n")
                   .has_value());
  EXPECT_FALSE(slurm_never_started("").has_value());
}
