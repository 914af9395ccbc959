// The published Megatron runs at scale: which rows are kept, what is filled
// in, and the seconds derived from a published throughput.
#include "io/megatron_scale_csv.h"

#include <gtest/gtest.h>

#include "models/llm_time.h"
#include "scoring/llm_eval.h"
#include "structure/gpu_catalog.h"
#include "test_util.h"

using namespace trainplan;

namespace {

const char* kHeader =
    "table_id,model,num_layers,hidden,heads,seq_len,vocab,tp,pp,dp,num_gpus,micro_batch,global_batch,recompute,"
    "sequence_parallel,gpu,achieved_tflops_per_gpu,iteration_time_s\n";

}  // namespace

TEST(MegatronScaleCsv, KeepsSplitRunsOnA100sAndDerivesSeconds) {
  auto d = tptest::temp_dir("scalecsv");
  const auto path = tptest::write_file(
      d / "s.csv", std::string(kHeader) +
                       "narayanan2021,GPT 175B,96,12288,96,2048,50272,8,12,4,384,,1536,full (x),,A100 (x),153,\n"
                       "narayanan2021,GPT 175B,96,12288,96,2048,50272,1,1,384,384,,1536,full (x),,A100 (x),144,\n"
                       "mt,MT-NLG 530B,105,20480,128,2048,50272,8,35,8,2240,,1920,,,A100-SXM 40GB,126,60.1\n"
                       "t2,1.7B,24,2304,24,2048,51200,,,32,32,,512,,,A100,137,\n"
                       "t3,7B,32,4096,32,4096,131072,2,1,48,96,,192,,,H100,465,\n");
  auto got = io::read_published_scale_runs(path);
  ASSERT_EQ(got.runs.size(), 2u);
  const auto& a = got.runs[0];
  EXPECT_EQ(a.gpu, "a100-80gb");
  EXPECT_TRUE(a.seconds_derived);
  EXPECT_EQ(a.iteration.run.layout.dp, 4);
  EXPECT_EQ(a.iteration.run.layout.micro_batch, 1);
  EXPECT_EQ(a.iteration.run.layout.recompute, structure::Recompute::kFull);
  // 96 B s l h^2 (1 + s/6h + V/16lh) / (153e12 x 384) for GPT-3 175B at B = 1536: 76.8 s.
  EXPECT_NEAR(a.iteration.seconds, 76.78, 0.05);
  const auto& b = got.runs[1];
  EXPECT_EQ(b.gpu, "a100-40gb");
  EXPECT_FALSE(b.seconds_derived);
  EXPECT_DOUBLE_EQ(b.iteration.seconds, 60.1);
  EXPECT_EQ(got.left_out.at("ZeRO-3 baseline (not a Megatron layout)"), 1);
  EXPECT_EQ(got.left_out.at("no tensor/pipeline split, GPU count or batch"), 1);
  EXPECT_EQ(got.left_out.at("not an A100"), 1);
}

TEST(MegatronScaleCsv, ALayoutTheShapeDoesNotAllowNamesItsLine) {
  auto d = tptest::temp_dir("scalecsv_bad");
  const auto path = tptest::write_file(
      d / "s.csv", std::string(kHeader) + "t1,GPT,96,12288,96,2048,50272,7,12,4,336,,1536,full,,A100,153,\n");
  try {
    io::read_published_scale_runs(path);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "tp");
  }
}

// On the shared data the datasheet model stays within 10% on every
// Megatron-LM A100 run at 384 to 1,536 GPUs (docs/LLM.md).
TEST(MegatronScaleCsv, DatasheetModelOnTheSharedA100Runs) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto got = io::read_published_scale_runs(tptest::shared_data_dir() + "/llm/published_megatron_scale_results.csv");
  std::vector<io::PublishedIteration> megatron;
  for (const auto& r : got.runs)
    if (r.gpu == "a100-80gb") megatron.push_back(r.iteration);
  ASSERT_EQ(megatron.size(), 7u);
  models::LlmTimeModel m(*structure::find_builtin_hardware("a100-80gb"));
  auto s = scoring::score_iterations(megatron, m);
  EXPECT_LT(s.max_abs, 0.10);
}
