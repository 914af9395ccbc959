// NVIDIA's NeMo performance tables: which rows are kept, the shapes and the
// recipe settings filled in, and a bad row named by its line.
#include "io/nemo_perf_csv.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "test_util.h"

using namespace trainplan;

namespace {

const char* kHeader =
    "container,task,system,model,precision,num_gpus,gbs,mbs,seq_len,fsdp,tp,pp,cp,vp,ep,iter_time_s_derived\n";

}  // namespace

TEST(NemoPerfCsv, KeepsDenseH100PreTrainingAndFillsInTheRecipe) {
  auto d = tptest::temp_dir("nemocsv");
  const auto path = tptest::write_file(
      d / "n.csv", std::string(kHeader) +
                       "26.04,Pre-Training,DGX-H100,LLAMA3_70B,FP8,64,256,1,8192,0,4,8,1,5,1,19.69\n"
                       "24.07,Pre-Training,DGX-H100,GPT3-20B,FP8,64,256,2,2048,,2,1,1,1,,1.40\n"
                       "24.07,Pre-Training,DGX-H100,GPT3-5B,BF16,64,2048,4,2048,,1,1,1,1,,2.8\n"
                       "26.04,Pre-Training,DGX-B200,LLAMA3_70B,FP8,64,256,1,8192,0,4,8,1,5,1,9.0\n"
                       "26.04,SFT,DGX-H100,LLAMA3_70B,FP8,8,32,1,4096,,2,4,1,20,1,6.2\n"
                       "26.04,Pre-Training,DGX-H100,Qwen3_30B_a3B,BF16,16,512,2,4096,0,1,2,1,24,8,12.5\n"
                       "24.07,Pre-Training,DGX-H100,LLAMA3-8B,FP8,8,128,1,8192,,1,1,2,1,,10.7\n"
                       "25.11,Pre-Training,DGX-H100,LLAMA3_8B,FP8-CS,8,128,1,8192,8,1,1,1,n/a,1,9.07\n"
                       "25.09,Pre-Training,DGX-H100,LLAMA3_70B,,64,128,1,8192,0,4,8,1,5,1,10.1\n"
                       "24.07,Pre-Training,DGX-H100,Nemotron-8B,FP8,64,256,4,4096,,2,1,1,1,,1.31\n"
                       "24.03,Pre-Training,DGX-H100,LLAMA2-7B,FP8,4,1024,,4096,,1,1,1,,,\n"
                       "26.04,Pre-Training,DGX-H100,LLAMA3_70B,NVFP4,64,256,1,8192,0,4,8,1,5,1,15\n"
                       "26.04,Pre-Training,DGX-GB300,LLAMA3_70B,FP8,64,256,1,8192,0,4,8,1,5,1,7.0\n");
  auto got = io::read_nemo_perf_runs(path);
  ASSERT_EQ(got.runs.size(), 5u);
  const auto& llama = got.runs[0].iteration.run;
  EXPECT_EQ(got.runs[0].gpu, "h100");
  EXPECT_EQ(llama.spec.layers, 80);
  EXPECT_EQ(llama.spec.seq, 8192);  // the table's, not the zoo's
  EXPECT_EQ(llama.layout.dp, 2);
  EXPECT_EQ(llama.layout.virtual_stages, 5);
  EXPECT_EQ(llama.layout.precision, structure::Precision::kFp8);
  EXPECT_TRUE(llama.layout.sequence_parallel && llama.layout.tp_comm_overlap && llama.layout.overlap_grad_reduce &&
              llama.layout.overlap_param_gather && llama.layout.distributed_optimizer);
  EXPECT_FALSE(llama.layout.dropout);
  EXPECT_DOUBLE_EQ(got.runs[0].iteration.seconds, 19.69);
  const auto& gpt20 = got.runs[1].iteration.run;
  EXPECT_EQ(gpt20.spec.layers, 44);
  EXPECT_EQ(gpt20.spec.hidden, 6144);
  EXPECT_EQ(gpt20.spec.vocab, 50432);  // 50,257 padded to a multiple of 128 x tp
  EXPECT_EQ(gpt20.layout.recompute, structure::Recompute::kSelective);
  EXPECT_TRUE(gpt20.layout.dropout);
  const auto& gpt5 = got.runs[2].iteration.run;
  EXPECT_EQ(gpt5.layout.precision, structure::Precision::kBf16);
  EXPECT_EQ(gpt5.layout.recompute, structure::Recompute::kNone);
  EXPECT_FALSE(gpt5.layout.sequence_parallel || gpt5.layout.tp_comm_overlap);
  // A B200 system is the catalog's b200; a GB300 one is outside it.
  EXPECT_EQ(got.runs[3].gpu, "b200");
  EXPECT_EQ(got.runs[3].iteration.run.spec.layers, 80);
  EXPECT_EQ(got.left_out.at("GPU outside the catalog (B300, GB300)"), 1);
  EXPECT_EQ(got.left_out.at("not pre-training"), 1);
  EXPECT_EQ(got.left_out.at("mixture of experts"), 1);
  // Context parallelism: 8 GPUs of cp 2 are 4 data-parallel replicas.
  const auto& cp = got.runs[4].iteration.run;
  EXPECT_EQ(cp.layout.cp, 2);
  EXPECT_EQ(cp.layout.dp, 4);
  EXPECT_EQ(got.left_out.at("FSDP"), 1);
  EXPECT_EQ(got.left_out.at("precision not stated"), 1);
  EXPECT_EQ(got.left_out.at("model shape not known here"), 1);
  EXPECT_EQ(got.left_out.at("no micro-batch or time"), 1);
  EXPECT_EQ(got.left_out.at("precision outside the model (NVFP4)"), 1);
}

