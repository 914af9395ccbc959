// The transformer zoo's parameter counts against the published totals, and
// the checks of a parallel layout.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "structure/parallel_layout.h"
#include "structure/network_zoo.h"
#include "structure/transformer.h"

using namespace trainplan;
using namespace trainplan::structure;

namespace {
double params(const char* name) { return find_transformer(name)->total_params(); }
}  // namespace

TEST(TransformerZoo, Gpt3175bWithMegatronVocabularyIsTheFormula) {
  // 96·(12h² + 13h) + V·h + s·h + 2h, h = 12288, V = 51,200, s = 2048.
  auto s = *find_transformer("gpt3-175b");
  s.vocab = 51200;
  EXPECT_DOUBLE_EQ(s.total_params(), 174615846912.0);
  EXPECT_DOUBLE_EQ(s.layer_params(), 12.0 * 12288 * 12288 + 13.0 * 12288);
}

TEST(TransformerZoo, CountsMatchPublishedTotals) {
  struct Case {
    const char* name;
    double published;
    double tolerance;  // relative
  };
  // Totals as published (GPT-3 Table 2.1 rounds to the names; Llama from the papers and cards).
  for (auto c : {Case{"gpt3-125m", 125e6, 0.05}, Case{"gpt3-350m", 350e6, 0.05}, Case{"gpt3-760m", 760e6, 0.05},
                 Case{"gpt3-1.3b", 1.3e9, 0.05}, Case{"gpt3-2.7b", 2.7e9, 0.05}, Case{"gpt3-6.7b", 6.7e9, 0.05},
                 Case{"gpt3-13b", 13e9, 0.05}, Case{"gpt3-175b", 174.6e9, 0.005},
                 Case{"megatron-22b", 22e9, 0.03}, Case{"megatron-530b", 530e9, 0.01}, Case{"megatron-1t", 1.008e12, 0.01},
                 Case{"llama2-7b", 6.74e9, 0.005}, Case{"llama2-13b", 13.02e9, 0.005}, Case{"llama2-70b", 68.98e9, 0.005},
                 Case{"llama3-8b", 8.03e9, 0.005}, Case{"llama3-70b", 70.55e9, 0.005}, Case{"bert-large", 335e6, 0.02}}) {
    EXPECT_NEAR(params(c.name) / c.published, 1.0, c.tolerance) << c.name << ": " << params(c.name);
  }
}

TEST(TransformerZoo, EveryEntryIsValidAndSourced) {
  for (const auto& s : transformer_zoo()) {
    EXPECT_NO_THROW(validate(s)) << s.name;
    EXPECT_FALSE(s.source.empty()) << s.name;
  }
  EXPECT_EQ(find_transformer("Llama3-70B")->kv(), 8);
  EXPECT_FALSE(find_transformer("gpt-5").has_value());
  // Names as people write them: case, '-', '_' and spaces aside; the dots are kept.
  for (const auto& [written, name] : std::vector<std::pair<std::string, std::string>>{
           {"Llama-2-7B", "llama2-7b"}, {"llama2_7b", "llama2-7b"}, {"GPT3 1.3B", "gpt3-1.3b"},
           {"gpt3-13b", "gpt3-13b"}, {"Llama-3.1-405B", "llama3.1-405b"}}) {
    const auto found = find_transformer(written);
    ASSERT_TRUE(found.has_value()) << written;
    EXPECT_EQ(found->name, name) << written;
  }
  // No two entries fold to one name.
  std::set<std::string> keys;
  for (const auto& s : transformer_zoo()) EXPECT_TRUE(keys.insert(network_name_key(s.name)).second) << s.name;
}

TEST(ParallelLayout, ChecksNameTheFieldAtFault) {
  auto s = *find_transformer("megatron-175b");
  ParallelLayout l;
  l.tp = 8, l.pp = 8, l.virtual_stages = 3, l.micro_batch = 1, l.global_batch = 64;
  EXPECT_FALSE(check_layout(s, l).has_value());
  EXPECT_EQ(l.gpus(), 64);
  EXPECT_EQ(l.micro_batches(), 64);
  auto bad = l;
  bad.tp = 5;
  EXPECT_EQ(check_layout(s, bad)->field, "tp");
  bad = l, bad.pp = 7, bad.virtual_stages = 1;
  EXPECT_EQ(check_layout(s, bad)->field, "pp");
  bad = l, bad.virtual_stages = 5;
  EXPECT_EQ(check_layout(s, bad)->field, "virtual_stages");
  bad = l, bad.micro_batch = 3;
  EXPECT_EQ(check_layout(s, bad)->field, "global_batch");
  auto gqa = *find_transformer("llama3-70b");
  ParallelLayout t16;
  t16.tp = 16;
  auto p = check_layout(gqa, t16);
  ASSERT_TRUE(p.has_value());
  EXPECT_NE(p->message.find("key/value groups"), std::string::npos) << p->message;
}

// Sequence parallelism scatters the sequence (each context-parallel rank's
// share) over the tensor-parallel ranks, as Megatron-LM asserts.
TEST(ParallelLayout, SequenceParallelismNeedsTheSequenceToSplitOverTp) {
  auto s = *find_transformer("llama3-70b");
  ParallelLayout l;
  l.tp = 4, l.micro_batch = 1, l.global_batch = 8, l.sequence_parallel = true;
  EXPECT_FALSE(check_layout(s, l).has_value());
  s.seq = 4098;
  EXPECT_EQ(check_layout(s, l)->field, "sequence_parallel");
  l.sequence_parallel = false;
  EXPECT_FALSE(check_layout(s, l).has_value());
  s.seq = 4100, l.cp = 2, l.sequence_parallel = true;  // 2,050 a cp rank: not a multiple of 4
  ASSERT_TRUE(check_layout(s, l).has_value());
  EXPECT_EQ(check_layout(s, l)->field, "sequence_parallel");
}

