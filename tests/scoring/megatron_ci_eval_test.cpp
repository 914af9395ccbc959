// Megatron-LM CI golden values (io/megatron_ci_csv.h,
// scoring/megatron_ci_eval.h): which rows are kept and why the others are
// not, the shape and layout read from a row, and the evaluation on the
// shared data (skipped when ../shared/data is missing).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "io/megatron_ci_csv.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "scoring/megatron_ci_eval.h"
#include "structure/gpu_catalog.h"
#include "structure/transformer.h"
#include "test_util.h"

using namespace trainplan;

namespace {

const char* kHeader =
    "model_family,test_case,gpu,world_size,tp,pp,cp,ep,num_experts,num_layers,hidden,heads,ffn_hidden,gqa,"
    "query_groups,seq_len,vocab_size,swiglu,micro_batch,global_batch,vpp_layers_per_stage,recompute_granularity,"
    "sequence_parallel,dist_optimizer,bf16,fp16,attention_backend,transformer_impl,iter_time_s_median,"
    "mem_max_allocated_GiB_lastrank,other_args_json\n";

}  // namespace

TEST(MegatronCiCsv, KeepsDenseRunsOnCatalogGpusAndCountsTheRest) {
  auto d = tptest::temp_dir("megatron_ci");
  std::string rows = std::string(kHeader) +
      "gpt,a,A100 (DGX A100),8,2,2,1,,,12,512,8,,,,1024,,,4,32,3,,True,True,True,,,transformer_engine,0.1,2.5,\"{\"\"--x\"\": 1}\"\n"
      "gpt,b,H100 (DGX H100),8,1,1,1,,,12,512,8,,,,1024,,,4,32,,selective,,,True,,unfused,transformer_engine,0.1,2.5,\n"
      "gpt,c,GB200,8,1,1,1,,,12,512,8,,,,1024,,,4,32,,,,,True,,,,0.1,2.5,\n"
      "gpt,d,A100 (DGX A100),,1,1,1,,,12,512,8,,,,1024,,,4,32,,,,,True,,,,0.1,2.5,\n"
      "moe,e,A100 (DGX A100),8,1,1,1,2,8,12,512,8,,,,1024,,,4,32,,,,,True,,,,0.1,2.5,\n"
      "gpt,f,A100 (DGX A100),8,1,1,2,,,12,512,8,,,,1024,,,4,32,,,,,True,,,,0.1,2.5,\n";
  auto path = tptest::write_file(d / "ci.csv", rows);
  auto data = io::read_megatron_ci(path);
  ASSERT_EQ(data.runs.size(), 3u);
  EXPECT_EQ(data.total_rows, 6);
  EXPECT_EQ(data.excluded.at("world size unknown"), 1);
  EXPECT_EQ(data.excluded.at("mixture of experts"), 1);
  EXPECT_EQ(data.excluded.count("context parallelism"), 0u);
  // Context parallelism: 8 GPUs of cp 2 are 4 data-parallel replicas.
  EXPECT_EQ(data.runs[2].layout.cp, 2);
  EXPECT_EQ(data.runs[2].layout.dp, 4);
  EXPECT_EQ(data.excluded.at("GPU outside the catalog (GB200, unspecified)"), 1);
  const auto& a = data.runs[0];
  EXPECT_EQ(a.gpu, "a100-80gb");
  EXPECT_EQ(a.layout.dp, 2);
  EXPECT_EQ(a.layout.virtual_stages, 2);  // 12 layers / (pp 2 x 3 per virtual stage)
  EXPECT_EQ(a.spec.vocab, 50432);         // 50,257 padded to a multiple of 128 x tp 2
  EXPECT_TRUE(a.layout.flash_attention && a.layout.sequence_parallel && a.layout.distributed_optimizer);
  EXPECT_EQ(a.model, "gpt h512 L12 s1024");
  EXPECT_FALSE(data.runs[1].layout.flash_attention);
  EXPECT_EQ(data.runs[1].layout.recompute, structure::Recompute::kSelective);
}

TEST(MegatronCiCsv, BadNumbersNameFileLineAndColumn) {
  auto d = tptest::temp_dir("megatron_ci");
  auto path = tptest::write_file(
      d / "ci.csv", std::string(kHeader) +
                        "gpt,a,A100 (DGX A100),8,x,1,1,,,12,512,8,,,,1024,,,4,32,,,,,True,,,,0.1,2.5,\n");
  try {
    io::read_megatron_ci(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "tp");
  }
}

TEST(FlashAttention, DropsTheQuadraticActivationsAndSoftmaxTraffic) {
  auto s = *structure::find_transformer("gpt3-1.3b");
  structure::ParallelLayout l;
  l.global_batch = 8, l.micro_batch = 8;
  auto f = l;
  f.flash_attention = true;
  double unfused = models::layer_activation_bytes(s, l), fused = models::layer_activation_bytes(s, f);
  double sbh = double(s.seq) * 8 * s.hidden;
  // The fused kernel keeps an fp32 log-sum-exp per row and head: 4 bytes.
  EXPECT_NEAR(unfused - fused, 5.0 * s.heads * double(s.seq) * s.seq * 8 - 4.0 * s.heads * s.seq * 8, 1);
  EXPECT_NEAR(fused / sbh, 34, 0.1);  // sbh(10 + 24) plus a small log-sum-exp
  models::LlmTimeModel tm(*structure::find_builtin_hardware("h100"));
  EXPECT_LT(tm.predict(s, f).memory_bound, tm.predict(s, l).memory_bound);
}

