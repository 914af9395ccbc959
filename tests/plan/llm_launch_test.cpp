// Megatron-LM launch specifications (plan/llm_launch.h): the layout, the
// shape and the iterations reach pretrain_gpt.py's arguments; ranks are laid
// out on whole nodes.
#include "plan/llm_launch.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "test_util.h"

using namespace trainplan;

namespace {

structure::ParallelLayout layout() {
  structure::ParallelLayout l;
  l.tp = 8, l.pp = 4, l.virtual_stages = 2, l.dp = 2, l.micro_batch = 1, l.global_batch = 512;
  l.recompute = structure::Recompute::kSelective, l.sequence_parallel = true, l.distributed_optimizer = true;
  l.precision = structure::Precision::kBf16;
  return l;
}

}  // namespace

TEST(LlmLaunch, TorchrunCarriesTheLayoutAndTheShape) {
  auto s = *structure::find_transformer("llama3-70b");
  plan::LlmLaunchOptions o;
  o.train_iters = 1234;
  auto cmd = plan::megatron_torchrun_command(s, layout(), o);
  for (const char* want : {"--nnodes 8 --nproc-per-node 8", "--tensor-model-parallel-size 8",
                           "--pipeline-model-parallel-size 4", "--num-layers-per-virtual-pipeline-stage 10",
                           "--sequence-parallel", "--use-distributed-optimizer", "--recompute-granularity selective",
                           "--group-query-attention --num-query-groups 8", "--swiglu", "--position-embedding-type rope",
                           "--micro-batch-size 1 --global-batch-size 512", "--train-iters 1234", "--bf16", "$DATA_ARGS"})
    EXPECT_NE(cmd.find(want), std::string::npos) << want << "\n" << cmd;
  EXPECT_EQ(cmd.find("--attention-dropout"), std::string::npos) << "dropout is Megatron's default";
  // Llama 3's rotary base; 3.1's scaling is not Llama 3's.
  EXPECT_NE(cmd.find("--rotary-base 500000"), std::string::npos) << cmd;
  EXPECT_EQ(cmd.find("--use-rope-scaling"), std::string::npos) << cmd;
  // The script stops, saying why, when the user's arguments are not set.
  EXPECT_NE(cmd.find(": \"${DATA_ARGS:?"), std::string::npos) << cmd;
  EXPECT_LT(cmd.find(": \"${DATA_ARGS:?"), cmd.find("torchrun")) << cmd;
  EXPECT_NE(cmd.find("--attention-backend unfused"), std::string::npos) << cmd;
  auto no_dropout = layout();
  no_dropout.dropout = false;
  EXPECT_NE(plan::megatron_torchrun_command(s, no_dropout, o).find("--attention-dropout 0 --hidden-dropout 0"),
            std::string::npos);
  EXPECT_EQ(cmd.find("--fp32-residual-connection"), std::string::npos);
  auto wide = layout();
  wide.fp32_residual = true;
  EXPECT_NE(plan::megatron_torchrun_command(s, wide, o).find("--fp32-residual-connection"), std::string::npos);
  EXPECT_EQ(cmd.find("--overlap-grad-reduce"), std::string::npos);
  EXPECT_EQ(cmd.find("--fp8-format"), std::string::npos);
  auto overlapped = layout();
  overlapped.overlap_grad_reduce = overlapped.overlap_param_gather = overlapped.tp_comm_overlap = true;
  overlapped.precision = structure::Precision::kFp8;
  const auto fast = plan::megatron_torchrun_command(s, overlapped, o);
  for (const char* want : {"--overlap-grad-reduce", "--overlap-param-gather", "--tp-comm-overlap", "--bf16 --fp8-format hybrid"})
    EXPECT_NE(fast.find(want), std::string::npos) << want << "\n" << fast;
  EXPECT_EQ(cmd.find("--context-parallel-size"), std::string::npos);
  auto split = layout();
  split.cp = 2;
  const auto cp_cmd = plan::megatron_torchrun_command(s, split, o);
  EXPECT_NE(cp_cmd.find("--context-parallel-size 2"), std::string::npos);
  // Transformer Engine runs context parallelism on fused kernels only.
  EXPECT_NE(cp_cmd.find("--attention-backend fused"), std::string::npos) << cp_cmd;
  EXPECT_EQ(cmd.find("pipeline-num-layers"), std::string::npos);
  EXPECT_EQ(cmd.find("--grad-reduce-in-bf16"), std::string::npos);
  auto bf16_grads = layout();
  bf16_grads.grad_reduce_in_bf16 = true;
  EXPECT_NE(plan::megatron_torchrun_command(s, bf16_grads, o).find("--grad-reduce-in-bf16"), std::string::npos);
  // Given end stages: their own counts, or Megatron's accounting of the
  // embedding and the loss where the layout is that one.
  auto ends = layout();
  ends.virtual_stages = 1, ends.first_stage_layers = 18, ends.last_stage_layers = 14;  // 48 over 2 stages between
  const auto given = plan::megatron_torchrun_command(s, ends, o);
  for (const char* want : {"--decoder-first-pipeline-num-layers 18", "--decoder-last-pipeline-num-layers 14"})
    EXPECT_NE(given.find(want), std::string::npos) << want << "\n" << given;
  auto big = *structure::find_transformer("llama3.1-405b");
  auto counted = layout();
  counted.pp = 8, counted.virtual_stages = 8, counted.first_stage_layers = counted.last_stage_layers = 15;
  ASSERT_FALSE(structure::check_layout(big, counted).has_value());
  const auto accounted = plan::megatron_torchrun_command(big, counted, o);
  for (const char* want : {"--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split",
                           "--num-virtual-stages-per-pipeline-rank 8"})
    EXPECT_NE(accounted.find(want), std::string::npos) << want << "\n" << accounted;
  EXPECT_EQ(accounted.find("pipeline-num-layers"), std::string::npos) << accounted;
  EXPECT_NE(accounted.find("--rotary-base 500000"), std::string::npos) << accounted;
  EXPECT_NE(accounted.find("--use-rope-scaling"), std::string::npos) << accounted;
  // Learned positions take no rotary flags; an encoder is said to be one.
  auto gpt = plan::megatron_torchrun_command(*structure::find_transformer("gpt3-175b"), layout(), o);
  EXPECT_EQ(gpt.find("--rotary-base"), std::string::npos) << gpt;
  EXPECT_EQ(gpt.find("bidirectional encoder"), std::string::npos) << gpt;
  auto bert = plan::megatron_torchrun_command(*structure::find_transformer("bert-large"), layout(), o);
  EXPECT_NE(bert.find("bidirectional encoder"), std::string::npos) << bert;
  EXPECT_NE(bert.find("pretrain_bert.py"), std::string::npos) << bert;
}