// Given end stages: the rest split evenly over the stages between, each
// stage with a chunk's layer for every virtual stage; Llama 3.1 405B's 126
// layers on 8 x 8 chunks with the embedding and the loss counted.
TEST(ParallelLayout, EndStagesMayHoldFewerLayers) {
  auto s = *find_transformer("llama3.1-405b");
  EXPECT_NEAR(s.total_params() / 1e9, 405, 2);  // the paper's 405B
  ParallelLayout l;
  l.tp = 8, l.pp = 8, l.virtual_stages = 8, l.global_batch = 64;
  EXPECT_EQ(check_layout(s, l)->field, "virtual_stages");  // 64 chunks do not divide 126 layers
  auto ends = end_stage_layers_with_embedding_and_loss_counted(s.layers, l.pp, l.virtual_stages);
  ASSERT_TRUE(ends.has_value());
  EXPECT_EQ(ends->first, 15);
  EXPECT_EQ(ends->second, 15);
  l.first_stage_layers = ends->first, l.last_stage_layers = ends->second;
  EXPECT_TRUE(l.uneven());
  EXPECT_FALSE(check_layout(s, l).has_value()) << check_layout(s, l)->message;
  int total = 0;
  for (int stage = 0; stage < l.pp; ++stage) total += stage_layers(s, l, stage);
  EXPECT_EQ(total, s.layers);
  EXPECT_EQ(stage_layers(s, l, 0), 15);
  EXPECT_EQ(stage_layers(s, l, 3), 16);
  EXPECT_EQ(stage_layers(s, l, 7), 15);
  EXPECT_FALSE(end_stage_layers_with_embedding_and_loss_counted(80, 4, 1).has_value());  // 82 over 4
  EXPECT_FALSE(end_stage_layers_with_embedding_and_loss_counted(126, 1, 1).has_value());

  auto only_first = l;
  only_first.virtual_stages = 1, only_first.first_stage_layers = 14, only_first.last_stage_layers = 0;
  EXPECT_FALSE(check_layout(s, only_first).has_value());  // 112 over the 7 others
  EXPECT_EQ(stage_layers(s, only_first, 7), 16);
  auto bad = only_first;
  bad.first_stage_layers = 15;  // 111 over 7
  EXPECT_EQ(check_layout(s, bad)->field, "first_stage_layers");
  bad = l, bad.last_stage_layers = 20;  // 91 over 6
  auto p = check_layout(s, bad);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->field, "last_stage_layers");
  EXPECT_NE(p->message.find("91"), std::string::npos) << p->message;
  bad = l, bad.first_stage_layers = 4, bad.last_stage_layers = 14;  // 108 over 6; 4 layers cannot fill 8 chunks
  EXPECT_EQ(check_layout(s, bad)->field, "virtual_stages");
  bad = l, bad.first_stage_layers = -1;
  EXPECT_EQ(check_layout(s, bad)->field, "first_stage_layers");
  // Given by their own counts and interleaved, each stage's layers split into equal chunks (Megatron-Core
  // refuses the rest); the counted split above is the exception, its ends' 15 over 8 chunks.
  auto small = *find_transformer("gpt3-1.3b");  // 24 layers
  ParallelLayout v;
  v.pp = 4, v.virtual_stages = 2, v.global_batch = 8, v.first_stage_layers = 3, v.last_stage_layers = 3;
  auto chunks = check_layout(small, v);
  ASSERT_TRUE(chunks.has_value());
  EXPECT_EQ(chunks->field, "first_stage_layers");
  EXPECT_NE(chunks->message.find("equal chunks"), std::string::npos) << chunks->message;
  v.first_stage_layers = 4, v.last_stage_layers = 4;  // 16 over the 2 others: 8 each, 4 a chunk
  EXPECT_FALSE(check_layout(small, v).has_value()) << check_layout(small, v)->message;
  ParallelLayout one;
  one.first_stage_layers = 10;
  EXPECT_EQ(check_layout(s, one)->field, "first_stage_layers");  // one stage
}

// Settings a precision refuses are refused by the layout, so that memory,
// predict and plan agree: fp32 with an fp32 residual, bf16 gradients with
// fp16 or fp32, fused attention (or context parallelism) in fp32.
TEST(ParallelLayout, SettingsAPrecisionRefusesAreRefusedEverywhere) {
  auto s = *find_transformer("gpt3-1.3b");
  ParallelLayout l;
  l.global_batch = 8;
  l.precision = Precision::kFp32;
  EXPECT_FALSE(check_layout(s, l).has_value());
  auto x = l;
  x.fp32_residual = true;
  EXPECT_EQ(check_layout(s, x)->field, "fp32_residual");
  x = l, x.grad_reduce_in_bf16 = true;
  EXPECT_EQ(check_layout(s, x)->field, "grad_reduce_in_bf16");
  x = l, x.flash_attention = true;
  EXPECT_EQ(check_layout(s, x)->field, "flash_attention");
  x = l, x.cp = 2, x.dp = 1, x.global_batch = 8;
  EXPECT_EQ(check_layout(s, x)->field, "cp");
  // In bf16 each is a run's.
  x = l, x.precision = Precision::kBf16, x.fp32_residual = x.grad_reduce_in_bf16 = x.flash_attention = true;
  EXPECT_FALSE(check_layout(s, x).has_value()) << check_layout(s, x)->message;
  x.precision = Precision::kFp16;
  EXPECT_EQ(check_layout(s, x)->field, "grad_reduce_in_bf16");
}
