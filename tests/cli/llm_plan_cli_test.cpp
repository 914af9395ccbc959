// trainplan llm plan through the CLI: the chosen configuration with its
// memory and headroom, --emit, exit 3 naming the failing constraint, exit 2
// on bad options.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

TEST(LlmPlanCli, ChoosesAConfigurationAndSaysItsMemoryAndHeadroom) {
  auto r = tptest::run_cli("llm plan --model gpt3-6.7b --gpu a100-80gb --max-gpus 32 --tokens 1e10 --global-batch 256 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["enumerated"].get<long>(), 1000);
  auto c = j["chosen"];
  EXPECT_LE(c["gpus"].get<int>(), 32);
  EXPECT_LE(c["memory_gib"].get<double>(), j["memory_available_gib"].get<double>());
  EXPECT_GT(c["headroom_gib"].get<double>(), 0);
  EXPECT_EQ(j["top"].size(), 5u);
}

TEST(LlmPlanCli, EmitsMegatronLaunches) {
  std::string base = "llm plan --model gpt3-6.7b --gpu h100 --max-gpus 16 --tokens 1e10 --global-batch 256 --emit ";
  auto t = tptest::run_cli(base + "torchrun");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("torchrun --nnodes"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("pretrain_gpt.py"), std::string::npos) << t.out;
  auto s = tptest::run_cli(base + "slurm --deadline 100h");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("#SBATCH --time=100:00:00"), std::string::npos) << s.out;
}

TEST(LlmPlanCli, InfeasibleExitsThreeNamingTheConstraint) {
  auto m = tptest::run_cli("llm plan --model gpt3-175b --gpu a100-80gb --max-gpus 8 --tokens 1e9 --global-batch 8");
  EXPECT_EQ(m.exit_code, 3);
  EXPECT_NE(m.err.find("memory"), std::string::npos) << m.err;
  EXPECT_NE(m.err.find("GiB"), std::string::npos) << m.err;
  auto d = tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100 --max-gpus 8 --tokens 26e9 --global-batch 512 --deadline 1h");
  EXPECT_EQ(d.exit_code, 3);
  EXPECT_NE(d.err.find("deadline"), std::string::npos) << d.err;
  EXPECT_NE(d.err.find("too long"), std::string::npos) << d.err;
}

TEST(LlmPlanCli, BadOptionsExitTwo) {
  auto r = tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100 --tokens 1e9 --global-batch 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--global-batch"), std::string::npos) << r.err;
  r = tptest::run_cli("llm plan --model nope --gpu h100 --tokens 1e9 --global-batch 8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--model"), std::string::npos) << r.err;
}
