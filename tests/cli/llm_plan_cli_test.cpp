// trainplan llm plan through the CLI: the chosen configuration with its
// memory and headroom, --emit, exit 3 naming the failing constraint, exit 2
// on bad options; --calibrate's models and their account, exit 2 on a bad
// measured file.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "app/llm_measured_rows.h"
#include "io/gnuplot.h"
#include "models/llm_time.h"
#include "structure/gpu_catalog.h"
#include "io/hardware_file.h"
#include "structure/transformer.h"
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
  auto s = tptest::run_cli(base + "slurm --deadline 100h --job-name 'my run'");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("#SBATCH --time=100:00:00"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("#SBATCH --job-name='my run'"), std::string::npos) << s.out;
  // With --json the launch is the answer's "launch", beside the plan it launches.
  auto j = tptest::run_cli(base + "slurm --deadline 100h --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto answer = nlohmann::json::parse(j.out);
  EXPECT_EQ(answer["launch"]["kind"], "slurm");
  auto plain = tptest::run_cli(base + "slurm --deadline 100h");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(answer["launch"]["spec"], plain.out);
}

// A launch's node is one operating system: a GB200 NVL72 prices tensor
// parallelism over its NVLink domain of 72, and launches on trays of 4.
TEST(LlmPlanCli, AGb200LaunchRunsOnTraysOfFour) {
  auto r = tptest::run_cli("llm plan --model llama3-70b --gpu gb200 --max-gpus 144 --tokens 1e11 --global-batch 512 "
                           "--json --emit slurm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const int gpus = j["chosen"]["gpus"].get<int>();
  const std::string spec = j["launch"]["spec"];
  EXPECT_NE(spec.find(fmt::format("#SBATCH --nodes={}\n", gpus / 4)), std::string::npos) << spec;
  EXPECT_NE(spec.find("#SBATCH --gpus-per-node=4\n"), std::string::npos) << spec;
  EXPECT_NE(spec.find("--nproc-per-node 4 "), std::string::npos) << spec;
  // The trays must share the NVLink domain the plan priced them in.
  EXPECT_NE(spec.find(fmt::format("#SBATCH --segment={}", std::min(gpus / 4, 18))), std::string::npos) << spec;
  // Past one tray, whole trays: 5 trays of one GPU each would run what was priced as 5 linked GPUs.
  for (int most : {5, 7, 10, 72}) {
    auto few = tptest::run_cli(fmt::format("llm plan --model gpt3-6.7b --gpu gb200 --max-gpus {} --tokens 1e11 "
                                           "--global-batch 1000 --json --emit slurm",
                                           most));
    ASSERT_EQ(few.exit_code, 0) << few.err;
    const auto fj = nlohmann::json::parse(few.out);
    const int n = fj["chosen"]["gpus"].get<int>();
    EXPECT_TRUE(n <= 4 || n % 4 == 0) << most << ": " << n;
    for (const auto& c : fj["top"]) EXPECT_TRUE(c["gpus"].get<int>() <= 4 || c["gpus"].get<int>() % 4 == 0) << c;
    if (n > 4)
      EXPECT_NE(fj["launch"]["spec"].get<std::string>().find("--gpus-per-node=4\n"), std::string::npos) << most;
  }
  auto ten = tptest::run_cli("llm plan --model gpt3-6.7b --gpu gb200 --max-gpus 10 --min-gpus 5 --tokens 1e11 "
                            "--global-batch 1000 --json");
  ASSERT_EQ(ten.exit_code, 0) << ten.err;
  EXPECT_NE(ten.out.find("whole hosts of 4 GPUs, and past one node whole nodes of 72 (a launcher starts as many "
                         "ranks on every host), so 8 at most"),
            std::string::npos)
      << ten.out;
  // A node that is no whole number of hosts: the most both rules allow.
  auto six = tptest::run_cli("llm plan --model gpt3-6.7b --gpu gb200 --gpus-per-node 6 --max-gpus 30 --tokens 1e11 "
                            "--global-batch 1000 --json");
  EXPECT_NE(six.out.find("so 24 at most"), std::string::npos) << six.out;
  // No GPUs on whole trays: said with the trays' size.
  auto none = tptest::run_cli("llm plan --model gpt3-6.7b --gpu gb200 --gpus 6 --tokens 1e11 --global-batch 1000 --json");
  EXPECT_EQ(none.exit_code, 3) << none.err;
  EXPECT_NE(nlohmann::json::parse(none.out)["explanation"].get<std::string>().find("whole hosts of 4"),
            std::string::npos)
      << none.out;
}

// What Megatron-LM and Transformer Engine refuse or ignore is not planned:
// the launch a plan prints must start the run it priced.
TEST(LlmPlanCli, PlansOnlyWhatMegatronRuns) {
  const std::string base = "llm plan --model llama2-7b --max-gpus 8 --tokens 1e9 --global-batch 64 ";
  // No fused attention before Ampere: --flash-attention cannot be met, and
  // no context parallelism (which needs it) is searched.
  auto flash = tptest::run_cli(base + "--gpu v100 --flash-attention --json");
  EXPECT_EQ(flash.exit_code, 3) << flash.err;
  EXPECT_EQ(nlohmann::json::parse(flash.out)["failing"], "attention") << flash.out;
  auto emit = tptest::run_cli(base + "--gpu v100 --flash-attention --emit torchrun");
  EXPECT_EQ(emit.exit_code, 3);
  EXPECT_TRUE(emit.out.empty()) << "an infeasible --emit prints nothing on stdout:\n" << emit.out;
  auto cp = tptest::run_cli(base + "--gpu v100 --max-cp 4 --seq 8192 --json");
  ASSERT_EQ(cp.exit_code, 0) << cp.err;
  auto j = nlohmann::json::parse(cp.out);
  ASSERT_EQ(j["notes"].size(), 1u) << j["notes"];
  EXPECT_NE(j["notes"][0].get<std::string>().find("no context parallelism searched"), std::string::npos);
  for (const auto& c : j["top"]) EXPECT_EQ(c["cp"], 1) << c;
  EXPECT_NE(cp.err.find("note: --max-cp"), std::string::npos) << cp.err;
  // On an H100 context parallelism is searched, and priced and launched with fused attention.
  auto h = tptest::run_cli("llm plan --model llama3-8b --gpu h100 --max-gpus 8 --max-cp 4 --seq 32768 --tokens 1e9 "
                           "--global-batch 32 --top 50 --json");
  ASSERT_EQ(h.exit_code, 0) << h.err;
  int with_cp = 0;
  const auto hj = nlohmann::json::parse(h.out);
  for (const auto& c : hj["top"])
    if (c["cp"].get<int>() > 1) {
      ++with_cp;
      EXPECT_EQ(c["flash_attention"], true) << c;
    }
  EXPECT_GT(with_cp, 0);
  // No note of what the price leaves out but when the choice runs context
  // parallelism (beside any advice on the memory reserve).
  size_t cp_notes = 0;
  for (const auto& n : hj["notes"]) {
    const std::string text = n.get<std::string>();
    if (text.find("--reserve-gib") != std::string::npos) continue;
    ++cp_notes;
    EXPECT_NE(text.find("context parallelism, priced without"), std::string::npos) << n;
  }
  EXPECT_EQ(cp_notes, hj["top"][0]["cp"].get<int>() > 1 ? 1u : 0u) << hj["notes"];
  // Combinations Megatron-LM refuses (fp32 residual in fp32) or ignores (bf16 gradients under fp16).
  auto residual = tptest::run_cli(base + "--gpu a100-80gb --precision fp32 --fp32-residual");
  EXPECT_EQ(residual.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(residual.err, "", 0, "--fp32-residual")) << residual.err;
  auto grads = tptest::run_cli(base + "--gpu a100-80gb --precision fp16 --grad-reduce-in-bf16");
  EXPECT_EQ(grads.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(grads.err, "", 0, "--grad-reduce-in-bf16")) << grads.err;
  EXPECT_EQ(tptest::run_cli(base + "--gpu a100-80gb --precision bf16 --grad-reduce-in-bf16").exit_code, 0);
}

// Llama 3.1 405B's 126 layers: the even split has no 8 or 16 stages; with
// the embedding and the loss counted, the chosen plan may take them, and
// says so in its JSON and its launch.
TEST(LlmPlanCli, UnevenEndStagesWidenThePipelineSplits) {
  const std::string base = "llm plan --model llama3.1-405b --gpu h100 --max-gpus 1024 --tokens 1e12 "
                           "--global-batch 1536 --precision fp8 --flash-attention --no-dropout --overlap --max-cp 2 --json";
  auto even = tptest::run_cli(base), uneven = tptest::run_cli(base + " --uneven-end-stages");
  ASSERT_EQ(even.exit_code, 0) << even.err;
  ASSERT_EQ(uneven.exit_code, 0) << uneven.err;
  auto a = nlohmann::json::parse(even.out), b = nlohmann::json::parse(uneven.out);
  EXPECT_GT(b["enumerated"].get<long>(), a["enumerated"].get<long>());
  EXPECT_LE(b["chosen"]["gpu_hours"].get<double>(), a["chosen"]["gpu_hours"].get<double>());
  EXPECT_EQ(a["chosen"]["first_stage_layers"].get<int>(), 0);
  const int pp = b["chosen"]["pp"].get<int>(), ends = b["chosen"]["first_stage_layers"].get<int>();
  ASSERT_GT(ends, 0) << b["chosen"].dump();
  EXPECT_EQ(ends, (126 + 2) / pp - 1);
  auto emit = tptest::run_cli("llm plan --model llama3.1-405b --gpu h100 --max-gpus 1024 --tokens 1e12 "
                              "--global-batch 1536 --precision fp8 --flash-attention --no-dropout --overlap --max-cp 2 "
                              "--uneven-end-stages --emit torchrun");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  EXPECT_NE(emit.out.find("--account-for-embedding-in-pipeline-split"), std::string::npos) << emit.out;
  // The table gives the end stages a column, and the chosen line names them.
  auto table = tptest::run_cli(base.substr(0, base.size() - std::string(" --json").size()) + " --uneven-end-stages");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("end_stages"), std::string::npos) << table.out;
  const std::string pair = std::to_string(ends) + "," + std::to_string(ends);
  EXPECT_NE(table.out.find(pair), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("end stages " + std::to_string(ends) + " and " + std::to_string(ends) + " layers"),
            std::string::npos)
      << table.out;
  auto even_table = tptest::run_cli(base.substr(0, base.size() - std::string(" --json").size()));
  EXPECT_EQ(even_table.out.find("end_stages"), std::string::npos) << even_table.out;
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
  // The JSON carries the shortfall as numbers: the limit, the closest configuration's value, by how much.
  auto dj = tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100 --max-gpus 8 --tokens 26e9 --global-batch 512 "
                            "--deadline 1h --json");
  EXPECT_EQ(dj.exit_code, 3);
  const auto j = nlohmann::json::parse(dj.out);
  const auto& f = j["shortfall"];
  EXPECT_EQ(f["unit"], "s");
  EXPECT_DOUBLE_EQ(f["limit"].get<double>(), 3600);
  EXPECT_DOUBLE_EQ(f["closest"].get<double>(), j["closest"]["train_time_s"].get<double>());
  EXPECT_GT(f["over"].get<double>(), 0);
  EXPECT_NEAR(f["over_fraction"].get<double>(), f["closest"].get<double>() / 3600 - 1, 1e-12);
  auto mj = nlohmann::json::parse(
      tptest::run_cli("llm plan --model gpt3-175b --gpu a100-80gb --max-gpus 8 --tokens 1e9 --global-batch 8 --json").out);
  EXPECT_EQ(mj["shortfall"]["unit"], "GiB");
  EXPECT_DOUBLE_EQ(mj["shortfall"]["limit"].get<double>(), mj["memory_available_gib"].get<double>());
  EXPECT_DOUBLE_EQ(mj["reserve_gib"].get<double>(), 2);
  // The failure's fields a script reads on any verb, and the closest configuration timed as if it fitted.
  for (const nlohmann::json* x : {&j, static_cast<const nlohmann::json*>(&mj)}) {
    EXPECT_EQ((*x)["exit_code"], 3);
    EXPECT_EQ((*x)["infeasible"], true);
    EXPECT_TRUE((*x)["error"].is_string());
  }
  EXPECT_NE(mj["error"].get<std::string>().find("memory"), std::string::npos);
  EXPECT_GT(mj["closest"]["iteration_time_s"].get<double>(), 0);
  EXPECT_GT(mj["closest"]["gpu_hours"].get<double>(), 0);
  EXPECT_GT(mj["closest"]["mfu"].get<double>(), 0);
  // Several GPUs, none with a plan: the same fields on the comparison.
  auto both = tptest::run_cli(
      "llm plan --model gpt3-175b --gpu a100-80gb,v100 --max-gpus 8 --tokens 1e9 --global-batch 8 --json");
  EXPECT_EQ(both.exit_code, 3);
  const auto bj = nlohmann::json::parse(both.out);
  EXPECT_EQ(bj["exit_code"], 3);
  EXPECT_EQ(bj["infeasible"], true);
  EXPECT_TRUE(bj["error"].is_string());
}

