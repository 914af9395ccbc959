// NeuSight's 4-GPU training steps: the layout read from each row, the
// vocabulary padded as Megatron-LM pads it, errors naming line and column,
// and the time model on the shared rows.
#include "io/neusight_distributed_csv.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "models/llm_time.h"
#include "scoring/llm_eval.h"
#include "structure/gpu_catalog.h"
#include "test_util.h"

using namespace trainplan;

namespace {

const std::string kHeader =
    "model,num_layers,hidden,heads,ffn_hidden,vocab,seq_len,device,global_batch,num_gpus,dp,tp,pp,num_microbatches,"
    "micro_batch_per_gpu,sequence_parallel,recompute,distributed_optimizer,precision,measured_ms\n";

}  // namespace

TEST(NeusightDistributedCsv, ReadsEachRowsLayoutAndPadsTheVocabulary) {
  auto d = tptest::temp_dir("neusight4");
  const auto path = tptest::write_file(
      d / "n.csv",
      kHeader +
          "gpt2_large,36,1280,20,5120,50257,1024,NVIDIA A100-SXM4-40GB,4,4,1,4,1,1,4,False,False,False,fp32 (x),484.8\n"
          "gpt2_large,36,1280,20,5120,50257,1024,NVIDIA H100 80GB HBM3,16,4,1,1,4,1,16,False,False,False,fp32,2384\n");
  auto got = io::read_neusight_distributed(path);
  ASSERT_EQ(got.runs.size(), 2u);
  const auto& a = got.runs[0];
  EXPECT_EQ(a.gpu, "a100-40gb");
  EXPECT_EQ(a.iteration.run.layout.tp, 4);
  EXPECT_EQ(a.iteration.run.layout.precision, structure::Precision::kFp32);
  EXPECT_EQ(a.iteration.run.spec.vocab, 50688);  // a multiple of 128 x 4
  EXPECT_DOUBLE_EQ(a.iteration.seconds, 0.4848);
  const auto& b = got.runs[1];
  EXPECT_EQ(b.gpu, "h100");
  EXPECT_EQ(b.iteration.run.layout.pp, 4);
  EXPECT_EQ(b.iteration.run.layout.micro_batch, 16);
  EXPECT_EQ(b.iteration.run.layout.micro_batches(), 1);  // the stages run one after another
  EXPECT_EQ(b.iteration.run.spec.vocab, 50304);
}

TEST(NeusightDistributedCsv, ErrorsNameLineAndColumn) {
  auto d = tptest::temp_dir("neusight4_bad");
  auto error_of = [&](const std::string& row) {
    const auto path = tptest::write_file(d / "n.csv", kHeader + row);
    return tptest::input_error_of([&] { io::read_neusight_distributed(path); });
  };
  auto e = error_of("g,36,1280,20,5120,50257,1024,NVIDIA Z9,4,4,4,1,1,1,1,False,False,False,fp32,1\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "device");
  e = error_of("g,36,1280,20,5120,50257,1024,NVIDIA H100 80GB HBM3,4,8,4,1,1,1,1,False,False,False,fp32,1\n");
  EXPECT_EQ(e.field(), "num_gpus");
  e = error_of("g,36,1280,20,5120,50257,1024,NVIDIA H100 80GB HBM3,4,4,1,3,1,1,4,False,False,False,fp32,1\n");
  EXPECT_EQ(e.field(), "num_gpus");
  e = error_of("g,36,1280,20,5120,50257,1024,NVIDIA H100 80GB HBM3,4,4,1,1,4,2,4,False,False,False,fp32,1\n");
  EXPECT_EQ(e.field(), "num_microbatches");
  e = error_of("g,36,1280,20,5120,50257,1024,NVIDIA H100 80GB HBM3,4,4,1,1,4,1,4,False,False,False,fp32,-3\n");
  EXPECT_EQ(e.field(), "measured_ms");
}

// The datasheet model on the shared rows (docs/LLM.md): the three A100 runs
// within 6%, the eight H100 runs within 8% at the mean.
TEST(NeusightDistributedCsv, DatasheetModelOnTheSharedRuns) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto got = io::read_neusight_distributed(tptest::shared_data_dir() + "/llm/neusight_distributed_4gpu_measured.csv");
  ASSERT_EQ(got.runs.size(), 11u);
  std::map<std::string, std::vector<io::PublishedIteration>> by_gpu;
  for (const auto& r : got.runs) by_gpu[r.gpu].push_back(r.iteration);
  ASSERT_EQ(by_gpu.at("a100-40gb").size(), 3u);
  auto a100 = scoring::score_iterations(by_gpu.at("a100-40gb"),
                                        models::LlmTimeModel(*structure::find_builtin_hardware("a100-40gb")));
  EXPECT_LT(a100.max_abs, 0.06);
  auto h100 = scoring::score_iterations(by_gpu.at("h100"), models::LlmTimeModel(*structure::find_builtin_hardware("h100")));
  EXPECT_LT(h100.mean_abs, 0.08);
}