TEST(LlmLaunch, SlurmRunsOneTorchrunPerNode) {
  auto s = *structure::find_transformer("gpt3-175b");
  plan::LlmLaunchOptions o;
  o.deadline_s = 90000;
  auto sh = plan::megatron_slurm_script(s, layout(), o);
  for (const char* want : {"#SBATCH --nodes=8", "#SBATCH --gpus-per-node=8", "#SBATCH --time=25:00:00",
                           "srun --cpus-per-task \"$SLURM_CPUS_ON_NODE\" torchrun --nnodes $SLURM_NNODES "
                           "--nproc-per-node 8",
                           "--rdzv-endpoint",
                           "--position-embedding-type learned_absolute"})
    EXPECT_NE(sh.find(want), std::string::npos) << want << "\n" << sh;
  EXPECT_NE(sh.find("#SBATCH --exclusive"), std::string::npos) << sh;  // whole nodes
  EXPECT_EQ(sh.find("most sites cap"), std::string::npos) << sh;  // 25 hours: no word of site limits
  o.deadline_s = 40 * 86400.0;
  EXPECT_NE(plan::megatron_slurm_script(s, layout(), o).find("--time is 960 hours; most sites cap"),
            std::string::npos);
  o.deadline_s = 90000;
  EXPECT_THROW(plan::megatron_launch_spec("k8s", s, layout(), o), InputError);
  // Part of a node: shared, not taken whole; a script path with a space, quoted.
  structure::ParallelLayout two = layout();
  two.tp = 2, two.pp = 1, two.virtual_stages = 1, two.dp = 1, two.global_batch = 8;
  o.script = "my dir/pretrain_gpt.py";
  auto part = plan::megatron_slurm_script(s, two, o);
  EXPECT_EQ(part.find("--exclusive"), std::string::npos) << part;
  EXPECT_NE(part.find("--cpus-per-gpu=N"), std::string::npos) << part;  // one CPU otherwise: said
  EXPECT_NE(part.find("'my dir/pretrain_gpt.py'"), std::string::npos) << part;
}

// What Megatron-LM would refuse or run otherwise is not emitted: tensor-parallel
// overlap without sequence parallelism (Megatron asserts sp with it), an AMP
// plan as --bf16 (Megatron has no AMP mode); a Slurm job stops itself, saving,
// before its --time.
TEST(LlmLaunch, WhatMegatronRefusesIsNotEmittedAndASlurmJobStopsBeforeItsTime) {
  const auto s = *structure::find_transformer("llama3-70b");
  plan::LlmLaunchOptions o;
  auto no_sp = layout();
  no_sp.sequence_parallel = false, no_sp.tp_comm_overlap = true;
  EXPECT_EQ(plan::megatron_torchrun_command(s, no_sp, o).find("--tp-comm-overlap"), std::string::npos);
  auto amp = layout();
  amp.precision = structure::Precision::kAmpFp32Master;
  auto e = tptest::input_error_of([&] { plan::megatron_torchrun_command(s, amp, o); });
  EXPECT_EQ(e.field(), "--precision");
  o.deadline_s = 10 * 3600.0;
  const auto script = plan::megatron_slurm_script(s, layout(), o);
  EXPECT_NE(script.find("#SBATCH --time=10:00:00"), std::string::npos) << script;
  EXPECT_NE(script.find("--exit-duration-in-mins 570"), std::string::npos) << script;  // 10 h less 5%
  o.deadline_s = 3600.0;
  EXPECT_NE(plan::megatron_slurm_script(s, layout(), o).find("--exit-duration-in-mins 45"), std::string::npos);  // 15 min
  EXPECT_EQ(plan::megatron_torchrun_command(s, layout(), o).find("--exit-duration-in-mins"), std::string::npos);
}