// --gpus N: the best layout on exactly N GPUs, where the fewest GPU-hours
// would take fewer; a count no layout makes says so; a --max-gpus past whole
// nodes is read down, with a note.
TEST(LlmPlanCli, GpusAsksForTheBestLayoutOnExactlyThatMany) {
  const std::string base = "llm plan --model gpt3-6.7b --gpu h100 --tokens 1e10 --global-batch 512 --top 20 --json ";
  auto any = tptest::run_cli(base + "--max-gpus 64");
  ASSERT_EQ(any.exit_code, 0) << any.err;
  const auto aj = nlohmann::json::parse(any.out);
  EXPECT_LT(aj["chosen"]["gpus"].get<int>(), 64) << "the fewest GPU-hours on fewer GPUs: " << aj["chosen"];
  auto exact = tptest::run_cli(base + "--gpus 64");
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  const auto ej = nlohmann::json::parse(exact.out);
  for (const auto& c : ej["top"]) EXPECT_EQ(c["gpus"], 64) << c;
  // On exactly 64, GPU-hours rank as time does: the chosen is the fastest listed.
  for (const auto& c : ej["top"])
    EXPECT_LE(ej["chosen"]["train_time_s"].get<double>(), c["train_time_s"].get<double>());
  auto odd = tptest::run_cli(base + "--gpus 13");
  EXPECT_EQ(odd.exit_code, 3);
  EXPECT_EQ(nlohmann::json::parse(odd.out)["failing"], "gpus") << odd.out;
  auto nodes = tptest::run_cli("llm plan --model llama3.1-405b --gpu gb200 --max-gpus 256 --tokens 1e10 "
                               "--global-batch 1536 --json");
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  const auto nj = nlohmann::json::parse(nodes.out);
  ASSERT_EQ(nj["notes"].size(), 1u) << nj["notes"];
  EXPECT_NE(nj["notes"][0].get<std::string>().find("so 216 at most"), std::string::npos) << nj["notes"];
  EXPECT_LE(nj["chosen"]["gpus"].get<int>(), 216);
  tptest::expect_each_exits_two_naming("llm plan --model gpt3-1.3b --gpu h100 --tokens 1e9 --global-batch 64 ",
                                       {{"--max-gpus 8 --min-gpus 9", "--min-gpus"}, {"--gpus 0", "--gpus"}});
  EXPECT_EQ(tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100 --tokens 1e9 --global-batch 64 --gpus 8 "
                            "--max-gpus 16").exit_code,
            2);
}