// Llama 3.1 405B's 126 layers on 8 x 8 chunks, the embedding and the loss
// counted in the split; Megatron-Bridge's gradients in bf16, NeMo 24.07's not.
TEST(NemoPerfCsv, Llama405bSplitsUnevenlyAndBridgeReducesInBf16) {
  auto d = tptest::temp_dir("nemocsv_405");
  const auto path = tptest::write_file(
      d / "n.csv", std::string("source_doc,") + kHeader +
                       "Megatron-Bridge performance-summary.md,26.06,Pre-Training,DGX-H100,LLAMA3.1_405B,FP8,1024,1536,1,"
                       "8192,,8,8,2,8,1,37.69\n"
                       "NeMo performance_summary.md (24.07),24.07,Pre-Training,DGX-H100,LLAMA2-70B,FP8,64,128,1,4096,,4,4,"
                       "1,20,,4.741\n");
  auto got = io::read_nemo_perf_runs(path);
  ASSERT_EQ(got.runs.size(), 2u);
  const auto& big = got.runs[0].iteration.run;
  EXPECT_EQ(big.spec.layers, 126);
  EXPECT_EQ(big.layout.first_stage_layers, 15);
  EXPECT_EQ(big.layout.last_stage_layers, 15);
  EXPECT_EQ(big.layout.dp, 8);
  EXPECT_TRUE(big.layout.grad_reduce_in_bf16);
  EXPECT_FALSE(got.runs[1].iteration.run.layout.grad_reduce_in_bf16);
  EXPECT_FALSE(got.runs[1].iteration.run.layout.uneven());
}

TEST(NemoPerfCsv, ALayoutTheShapeDoesNotAllowNamesItsLine) {
  auto d = tptest::temp_dir("nemocsv_bad");
  // 80 layers do not split into 3 stages.
  const auto path = tptest::write_file(
      d / "n.csv", std::string(kHeader) + "26.04,Pre-Training,DGX-H100,LLAMA3_70B,FP8,48,256,1,8192,0,4,3,1,1,1,19\n");
  const auto e = tptest::input_error_of([&] { io::read_nemo_perf_runs(path); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "pp");
  const auto missing = tptest::write_file(d / "m.csv", "container,model\n1,x\n");
  EXPECT_THROW(io::read_nemo_perf_runs(missing), InputError);
}