// The job runs as long as the plan says it trains, with a margin, whatever the
// deadline: a stop at the deadline less the save's reserve would cut a plan
// predicted close to its deadline short.
TEST(LlmLaunch, ASlurmJobIsGivenThePredictedTrainingTime) {
  const auto s = *structure::find_transformer("gpt3-125m");
  plan::LlmLaunchOptions o;
  o.train_iters = 3815;
  o.deadline_s = 1800, o.predicted_s = 28 * 60.0;  // 28 minutes of a 30-minute deadline
  const plan::LlmTimeLimit t = plan::llm_time_limit(o);
  // Megatron-LM counts its exit duration from the process's start: start-up comes on top.
  EXPECT_GE(t.exit_s, o.predicted_s * (1 + plan::kRunMargin) + plan::kStartupAllowance_s - 1e-6);
  EXPECT_GE(t.limit_s - t.exit_s, 900);  // the save's reserve
  EXPECT_TRUE(t.past_deadline);
  const auto script = plan::megatron_slurm_script(s, layout(), o);
  EXPECT_NE(script.find("is past the deadline (30 minutes)"), std::string::npos) << script;
  // Times that would read alike are told apart.
  plan::LlmLaunchOptions close = o;
  close.deadline_s = 45000, close.predicted_s = (45000 * 0.95 * 1.0005 - plan::kStartupAllowance_s) / 1.1;
  const auto near = plan::megatron_slurm_script(s, layout(), close);
  EXPECT_NE(near.find("--time (12.51 hours) is past the deadline (12.50 hours)"), std::string::npos) << near;
  EXPECT_NE(script.find("The plan predicts 28 minutes of training (3815 iterations)"), std::string::npos) << script;
  EXPECT_NE(script.find(fmt::format("--exit-duration-in-mins {}", long(t.exit_s / 60))), std::string::npos) << script;
  // A deadline with room to spare stays the limit; no deadline, the prediction sets it.
  o.deadline_s = 10 * 3600.0;
  EXPECT_EQ(plan::llm_time_limit(o).limit_s, 10 * 3600.0);
  EXPECT_FALSE(plan::llm_time_limit(o).past_deadline);
  o.deadline_s = 0, o.predicted_s = 100 * 3600.0;
  EXPECT_NEAR(plan::llm_time_limit(o).limit_s, (110 * 3600.0 + plan::kStartupAllowance_s) / 0.95, 1);
  EXPECT_GE(plan::llm_time_limit(o).exit_s, 110 * 3600.0 - 1e-6);
}

// Megatron-LM takes --rotary-base as an int: a base of a million is written
// whole, not as 1e+06. The sbatch script's rendezvous port is the job's own,
// so that two jobs on parts of one node do not collide.
TEST(LlmLaunch, ArgumentsAreInTheFormsMegatronParses) {
  auto s = *structure::find_transformer("llama3-70b");
  s.rotary_base = 1e6;
  plan::LlmLaunchOptions o;
  o.train_iters = 10;
  const auto cmd = plan::megatron_torchrun_command(s, layout(), o);
  EXPECT_NE(cmd.find("--rotary-base 1000000 "), std::string::npos) << cmd;
  const auto script = plan::megatron_slurm_script(s, layout(), o);
  EXPECT_NE(script.find("export MASTER_PORT=$((10000 + SLURM_JOB_ID % 20000))\n"), std::string::npos) << script;
  EXPECT_NE(script.find("--rdzv-endpoint $MASTER_ADDR:$MASTER_PORT "), std::string::npos) << script;
  // Hosts of one NVLink domain: said only where a domain spans hosts and the job several of them.
  EXPECT_EQ(script.find("--segment"), std::string::npos) << script;
  o.gpus_per_node = 4, o.nvlink_domain_gpus = 72;
  const auto trays = plan::megatron_slurm_script(s, layout(), o);  // 64 GPUs: 16 trays of 4
  EXPECT_NE(trays.find("all of this job's 16 nodes must\n# share a domain"), std::string::npos) << trays;
  EXPECT_NE(trays.find("#SBATCH --segment=16 "), std::string::npos) << trays;
  auto wide = layout();
  wide.pp = 2, wide.virtual_stages = 1, wide.dp = 9, wide.global_batch = 576;  // 144 GPUs: 36 trays, two domains
  EXPECT_NE(plan::megatron_slurm_script(s, wide, o).find("#SBATCH --segment=18 "), std::string::npos);
  EXPECT_NE(plan::megatron_torchrun_command(s, wide, o).find("--segment=18"), std::string::npos);
  // A segment divides the job's nodes, as Slurm requires: 32 trays in segments of 2.
  auto odd = layout();
  odd.dp = 4;  // 128 GPUs: 32 trays
  EXPECT_NE(plan::megatron_slurm_script(s, odd, o).find("#SBATCH --segment=2 "), std::string::npos);
}
