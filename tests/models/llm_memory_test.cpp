// The transformer memory model: Megatron's bytes per parameter, Korthikanti's
// activation formulas and the 1F1B micro-batches in flight.
#include <gtest/gtest.h>

#include "models/llm_memory.h"
#include "structure/transformer.h"

using namespace trainplan;
using namespace trainplan::structure;
using models::LlmMemoryModel;

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TransformerSpec one_layer() {
  TransformerSpec s;
  s.layers = 4, s.hidden = 1024, s.heads = 16, s.seq = 512, s.vocab = 1000;
  return s;
}
}  // namespace

TEST(LlmMemory, ActivationsPerLayerAreKorthikantiEquations) {
  auto s = one_layer();
  ParallelLayout l;
  l.micro_batch = 2;
  double sbh = 512.0 * 2 * 1024, as_h = 16.0 * 512 / 1024;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, l), sbh * (34 + 5 * as_h));
  l.tp = 4;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, l), sbh * (10 + 24.0 / 4 + 5 * as_h / 4));
  l.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, l), sbh * (34 + 5 * as_h) / 4);
  l.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, l), sbh * 34 / 4);
  l.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, l), sbh * (10 + 24.0 / 4));
  l.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, l), 2 * sbh);
}

TEST(LlmMemory, Megatron22bMatchesFigure1) {
  // 48 layers, tp 8, micro-batch 4: sbh(10 + 24/8 + 5as/8h) per layer, 59.25 GiB.
  auto s = *find_transformer("megatron-22b");
  ParallelLayout l;
  l.tp = 8, l.micro_batch = 4, l.global_batch = 4;
  EXPECT_NEAR(LlmMemoryModel().predict(s, l).activations / kGiB, 59.25, 1e-9);
  // Weights, gradients and optimizer: 18 bytes per parameter (here with the embedding).
  auto m = LlmMemoryModel().predict(s, l);
  double params = (48 * s.layer_params() + 51200.0 * 6144) / 8 + 2048.0 * 6144 + 2 * 6144;
  EXPECT_NEAR((m.weights + m.gradients + m.optimizer) / params, 18.0, 1e-9);
}

TEST(LlmMemory, PipelineKeepsPpMicroBatchesAndInterleavingMore) {
  auto s = *find_transformer("megatron-175b");
  ParallelLayout l;
  l.tp = 8, l.pp = 8, l.global_batch = 64;
  EXPECT_DOUBLE_EQ(models::layers_in_flight(s, l), 96);  // 12 layers x 8 micro-batches
  l.virtual_stages = 3;
  EXPECT_DOUBLE_EQ(models::layers_in_flight(s, l), 96 * (1 + 7.0 / 24));
  l.virtual_stages = 1, l.global_batch = 2;  // fewer micro-batches than stages
  EXPECT_DOUBLE_EQ(models::layers_in_flight(s, l), 24);
}

TEST(LlmMemory, DistributedOptimizerShardsTheTwelveBytes) {
  auto s = *find_transformer("gpt3-1.3b");
  ParallelLayout l;
  l.dp = 8, l.global_batch = 8;
  auto plain = LlmMemoryModel().predict(s, l);
  l.distributed_optimizer = true;
  auto sharded = LlmMemoryModel().predict(s, l);
  EXPECT_DOUBLE_EQ(sharded.optimizer * 8, plain.optimizer);
  EXPECT_DOUBLE_EQ(sharded.weights, plain.weights);
  EXPECT_DOUBLE_EQ(plain.optimizer / plain.weights, 6.0);  // 12 bytes against 2
}

TEST(LlmMemory, FitsAConstantOverhead) {
  auto s = *find_transformer("gpt3-125m");
  ParallelLayout l;
  l.micro_batch = 4, l.global_batch = 4;
  double bare = LlmMemoryModel().predict(s, l).total();
  LlmMemoryModel m;
  m.fit({{s, l, bare + 2 * kGiB}});
  EXPECT_NEAR(m.params().overhead_bytes / kGiB, 2.0, 1e-9);
  EXPECT_NEAR(m.predict(s, l).total(), bare + 2 * kGiB, 1);
}
