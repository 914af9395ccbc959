// The parallel-layout placeholders of command templates ({tp} {pp} {dp}
// {micro_batch} {global_batch}), the launch of a transformer configuration,
// the reading of its iteration_timing line, and one real run of a layout
// trial through a shell command.
#include <gtest/gtest.h>

#include "profile/command_template.h"
#include "profile/launcher.h"
#include "profile/layout_trial.h"
#include "profile/trial.h"

using namespace trainplan::profile;

TEST(ProfileLayout, PlaceholdersAreKnown) {
  CommandTemplate t("x --tp {tp} --pp {pp} --dp {dp} --mb {micro_batch} --gb {global_batch}");
  for (const char* name : {"tp", "pp", "dp", "micro_batch", "global_batch"}) EXPECT_TRUE(t.uses(name)) << name;
  EXPECT_FALSE(t.per_rank());
}

TEST(ProfileLayout, ALayoutStartsTpTimesPpTimesDpRanks) {
  CommandTemplate t("r{rank}/{workers} tp{tp} pp{pp} dp{dp} mb{micro_batch} gb{global_batch} b{batch} :{master_port}");
  LaunchSettings s;
  LayoutKey key{2, 2, 1, 4, 16};
  EXPECT_EQ(key.workers(), 4);
  auto lp = plan_layout_launch(t, key, s, 4100);
  ASSERT_EQ(lp.commands.size(), 4u);
  EXPECT_EQ(lp.commands[0], "r0/4 tp2 pp2 dp1 mb4 gb16 b4 :4100");
  EXPECT_EQ(lp.commands[3], "r3/4 tp2 pp2 dp1 mb4 gb16 b4 :4100");
  EXPECT_EQ(to_string(key), "tp=2 pp=2 dp=1 mb=4 gb=16");
  // Without {rank} the template is a launcher (torchrun, Megatron's scripts): started once.
  auto once = plan_layout_launch(CommandTemplate("torchrun --nproc-per-node {workers} pretrain_gpt.py "
                                                 "--tensor-model-parallel-size {tp}"),
                                 key, s, 4100);
  ASSERT_EQ(once.commands.size(), 1u);
  EXPECT_EQ(once.commands[0], "torchrun --nproc-per-node 4 pretrain_gpt.py --tensor-model-parallel-size 2");
}

TEST(ProfileLayout, SlurmLaunchNamesTheLayout) {
  LaunchSettings s;
  s.kind = LauncherKind::kSlurm;
  auto lp = plan_layout_launch(CommandTemplate("t {tp} {rank}"), LayoutKey{2, 1, 2, 1, 8}, s, 4000);
  ASSERT_EQ(lp.commands.size(), 1u);
  EXPECT_EQ(lp.commands[0].rfind("srun --ntasks=4", 0), 0u) << lp.commands[0];
  EXPECT_NE(lp.commands[0].find("trainplan-tp2-pp1-dp2-mb1"), std::string::npos) << lp.commands[0];
  EXPECT_NE(lp.commands[0].find("'t 2 @TRAINPLAN_RANK@'"), std::string::npos) << lp.commands[0];
  EXPECT_NE(lp.commands[0].find("$SLURM_PROCID"), std::string::npos) << lp.commands[0];
}

TEST(ProfileLayout, DataParallelTrialsFillTheLayoutPlaceholders) {
  // A data-parallel trial of `trainplan profile` is tp = pp = 1, dp = workers.
  CommandTemplate t("tp{tp} pp{pp} dp{dp} mb{micro_batch} gb{global_batch}");
  auto lp = plan_launch(t, TrialKey{32, 3, 1}, LaunchSettings{}, 4000);
  ASSERT_EQ(lp.commands.size(), 1u);
  EXPECT_EQ(lp.commands[0], "tp1 pp1 dp3 mb32 gb96");
}