// A choice at the edge of memory for under 1% of speed, with a near-tie that
// keeps far more free: said, with the reserve that rules the edge out.
TEST(LlmPlanCli, ANearTieWithMoreRoomIsSaid) {
  const std::string base = "llm plan --model gpt3-175b --gpu h100 --gpus 128 --tokens 1e10 --global-batch 256 "
                           "--precision fp8 --flash-attention --overlap ";
  auto r = tptest::run_cli(base);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.out.find("note: rank ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const int rank = std::stoi(r.out.substr(at + 11));
  const size_t flag = r.out.find("--reserve-gib ", at);
  ASSERT_NE(flag, std::string::npos) << r.out;
  const double reserve = std::stod(r.out.substr(flag + 14));
  // The same note in the JSON answer's notes.
  std::string json_notes;
  const auto answer = nlohmann::json::parse(tptest::run_cli(base + "--json").out);
  for (const auto& n : answer["notes"]) json_notes += n.get<std::string>() + "\n";
  EXPECT_NE(json_notes.find(fmt::format("--reserve-gib {:g} chooses it", reserve)), std::string::npos) << json_notes;
  // And in each GPU's answer of a comparison (which had none).
  std::string compared_notes;
  std::string two_gpus = base;
  two_gpus.replace(two_gpus.find("--gpu h100 "), 11, "--gpu h100,a100-80gb ");
  const auto compared = nlohmann::json::parse(tptest::run_cli(two_gpus + "--json").out);
  for (const auto& g : compared["gpus"])
    if (g["gpu"] == "h100")
      for (const auto& n : g["notes"]) compared_notes += n.get<std::string>() + "\n";
  EXPECT_NE(compared_notes.find(fmt::format("--reserve-gib {:g} chooses it (and reserves as much on every GPU compared)",
                                            reserve)),
            std::string::npos)
      << compared.dump().substr(0, 3000);
  // Planned alone, the note names no other GPU.
  EXPECT_EQ(json_notes.find("every GPU compared"), std::string::npos) << json_notes;
  const auto before = nlohmann::json::parse(tptest::run_cli(base + "--json --top 20").out);
  ASSERT_GE(before["top"].size(), size_t(rank));
  const auto& named = before["top"][rank - 1];
  const auto after =
      nlohmann::json::parse(tptest::run_cli(base + "--json --reserve-gib " + fmt::format("{:g}", reserve)).out);
  // The reserve suggested chooses the configuration the note names, within 1% of the first choice.
  for (const char* k : {"tp", "pp", "virtual_stages", "dp", "micro_batch", "recompute", "sequence_parallel",
                        "distributed_optimizer"})
    EXPECT_EQ(after["chosen"][k], named[k]) << k << ": " << after["chosen"] << " against " << named;
  EXPECT_GT(after["chosen"]["headroom_gib"].get<double>(), before["chosen"]["headroom_gib"].get<double>());
  EXPECT_LE(after["chosen"]["gpu_hours"].get<double>(), 1.01 * before["chosen"]["gpu_hours"].get<double>());
}

// llm memory --gpu prices a layout's iteration as llm plan does, --overlap included.
TEST(LlmPlanCli, MemoryPricesTheChosenLayoutAsThePlanDid) {
  auto plan = tptest::run_cli("llm plan --model gpt3-13b --gpu h100 --gpus 16 --tokens 1e10 --global-batch 256 "
                              "--precision fp8 --flash-attention --overlap --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto c = nlohmann::json::parse(plan.out)["chosen"];
  std::string args = fmt::format(
      "llm memory --model gpt3-13b --gpu h100 --precision fp8 --flash-attention --overlap --json --tp {} --pp {} "
      "--virtual-stages {} --dp {} --micro-batch {} --global-batch 256 --recompute {}",
      c["tp"].get<int>(), c["pp"].get<int>(), c["virtual_stages"].get<int>(), c["dp"].get<int>(),
      c["micro_batch"].get<int>(), c["recompute"].get<std::string>());
  if (c["sequence_parallel"].get<bool>()) args += " --sequence-parallel";
  if (c["distributed_optimizer"].get<bool>()) args += " --distributed-optimizer";
  auto m = tptest::run_cli(args);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto j = nlohmann::json::parse(m.out);
  EXPECT_NEAR(j["time"]["iteration_time_s"].get<double>(), c["iteration_time_s"].get<double>(),
              1e-9 * c["iteration_time_s"].get<double>())
      << c;
  EXPECT_NEAR(j["memory_gib"].get<double>(), c["memory_gib"].get<double>(), 1e-9) << c;
}

// --gpus-per-node prices nodes of that size; the JSON says the node it
// priced, and a hardware file of those figures prices the choice alike in
// llm predict.
TEST(LlmPlanCli, TheNodeThePlanPricedIsInItsJson) {
  auto plan = tptest::run_cli("llm plan --model gpt3-6.7b --gpu h100 --max-gpus 64 --min-gpus 16 --gpus-per-node 4 "
                              "--tokens 1e10 --global-batch 256 --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto j = nlohmann::json::parse(plan.out);
  const auto node = j["node"];
  EXPECT_EQ(node["gpus_per_node"], 4);
  const auto h100 = trainplan::io::resolve_hardware("h100");
  EXPECT_NEAR(node["inter_node_bw_GBps"].get<double>(), h100.node.inter_node_gbps * 4 / h100.node.gpus_per_node, 1e-9);
  auto d = tptest::temp_dir("llm_plan_node");
  auto hw = tptest::write_file(d / "hw.csv", fmt::format("name,base,gpus_per_node,inter_node_bw_GBps\nh100-4,h100,4,{}\n",
                                                         node["inter_node_bw_GBps"].get<double>()));
  const auto c = j["chosen"];
  const auto spec = trainplan::structure::find_transformer("gpt3-6.7b");
  ASSERT_TRUE(spec);
  auto cfg = tptest::write_file(
      d / "c.csv",
      fmt::format("gpus,global_batch,micro_batch,hidden,heads,layers,seq,vocab,tp,dp,pp,virtual_stages,recompute,"
                  "sequence_parallel,distributed_optimizer,precision\n{},256,{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                  c["gpus"].get<int>(), c["micro_batch"].get<int>(), spec->hidden, spec->heads, spec->layers, spec->seq,
                  spec->vocab, c["tp"].get<int>(), c["dp"].get<int>(), c["pp"].get<int>(),
                  c["virtual_stages"].get<int>(), c["recompute"].get<std::string>(),
                  c["sequence_parallel"].get<bool>(), c["distributed_optimizer"].get<bool>(),
                  j["precision"].get<std::string>()));
  auto p = tptest::run_cli("llm predict --configs " + cfg + " --gpu " + hw + " --json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NEAR(nlohmann::json::parse(p.out)["rows"][0]["iteration_time_s"].get<double>(),
              c["iteration_time_s"].get<double>(), 1e-6 * c["iteration_time_s"].get<double>());
}

TEST(LlmPlanCli, BadOptionsExitTwo) {
  auto r = tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100 --tokens 1e9 --global-batch 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--global-batch"), std::string::npos) << r.err;
  r = tptest::run_cli("llm plan --model nope --gpu h100 --tokens 1e9 --global-batch 8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--model"), std::string::npos) << r.err;
  // One GPU named twice (an alias is its catalog entry), the launch beside JSON, a coverage of 1.
  const std::string base = "llm plan --model gpt3-1.3b --tokens 1e9 --global-batch 64 ";
  tptest::expect_each_exits_two_naming(base, {{"--gpu h100,h100-sxm", "--gpu"},
                                              {"--gpu h100 --job-name x", "--job-name"},
                                              {"--gpu h100 --emit torchrun --job-name x", "--job-name"},
                                              {"--gpu h100 --emit torchrun --frontier", "--emit"},
                                              {"--gpu h100 --emit torchrun --plot frontier.svg", "--emit"},
                                              {"--gpu h100 --interval 1", "--interval"},
                                              {"--gpu h100,a100-80gb --price a100-80gb=1,a100-80gb=2,h100=1", "--price"},
                                              {"--gpu h100,a100-80gb --price h100=1,h100-sxm=2,a100-80gb=1", "--price"}});
  // A price may name a --gpu item by any of its catalog names.
  r = tptest::run_cli(base + "--gpu H100,a100-80gb --price h100-sxm=3,a100-80gb=2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // llm memory: a global batch given must be a multiple of micro-batch x dp; not given, it is that product.
  r = tptest::run_cli("llm memory --model gpt3-1.3b --micro-batch 4 --global-batch 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--global-batch"), std::string::npos) << r.err;
  r = tptest::run_cli("llm memory --model gpt3-1.3b --micro-batch 4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("global batch 4,"), std::string::npos) << r.out;
}

// Values CLI11 reads as numbers but no plan can use: each names its option.
TEST(LlmPlanCli, NonFiniteAndOutOfRangeValuesExitTwoNamingTheOption) {
  const std::string base = "llm plan --model gpt3-1.3b --gpu h100 --max-gpus 16 --global-batch 64 ";
  tptest::expect_each_exits_two_naming(base, {
      {"--tokens inf", "--tokens"},
      {"--tokens 1e30", "--tokens"},  // 7e21 iterations: the count would overflow
      {"--tokens 1e9 --reserve-gib nan", "--reserve-gib"},
      {"--tokens 1e9 --reserve-gib -1", "--reserve-gib"},
      {"--tokens 1e9 --reserve-gib 100", "--reserve-gib"},  // more than the H100's 80 GB
      {"--tokens 1e9 --gpu-budget -5", "--gpu-budget"},
      {"--tokens 1e9 --gpu-budget nan", "--gpu-budget"},
      {"--tokens 1e9 --top 0", "--top"},
      {"--tokens 1e9 --gpus-per-node -1", "--gpus-per-node"},
  });
  auto huge = tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100 --tokens 1e12 --global-batch 1073741824");
  EXPECT_EQ(huge.exit_code, 2) << huge.err;
  EXPECT_NE(huge.err.find("--global-batch"), std::string::npos) << huge.err;
}

// A launcher starts as many ranks on every node, so past one node a plan
// takes whole nodes, and what --emit launches is what was priced.
TEST(LlmPlanCli, PastOneNodeAPlanTakesWholeNodes) {
  const std::string base = "llm plan --model gpt3-1.3b --gpu h100 --max-gpus 13 --tokens 1e12 --global-batch 1300 ";
  auto r = tptest::run_cli(base + "--gpu-budget 1e9 --top 20 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["top"].empty());
  for (const auto& c : j["top"]) {
    const int gpus = c["gpus"].get<int>();
    EXPECT_TRUE(gpus <= 8 || gpus % 8 == 0) << c;
  }
  auto s = tptest::run_cli(base + "--gpu-budget 1e9 --emit slurm");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const int chosen = j["chosen"]["gpus"].get<int>();
  EXPECT_NE(s.out.find(fmt::format("#SBATCH --gpus-per-node={}", chosen <= 8 ? chosen : 8)), std::string::npos)
      << s.out;
}

// V100s, T4s and RTX 2080 Tis have fp16 tensor cores and no bf16 ones: bf16
// asked for is refused, and a plan that names no precision takes fp16 there
// (bf16 elsewhere).
TEST(LlmPlanCli, Bf16IsRefusedWhereTheTensorCoresTakeFp16Only) {
  const std::string base = "llm plan --model gpt3-1.3b --max-gpus 8 --tokens 1e10 --global-batch 64 ";
  auto refused = tptest::run_cli(base + "--gpu v100 --precision bf16");
  EXPECT_EQ(refused.exit_code, 3) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("no bf16 tensor cores"), std::string::npos) << refused.err;
  auto fp16 = tptest::run_cli(base + "--gpu v100 --precision fp16 --json");
  auto by_default = tptest::run_cli(base + "--gpu v100 --json");
  ASSERT_EQ(fp16.exit_code, 0) << fp16.err;
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  EXPECT_EQ(nlohmann::json::parse(by_default.out)["chosen"], nlohmann::json::parse(fp16.out)["chosen"]);
  auto both = tptest::run_cli(base + "--gpu v100,a100-80gb");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("v100 planned in fp16"), std::string::npos) << both.out;
  EXPECT_EQ(both.out.find("a100-80gb planned in"), std::string::npos) << both.out;
  EXPECT_EQ(nlohmann::json::parse(by_default.out)["precision"], "fp16");
  EXPECT_EQ(nlohmann::json::parse(by_default.out)["chosen"]["precision"], "fp16");
  // No tensor cores at all (Pascal): bf16 refused, fp32 by default.
  auto pascal = tptest::run_cli(base + "--gpu p100 --precision bf16");
  EXPECT_EQ(pascal.exit_code, 3) << pascal.out << pascal.err;
  EXPECT_NE(pascal.err.find("p100 has no bf16 units"), std::string::npos) << pascal.err;
  auto p100 = tptest::run_cli(base + "--gpu p100 --json");
  ASSERT_EQ(p100.exit_code, 0) << p100.err;
  EXPECT_EQ(nlohmann::json::parse(p100.out)["precision"], "fp32");
}

// --model with shape options: each one given replaces the zoo's value, and
// the name says which.
TEST(LlmPlanCli, ShapeOptionsGivenWithAModelReplaceTheZoosValues) {
  const std::string base = "llm memory --gpu a100-80gb --tp 8 --pp 8 --dp 1 --micro-batch 1 --global-batch 8 --json --model gpt3-175b";
  auto zoo = tptest::run_cli(base);
  auto fewer = tptest::run_cli(base + " --layers 48 --vocab 60000");
  ASSERT_EQ(zoo.exit_code, 0) << zoo.err;
  ASSERT_EQ(fewer.exit_code, 0) << fewer.err;
  const auto z = nlohmann::json::parse(zoo.out), f = nlohmann::json::parse(fewer.out);
  // 48 of 96 layers: about half the parameters (the larger vocabulary adds 0.1%).
  EXPECT_NEAR(f["params_total"].get<double>() / z["params_total"].get<double>(), 0.5, 0.01);
  EXPECT_LT(f["memory_gib"].get<double>(), z["memory_gib"].get<double>());
  auto text = tptest::run_cli("llm memory --gpu a100-80gb --tp 8 --pp 8 --dp 1 --micro-batch 1 --global-batch 8 "
                              "--model gpt3-175b --vocab 60000 --layers 48");
  EXPECT_EQ(text.out.rfind("gpt3-175b with layers 48, vocab 60000 (", 0), 0u) << text.out;
}

namespace {

const std::string kCalibratedBase = "llm plan --model gpt3-1.3b --gpu h100 --max-gpus 64 --tokens 30e9 --global-batch 512";

}  // namespace

// --calibrate ranks with the models fitted to measured iterations (here made
// with 0.6 of the datasheet's peak fraction, clear of the half below which
// auto passes a fit over, and 3 GiB of overhead) and says so: the rows, the
// factors, the overhead and the in-sample error.
// The training time's interval: from the calibration's cross-validated
// errors, around the prediction, in text and JSON; none without a
// calibration or with --interval 0. One measured row 30% off the rest makes
// the errors, and so the interval, wide enough to see.
TEST(LlmPlanCli, CalibratedPlanGivesTheTrainingTimesInterval) {
  auto d = tptest::temp_dir("llm_plan_cli");
  auto hw = *trainplan::structure::find_builtin_hardware("h100");
  std::string text = tptest::llm_measured_csv(hw, 0.6, 3.0);
  {  // the first data row's iteration_time_s (the second-last column) 30% slower
    auto begin = text.find('\n') + 1, end = text.find('\n', begin);
    auto last = text.rfind(',', end), time_at = text.rfind(',', last - 1) + 1;
    text.replace(time_at, last - time_at, std::to_string(1.3 * std::stod(text.substr(time_at, last - time_at))));
  }
  auto m = tptest::write_file(d / "measured.csv", text);
  auto j = nlohmann::json::parse(tptest::run_cli(kCalibratedBase + " --calibrate " + m + " --json").out);
  ASSERT_TRUE(j.contains("interval_coverage")) << j.dump();
  EXPECT_DOUBLE_EQ(j["interval_coverage"].get<double>(), 0.8);
  const double t = j["chosen"]["train_time_s"];
  const auto iv = j["chosen"]["train_time_interval_s"];
  ASSERT_EQ(iv.size(), 2u);
  EXPECT_LT(iv[0].get<double>(), t);
  EXPECT_GT(iv[1].get<double>(), 1.1 * t);
  for (const auto& c : j["top"]) EXPECT_TRUE(c.contains("train_time_interval_s"));
  auto shown = tptest::run_cli(kCalibratedBase + " --calibrate " + m);
  EXPECT_NE(shown.out.find("80% interval"), std::string::npos) << shown.out;
  auto none = nlohmann::json::parse(tptest::run_cli(kCalibratedBase + " --calibrate " + m + " --interval 0 --json").out);
  EXPECT_FALSE(none.contains("interval_coverage"));
  EXPECT_FALSE(none["chosen"].contains("train_time_interval_s"));
  auto plain = nlohmann::json::parse(tptest::run_cli(kCalibratedBase + " --json").out);
  EXPECT_FALSE(plain["chosen"].contains("train_time_interval_s"));
}

// --calibrate-gpu: rows measured on the A100 at 0.6 of the datasheet's peak fraction plan the
// H100 at that fraction (slower than its datasheet plan), with no interval: the calibration's
// errors are the A100's.
TEST(LlmPlanCli, CalibratedOnAnotherGpuPlansWithItsFactorsAndNoInterval) {
  auto d = tptest::temp_dir("llm_plan_cli");
  auto a100 = *trainplan::structure::find_builtin_hardware("a100-80gb");
  auto m = tptest::write_file(d / "measured.csv", tptest::llm_measured_csv(a100, 0.6, 3.0));
  auto r = tptest::run_cli(kCalibratedBase + " --calibrate " + m + " --calibrate-gpu a100-80gb --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("moved to h100"), std::string::npos) << r.err;
  auto j = nlohmann::json::parse(r.out);
  auto plain = nlohmann::json::parse(tptest::run_cli(kCalibratedBase + " --json").out);
  EXPECT_GT(j["chosen"]["train_time_s"].get<double>(), 1.1 * plain["chosen"]["train_time_s"].get<double>());
  EXPECT_FALSE(j.contains("interval_coverage"));
  EXPECT_FALSE(j["chosen"].contains("train_time_interval_s"));
  auto alone = tptest::run_cli(kCalibratedBase + " --calibrate-gpu a100-80gb");
  EXPECT_EQ(alone.exit_code, 2) << alone.err;
  // Several GPUs: each priced with the A100's fitted factors, the H100's plan the single one's.
  const std::string several = "llm plan --model gpt3-1.3b --gpu a100-80gb,h100 --max-gpus 64 --tokens 30e9 "
                              "--global-batch 512 --calibrate " + m;
  auto unsaid = tptest::run_cli(several);
  EXPECT_EQ(unsaid.exit_code, 2) << unsaid.err;
  EXPECT_NE(unsaid.err.find("--calibrate-gpu"), std::string::npos) << unsaid.err;
  auto both = tptest::run_cli(several + " --calibrate-gpu a100-80gb --json");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  auto jb = nlohmann::json::parse(both.out);
  ASSERT_EQ(jb["gpus"].size(), 2u) << jb.dump();
  EXPECT_DOUBLE_EQ(jb["gpus"][1]["chosen"]["train_time_s"].get<double>(), j["chosen"]["train_time_s"].get<double>());
}

TEST(LlmPlanCli, CalibratedPlanSaysSoAndIsSlower) {
  auto d = tptest::temp_dir("llm_plan_cli");
  auto hw = *trainplan::structure::find_builtin_hardware("h100");
  auto m = tptest::write_file(d / "measured.csv", tptest::llm_measured_csv(hw, 0.6, 3.0));
  auto base = tptest::run_cli(kCalibratedBase + " --json");
  ASSERT_EQ(base.exit_code, 0) << base.err;
  auto jb = nlohmann::json::parse(base.out);
  EXPECT_FALSE(jb.contains("calibration"));
  auto r = tptest::run_cli(kCalibratedBase + " --calibrate " + m + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("calibration")) << r.out;
  const auto& c = j["calibration"];
  EXPECT_EQ(c["measured"], m);
  EXPECT_EQ(c["rows"], 7);
  EXPECT_EQ(c["memory_rows"], 7);
  EXPECT_EQ(c["fitted_factors"], 3);
  EXPECT_NEAR(c["peak_fraction"].get<double>() / (0.6 * trainplan::models::LlmTimeParams{}.gemm.peak_fraction), 1, 0.05);
  EXPECT_NEAR(c["memory_overhead_gib"].get<double>(), 3.0, 0.01);
  EXPECT_LT(c["mean_abs_relative_error"].get<double>(), 0.01);
  EXPECT_GT(j["chosen"]["train_time_s"].get<double>(), jb["chosen"]["train_time_s"].get<double>());
  EXPECT_GT(j["chosen"]["gpu_hours"].get<double>(), 1.2 * jb["chosen"]["gpu_hours"].get<double>());

  auto t = tptest::run_cli(kCalibratedBase + " --calibrate " + m);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  // The default fit is auto; on these rows the efficiency fit cross-validates best (exactly: they were made by it).
  EXPECT_NE(t.out.find("calibrated on " + m + " (7 rows) by the fit that cross-validates best, efficiency: 3 factor(s): "
                       "peak "),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("cross-validated (7 folds)"), std::string::npos) << t.out;
  auto given = tptest::run_cli(kCalibratedBase + " --calibrate " + m + " --fit efficiency");
  EXPECT_NE(given.out.find("calibrated on " + m + " (7 rows): 3 factor(s): peak "), std::string::npos) << given.out;
  EXPECT_NE(t.out.find("memory overhead 3.00 GiB"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("mean |error|"), std::string::npos) << t.out;
  auto plain = tptest::run_cli(kCalibratedBase);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("calibrated"), std::string::npos) << plain.out;
}

// A bad measured file exits 2 naming the file, the line and the column, as
// llm predict --calibrate does; a missing one names the file.
TEST(LlmPlanCli, MalformedMeasuredFileExitsTwoNamingLineAndColumn) {
  auto d = tptest::temp_dir("llm_plan_cli");
  const std::string header = "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,iteration_time_s\n";
  const std::string good = "8,8,1,1024,16,24,2048,8,1,1,0.5\n";
  struct Case {
    std::string row, column;
  };
  for (const auto& c : {Case{"8,8,1,1024,16,24,2048,8,1,one,0.5", "pp"}, Case{"8,8,1,1024,16,24,2048,8,1,1,-2", "iteration_time_s"},
                        Case{"8,8,1,1024,16,24,2048,3,1,1,0.5", "gpus"}, Case{"8,8,1,1024,16,24,2048,8,1,1,", "iteration_time_s"}}) {
    auto m = tptest::write_file(d / "bad.csv", header + good + c.row + "\n");
    auto r = tptest::run_cli(kCalibratedBase + " --calibrate " + m);
    EXPECT_EQ(r.exit_code, 2) << c.row;
    EXPECT_NE(r.err.find(m + ":3: column '" + c.column + "'"), std::string::npos) << r.err;
  }
  // Without the measured column at all: the header's line names it.
  auto m = tptest::write_file(d / "untimed.csv", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp\n" +
                                                     good.substr(0, good.rfind(',')) + "\n");
  auto r = tptest::run_cli(kCalibratedBase + " --calibrate " + m + " --json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(m), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("iteration_time_s"), std::string::npos) << r.err;
  // With --json, stdout is the error as JSON, naming the same file, line and column.
  const auto e = nlohmann::json::parse(r.out);
  EXPECT_EQ(e.at("file").get<std::string>(), m);
  EXPECT_EQ(e.at("line").get<int>(), 1);
  EXPECT_EQ(e.at("field").get<std::string>(), "iteration_time_s");
  r = tptest::run_cli(kCalibratedBase + " --calibrate " + (d / "absent.csv").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find((d / "absent.csv").string()), std::string::npos) << r.err;
}

// --gpu with several GPUs: each GPU's best plan, the same as its own run's;
// a GPU where nothing qualifies says why beside the others (exit 0 while one
// qualifies, 3 when none does); --emit and --calibrate take one GPU.
TEST(LlmPlanCli, SeveralGpusCompareEachOnesBestPlan) {
  const std::string base = "llm plan --model gpt3-6.7b --max-gpus 32 --tokens 1e10 --global-batch 256 ";
  auto both = tptest::run_cli(base + "--gpu a100-80gb,h100 --json");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  auto j = nlohmann::json::parse(both.out);
  ASSERT_EQ(j["gpus"].size(), 2u);
  for (const auto& g : j["gpus"]) {
    auto alone = nlohmann::json::parse(tptest::run_cli(base + "--gpu " + g["gpu"].get<std::string>() + " --json").out);
    EXPECT_EQ(g["chosen"], alone["chosen"]) << g["gpu"];
  }
  EXPECT_LT(j["gpus"][1]["chosen"]["gpu_hours"].get<double>(), j["gpus"][0]["chosen"]["gpu_hours"].get<double>());

  auto text = tptest::run_cli("llm plan --model gpt3-6.7b --max-gpus 4 --tokens 1e10 --global-batch 256 --gpu a100-80gb,t4");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("a100-80gb"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("t4               memory: "), std::string::npos) << text.out;
  auto none = tptest::run_cli("llm plan --model gpt3-175b --max-gpus 8 --tokens 1e9 --global-batch 8 --gpu t4,v100");
  EXPECT_EQ(none.exit_code, 3) << none.out;

  EXPECT_EQ(tptest::run_cli(base + "--gpu a100-80gb,h100 --emit torchrun").exit_code, 2);
  auto cal = tptest::run_cli(base + "--gpu a100-80gb,h100 --calibrate nowhere.csv");
  EXPECT_EQ(cal.exit_code, 2);
  EXPECT_NE(cal.err.find("--calibrate"), std::string::npos) << cal.err;
  EXPECT_EQ(tptest::run_cli(base + "--gpu a100-80gb,,h100").exit_code, 2);
  EXPECT_EQ(tptest::run_cli(base + "--gpu a100-80gb,a100-41gb").exit_code, 2);
}

// --breakdown: each listed configuration's parts, from the model the plan
// ranked with (calibrated too), add up to no more than its iteration, which
// they reproduce.
TEST(LlmPlanCli, BreakdownIsTheRankedIterationByPart) {
  auto d = tptest::temp_dir("llm_plan_cli");
  auto hw = *trainplan::structure::find_builtin_hardware("h100");
  auto m = tptest::write_file(d / "measured.csv", tptest::llm_measured_csv(hw, 0.6, 3.0));
  for (const std::string extra : {std::string(), " --calibrate " + m}) {
    auto r = tptest::run_cli(kCalibratedBase + extra + " --breakdown --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_FALSE(j["top"].empty());
    for (const auto& c : j["top"]) {
      const auto& b = c["breakdown"];
      const double it = c["iteration_time_s"].get<double>();
      EXPECT_NEAR(b["iteration_time_s"].get<double>(), it, 1e-9 * it) << extra;
      double parts = 0;
      for (const char* k : {"compute_s", "memory_bound_s", "tp_comm_s", "pp_comm_s", "bubble_s", "dp_comm_s", "optimizer_s"})
        parts += b[k].get<double>();
      EXPECT_LE(parts, it * (1 + 1e-9)) << extra;
      EXPECT_GT(b["compute_s"].get<double>(), 0) << extra;
    }
    EXPECT_EQ(j["chosen"]["breakdown"], j["top"][0]["breakdown"]);
  }
  auto text = tptest::run_cli(kCalibratedBase + " --breakdown");
  EXPECT_NE(text.out.find("where the time goes"), std::string::npos) << text.out;
}

// Each candidate's model FLOPs per GPU are Narayanan et al. (2021)'s count,
// 72·B·s·l·h²·(1 + s/6h + V/12lh) an iteration, and its MFU their share of
// the precision's dense peak.
TEST(LlmPlanCli, ModelFlopUtilisationIsNarayanansCountOverThePeak) {
  auto r = tptest::run_cli("llm plan --layers 24 --hidden 2048 --heads 16 --seq 2048 --vocab 51200 --gpu h100 "
                           "--max-gpus 16 --tokens 1e10 --global-batch 256 --top 10 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const double B = 256, s = 2048, l = 24, h = 2048, V = 51200;
  const double flops = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  for (const auto& c : j["top"]) {
    const double achieved = c["model_tflops_per_gpu"].get<double>() * 1e12;
    EXPECT_NEAR(achieved * c["gpus"].get<int>() * c["iteration_time_s"].get<double>(), flops, 1e-9 * flops) << c.dump();
    EXPECT_NEAR(c["mfu"].get<double>(), achieved / 989.4e12, 1e-12) << c.dump();
    EXPECT_GT(c["mfu"].get<double>(), 0.05);
    EXPECT_LT(c["mfu"].get<double>(), 1.0);
  }
  auto text = tptest::run_cli("llm plan --layers 24 --hidden 2048 --heads 16 --seq 2048 --vocab 51200 --gpu h100 "
                              "--max-gpus 16 --tokens 1e10 --global-batch 256");
  EXPECT_NE(text.out.find("model FLOP utilisation"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("of bf16's 989.4 TFLOP/s"), std::string::npos) << text.out;
}

// --price gives each plan its cost and, over several GPUs, names the cheapest;
// --cost-budget minimises the time within what the training may cost.
TEST(LlmPlanCli, PricesMakePlansOnDifferentGpusComparable) {
  const std::string base = "llm plan --model gpt3-6.7b --max-gpus 32 --tokens 1e10 --global-batch 256 ";
  auto j = nlohmann::json::parse(tptest::run_cli(base + "--gpu a100-80gb,h100 --price a100-80gb=1,h100=100 --json").out);
  ASSERT_EQ(j["gpus"].size(), 2u);
  for (const auto& g : j["gpus"])
    EXPECT_DOUBLE_EQ(g["chosen"]["cost"].get<double>(),
                     g["chosen"]["gpu_hours"].get<double>() * g["price_per_gpu_hour"].get<double>());
  // The H100 needs fewer GPU-hours, but not a hundredth of the A100's.
  EXPECT_LT(j["gpus"][1]["chosen"]["gpu_hours"].get<double>(), j["gpus"][0]["chosen"]["gpu_hours"].get<double>());
  EXPECT_EQ(j["cheapest"], "a100-80gb");
  auto flipped = nlohmann::json::parse(tptest::run_cli(base + "--gpu a100-80gb,h100 --price a100-80gb=100,h100=1 --json").out);
  EXPECT_EQ(flipped["cheapest"], "h100");
  auto text = tptest::run_cli(base + "--gpu a100-80gb,h100 --price a100-80gb=1,h100=100");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("cheapest: a100-80gb"), std::string::npos) << text.out;

  // One GPU, one price: a cost column and the chosen plan's cost.
  auto one = tptest::run_cli(base + "--gpu h100 --price 3");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find(" cost "), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("GPU-hours at 3)"), std::string::npos) << one.out;

  // A cost budget: the least time within it, on each GPU the GPU-hours it buys.
  const double hours = nlohmann::json::parse(tptest::run_cli(base + "--gpu h100 --json").out)["chosen"]["gpu_hours"].get<double>();
  auto budget = nlohmann::json::parse(
      tptest::run_cli(base + "--gpu h100 --price 2 --cost-budget " + std::to_string(2 * 4 * hours) + " --json").out);
  EXPECT_EQ(budget["objective"], "least time");
  EXPECT_LE(budget["chosen"]["cost"].get<double>(), 2 * 4 * hours * (1 + 1e-9));
  auto short_of = tptest::run_cli(base + "--gpu h100 --price 2 --cost-budget " + std::to_string(hours));
  EXPECT_EQ(short_of.exit_code, 3);
  EXPECT_NE(short_of.err.find("cost_budget"), std::string::npos) << short_of.err;

  for (const std::string bad : {"--gpu a100-80gb,h100 --price a100-80gb=1", "--gpu a100-80gb,h100 --price v100=1,h100=2",
                                "--gpu h100 --price -1", "--gpu h100 --price cheap", "--gpu h100 --price 1e308",
                                "--gpu h100 --cost-budget 10",
                                "--gpu h100 --price 2 --cost-budget 10 --gpu-budget 5"}) {
    auto r = tptest::run_cli(base + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_TRUE(r.err.find("--price") != std::string::npos || r.err.find("--cost-budget") != std::string::npos)
        << bad << ": " << r.err;
  }
}

// --frontier lists what each deadline costs, also when nothing meets the
// deadline given (exit 3 after it); --plot draws it; JSON carries it.
TEST(LlmPlanCli, FrontierSaysWhatEachDeadlineCosts) {
  const std::string base = "llm plan --model gpt3-6.7b --gpu a100-80gb --max-gpus 32 --tokens 1e10 --global-batch 256 ";
  auto j = nlohmann::json::parse(tptest::run_cli(base + "--frontier --json").out);
  ASSERT_GE(j["frontier"].size(), 2u);
  EXPECT_EQ(j["frontier"].back()["gpu_hours"], j["chosen"]["gpu_hours"]);
  EXPECT_FALSE(nlohmann::json::parse(tptest::run_cli(base + "--json").out).contains("frontier"));
  const double fastest_h = j["frontier"].front()["train_time_s"].get<double>() / 3600;
  auto tight = tptest::run_cli(base + "--frontier --deadline " + std::to_string(0.5 * fastest_h) + "h");
  EXPECT_EQ(tight.exit_code, 3);
  EXPECT_NE(tight.out.find("what a deadline costs"), std::string::npos) << tight.out;
  if (trainplan::io::gnuplot_available()) {
    auto d = tptest::temp_dir("llm_plan_cli");
    auto png = (d / "front.png").string();
    auto p = tptest::run_cli(base + "--plot " + png);
    ASSERT_EQ(p.exit_code, 0) << p.err;
    EXPECT_TRUE(std::filesystem::file_size(png) > 1000);
  }
  EXPECT_EQ(tptest::run_cli(base + "--plot front.txt").exit_code, 2);
  // Several GPUs: each one's frontier (SeveralGpusSayTheCheapestGpuForEveryDeadline).
  EXPECT_EQ(tptest::run_cli("llm plan --model gpt3-6.7b --gpu a100-80gb,h100 --tokens 1e10 --global-batch 256 --frontier")
                .exit_code,
            0);
}

// Several GPUs with --frontier: each GPU's frontier is its own llm plan
// --frontier's, and with prices the merged frontier is, at every training
// time, the cheapest of the GPUs' in-effect points (fastest first, each
// strictly cheaper than the one before); --plot draws every GPU's.
TEST(LlmPlanCli, SeveralGpusSayTheCheapestGpuForEveryDeadline) {
  const std::string base = "llm plan --model gpt3-1.3b --max-gpus 32 --tokens 3e10 --global-batch 512 --deadline 3d --frontier ";
  // The L4 priced so that it is the cheapest for long deadlines, the H100 for short ones.
  const std::string gpus = "--gpu a100-80gb,h100,l4 --price a100-80gb=1.8,h100=3.2,l4=0.25";
  auto r = tptest::run_cli(base + gpus + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["gpus"].size(), 3u);
  auto price = [](const std::string& gpu) { return gpu == "a100-80gb" ? 1.8 : gpu == "h100" ? 3.2 : 0.25; };
  for (const auto& g : j["gpus"]) {
    const std::string name = g["gpu"].get<std::string>();
    auto alone = tptest::run_cli(base + "--gpu " + name + " --price " + std::to_string(price(name)) + " --json");
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    EXPECT_EQ(g["frontier"], nlohmann::json::parse(alone.out)["frontier"]) << name;
  }
  const auto& front = j["frontier"];
  ASSERT_FALSE(front.empty());
  for (size_t i = 0; i < front.size(); ++i) {
    const double t = front[i]["train_time_s"].get<double>(), cost = front[i]["cost"].get<double>();
    EXPECT_NEAR(cost, front[i]["gpu_hours"].get<double>() * price(front[i]["gpu"]), 1e-9 * cost) << i;
    if (i > 0) {
      EXPECT_GE(t, front[i - 1]["train_time_s"].get<double>());
      EXPECT_LT(cost, front[i - 1]["cost"].get<double>());
    }
    double cheapest = INFINITY;
    for (const auto& g : j["gpus"]) {
      double in_effect = INFINITY;
      for (const auto& p : g["frontier"])
        if (p["train_time_s"].get<double>() <= t) in_effect = p["gpu_hours"].get<double>() * price(g["gpu"]);
      cheapest = std::min(cheapest, in_effect);
    }
    EXPECT_NEAR(cost, cheapest, 1e-9 * cheapest) << i;
  }
  EXPECT_EQ(front.front()["gpu"], "h100") << front.dump();
  EXPECT_EQ(front.back()["gpu"], "l4") << front.dump();
  auto text = tptest::run_cli(base + gpus);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("what a deadline costs, every GPU"), std::string::npos) << text.out;
  auto unpriced = tptest::run_cli(base + "--gpu a100-80gb,h100");
  ASSERT_EQ(unpriced.exit_code, 0) << unpriced.err;
  EXPECT_NE(unpriced.out.find("\nh100:"), std::string::npos) << unpriced.out;
  EXPECT_EQ(unpriced.out.find("every GPU"), std::string::npos) << unpriced.out;
  if (trainplan::io::gnuplot_available()) {
    const auto png = tptest::temp_dir("llm-plan-gpus-frontier") / "gpus.png";
    auto drawn = tptest::run_cli(base + gpus + " --plot " + png.string());
    ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
    EXPECT_GT(std::filesystem::file_size(png), 1000u);
  }
}

// With several --gpu: --top lists each GPU's alternatives under its choice,
// --breakdown (one GPU's) is refused, and --fit without --calibrate is refused
// as llm predict refuses it.
TEST(LlmPlanCli, SeveralGpusListTheirAlternativesAndRefuseWhatTheyCannotShow) {
  const std::string base = "llm plan --model gpt3-1.3b --gpu h100,a100-80gb --tokens 1e9 --global-batch 64";
  auto top = tptest::run_cli(base + " --top 3");
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find("  #2"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("  #3"), std::string::npos) << top.out;
  auto plain = tptest::run_cli(base);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("  #2"), std::string::npos) << plain.out;
  auto breakdown = tptest::run_cli(base + " --breakdown");
  EXPECT_EQ(breakdown.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(breakdown.err, "", 0, "--breakdown")) << breakdown.err;
  auto fit = tptest::run_cli("llm plan --model gpt3-1.3b --gpu h100 --tokens 1e9 --global-batch 64 --fit efficiency");
  EXPECT_EQ(fit.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(fit.err, "", 0, "--fit", {"needs --calibrate"})) << fit.err;
}