TEST(MegatronCiEval, SharedDataErrorsAndRanking) {
  std::string dir = std::string(TRAINPLAN_SHARED_DATA) + "/llm";
  if (!std::filesystem::exists(dir + "/megatron_ci_golden_iteration_time_memory.csv"))
    GTEST_SKIP() << "needs ../shared/data/llm/megatron_ci_golden_iteration_time_memory.csv (not in this checkout)";
  auto data = io::read_megatron_ci(dir + "/megatron_ci_golden_iteration_time_memory.csv");
  EXPECT_EQ(data.total_rows, 831);
  auto e = scoring::evaluate_megatron_ci(data.runs);
  EXPECT_GT(e.rows.size(), 200u);
  // Calibrated overheads do better than the datasheet on these overhead-bound runs.
  EXPECT_LT(e.time_calibrated_mape, 0.5 * e.time_datasheet_mape);
  EXPECT_LT(e.peak_calibrated_mape, e.peak_datasheet_mape);
  // The target for leaving one model out: peak memory within 10%.
  EXPECT_LT(e.peak_calibrated_mape, 0.10);
  EXPECT_FALSE(e.ranking.empty());
  // The runs repeat worse than the time target: rows of one configuration,
  // each predicted by the median of the others, miss by more than 10%, and
  // the calibrated model comes within 4 points of that on the same rows
  // (0.1 point before the 42 context-parallel rows were read, 3.2 with them:
  // the model does not price their per-step host costs, docs/LLM.md).
  EXPECT_GT(e.repeated_rows, 200);
  EXPECT_GT(e.time_repeat_mape, 0.10);
  EXPECT_LT(e.time_calibrated_on_repeated_mape, e.time_repeat_mape + 0.04);
}

TEST(MegatronCiEval, RepeatabilityPredictsEachRunByItsConfigurationsOtherRuns) {
  auto spec = *structure::find_transformer("gpt3-125m");
  structure::ParallelLayout l;
  l.tp = 1, l.pp = 1, l.dp = 1, l.global_batch = 8, l.micro_batch = 1;
  std::vector<io::MegatronCiRun> runs(4);
  const double times[] = {1.0, 1.2, 0.8, 2.0};  // three of one configuration, one of another
  for (int i = 0; i < 4; ++i) {
    runs[size_t(i)].model = "m", runs[size_t(i)].gpu = "h100", runs[size_t(i)].spec = spec;
    runs[size_t(i)].layout = l, runs[size_t(i)].iteration_s = times[i], runs[size_t(i)].peak_gib = 1;
  }
  runs[3].layout.micro_batch = 2;
  auto e = scoring::evaluate_megatron_ci(runs);
  EXPECT_EQ(e.repeated_rows, 3);
  // 1.0 by median(1.2, 0.8) = 1.0: 0; 1.2 by 0.9: 25%; 0.8 by 1.1: 37.5%.
  EXPECT_NEAR(e.time_repeat_mape, (0 + 0.25 + 0.375) / 3, 1e-12);
}

// The ranking compares what the planner chooses: runs of one layout that
// differ in the attention kernel (the user's setting) are not two configurations
// to rank, and a group holds one attention kernel.
TEST(MegatronCiEval, RankingGroupsHoldTheAttentionKernelFixed) {
  auto d = tptest::temp_dir("megatron_ci_rank");
  std::string rows = std::string(kHeader) +
      // one layout, fused (slow: a resume test) and unfused: no ranking group
      "gpt,a,H100 (DGX H100),8,1,4,1,,,12,512,8,,,,1024,,,4,40,1,,,,True,,,transformer_engine,0.2,2.5,\n"
      "gpt,b,H100 (DGX H100),8,1,4,1,,,12,512,8,,,,1024,,,4,40,1,,,,True,,unfused,transformer_engine,0.11,2.5,\n"
      // two layouts, both unfused: one group of two
      "gpt,c,H100 (DGX H100),8,1,1,1,,,12,512,8,,,,1024,,,4,32,,,,,True,,unfused,transformer_engine,0.05,2.5,\n"
      "gpt,d,H100 (DGX H100),8,2,1,1,,,12,512,8,,,,1024,,,4,32,,,,,True,,unfused,transformer_engine,0.07,2.5,\n";
  auto data = io::read_megatron_ci(tptest::write_file(d / "ci.csv", rows));
  ASSERT_EQ(data.runs.size(), 4u);
  auto e = scoring::evaluate_megatron_ci(data.runs);
  ASSERT_EQ(e.ranking.size(), 1u);
  EXPECT_EQ(e.ranking[0].configurations, 2);
  EXPECT_NE(e.ranking[0].key.find("global batch 32"), std::string::npos) << e.ranking[0].key;
  EXPECT_EQ(e.ranking[0].key.find("fused"), std::string::npos) << e.ranking[0].key;
}