TEST(ProfileLayout, ParsesTheLastIterationTimingLine) {
  auto t = parse_layout_timing(
      "noise\n{\"event\":\"iteration\",\"loss\":3}\n"
      "{\"event\":\"iteration_timing\",\"iteration_time_s\":0.5,\"peak_memory_bytes\":1024}\n"
      "[rank0]: {\"event\":\"iteration_timing\",\"iteration_time_s\":0.25}\n{\"event\":\"done\"}\n");
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->iteration_time_s, 0.25);
  EXPECT_FALSE(t->peak_memory_bytes);  // the last line has none
  EXPECT_FALSE(parse_layout_timing("{\"event\":\"iteration_timing\",\"iteration_time_s\":0}\n"));
  EXPECT_FALSE(parse_layout_timing("{\"event\":\"iteration_timing\"}\n{not json\n"));
  EXPECT_FALSE(parse_layout_timing(""));
  // A logger's prefix may hold braces of its own.
  auto prefixed = parse_layout_timing("[rank{3}] {\"event\":\"iteration_timing\",\"iteration_time_s\":0.75}\n");
  ASSERT_TRUE(prefixed);
  EXPECT_DOUBLE_EQ(prefixed->iteration_time_s, 0.75);
  // Each group's seconds: the mean over ranks; none where a list is missing, empty or bad.
  auto c = parse_layout_timing(
      "{\"event\":\"iteration_timing\",\"iteration_time_s\":0.5,\"tp_comm_s_per_rank\":[0.1,0.3],"
      "\"pp_comm_s_per_rank\":[],\"dp_comm_s_per_rank\":[0.1,-1]}\n");
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(*c->tp_comm_s, 0.2);
  EXPECT_FALSE(c->pp_comm_s);
  EXPECT_FALSE(c->dp_comm_s);
  EXPECT_FALSE(t->tp_comm_s);
}

TEST(ProfileLayout, SaysWhatIsWrongWithATimingLineItCannotTake) {
  std::string why;
  EXPECT_FALSE(parse_layout_timing("{\"event\":\"iteration_timing\",\"iteration_time_s\":NaN}\n", "iteration_time_s", &why));
  EXPECT_NE(why.find("not JSON"), std::string::npos) << why;
  EXPECT_FALSE(parse_layout_timing("{\"event\":\"iteration_timing\",\"iteration_time_s\":-0.5}\n", "iteration_time_s", &why));
  EXPECT_NE(why.find("is -0.5, not a number of seconds > 0"), std::string::npos) << why;
  EXPECT_FALSE(parse_layout_timing("{\"event\":\"iteration_timing\",\"iteration_time_s\":\"0.3\"}\n", "iteration_time_s", &why));
  EXPECT_NE(why.find("\"0.3\""), std::string::npos) << why;
  EXPECT_FALSE(parse_layout_timing("{\"event\":\"iteration_timing\"}\n", "iteration_time_s", &why));
  EXPECT_NE(why.find("has no iteration_time_s"), std::string::npos) << why;
  EXPECT_FALSE(parse_layout_timing("{\"event\":\"done\"}\n", "iteration_time_s", &why));
  EXPECT_TRUE(why.empty()) << why;  // no line meant to be one: the caller says "no line"
  // A memory figure no GPU holds is dropped, and said.
  auto t = parse_layout_timing("{\"event\":\"iteration_timing\",\"iteration_time_s\":0.3,\"peak_memory_bytes\":1e30}\n");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->peak_memory_bytes);
  EXPECT_NE(t->memory_ignored.find("ignored"), std::string::npos);
  t = parse_layout_timing("{\"event\":\"iteration_timing\",\"iteration_time_s\":0.3,\"peak_memory_bytes\":-7}\n");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->peak_memory_bytes);
  EXPECT_FALSE(t->memory_ignored.empty());
}

TEST(ProfileLayout, RunsATrialAndReportsFailures) {
  CommandTemplate ok(
      "echo '{{\"event\":\"iteration_timing\",\"iteration_time_s\":{micro_batch}.5,\"peak_memory_bytes\":{tp}000}}'");
  auto r = run_layout_trial(ok, LayoutKey{3, 1, 1, 2, 4}, LaunchSettings{}, 30);
  ASSERT_TRUE(r.timing) << r.error;
  EXPECT_DOUBLE_EQ(r.timing->iteration_time_s, 2.5);
  EXPECT_DOUBLE_EQ(*r.timing->peak_memory_bytes, 3000);
  auto bad = run_layout_trial(CommandTemplate("echo oops >&2; exit 3"), LayoutKey{}, LaunchSettings{}, 30);
  EXPECT_FALSE(bad.timing);
  EXPECT_NE(bad.error.find("status 3"), std::string::npos) << bad.error;
  EXPECT_NE(bad.error.find("oops"), std::string::npos) << bad.error;
  auto silent = run_layout_trial(CommandTemplate("true"), LayoutKey{}, LaunchSettings{}, 30);
  EXPECT_NE(silent.error.find("no {\"event\":\"iteration_timing\""), std::string::npos) << silent.error;
}
