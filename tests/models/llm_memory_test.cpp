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

TEST(LlmMemory, InterleavedStagesHoldMegatronsWarmUpChunks) {
  // 96 layers, pp 8, vpp 3: chunks of 4 layers. Megatron's interleaved warm-up
  // on stage k is (pp - k - 1)·2 + (vpp - 1)·pp chunks, plus the first
  // steady-state forward, at most all m·vpp chunks.
  auto s = *find_transformer("megatron-175b");
  ParallelLayout l;
  l.tp = 8, l.pp = 8, l.virtual_stages = 3, l.global_batch = 64;
  LlmMemoryModel model;
  double per_layer = models::layer_activation_bytes(s, l);
  EXPECT_NEAR(model.predict_stage(s, l, 0).activations / per_layer, 31 * 4, 1e-9);  // 14 + 16 + 1 chunks
  EXPECT_NEAR(model.predict_stage(s, l, 7).activations / per_layer, 17 * 4, 1e-9);  // 16 + 1, not one micro-batch
  EXPECT_NEAR(model.predict_stage(s, l, 3).activations / per_layer, 25 * 4, 1e-9);  // 8 + 16 + 1
  l.global_batch = 8;  // 24 chunks in all: stage 0 runs every forward before a backward
  EXPECT_NEAR(model.predict_stage(s, l, 0).activations / per_layer, 24 * 4, 1e-9);
  EXPECT_NEAR(model.predict_stage(s, l, 7).activations / per_layer, 17 * 4, 1e-9);
}

TEST(LlmMemory, TheLossHoldsSixBytesPerLogitInMixedPrecision) {
  auto s = one_layer();
  ParallelLayout l;
  l.micro_batch = 2, l.global_batch = 2, l.tp = 2;
  double sbh = 512.0 * 2 * 1024, sbv = 512.0 * 2 * 1000;
  auto logits = [&](Precision p) {
    l.precision = p;
    return LlmMemoryModel().predict_stage(s, l, 0).embedding_logits;
  };
  // Stage 0 is also the last: the embedding's mask, the output layer's input, the logits.
  EXPECT_DOUBLE_EQ(logits(Precision::kBf16), sbh + 4 * sbh / 2 + 6 * sbv / 2);  // 16-bit logits + fp32 copy
  EXPECT_DOUBLE_EQ(logits(Precision::kFp32), 2 * (sbh + 4 * sbh / 2) + 4 * sbv / 2);
  EXPECT_DOUBLE_EQ(logits(Precision::kAmpFp32Master), sbh + 4 * sbh / 2 + 12 * sbv / 2);
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

// Without dropout no mask is stored (2sbh of the 10sbh) and the attention
// keeps the softmax output alone (2as²b of the 5as²b); the first stage's
// embedding-dropout mask goes too.
TEST(LlmMemory, WithoutDropoutNoMasksOrAttentionDropoutOutputAreStored) {
  auto s = one_layer();
  ParallelLayout l;
  l.micro_batch = 2;
  double sbh = 512.0 * 2 * 1024, as_h = 16.0 * 512 / 1024;
  l.dropout = false;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, l), sbh * (32 + 2 * as_h));
  l.tp = 4;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, l), sbh * (8 + 24.0 / 4 + 2 * as_h / 4));
  l.tp = 1;
  l.global_batch = 2;  // one micro-batch in flight
  ParallelLayout with = l;
  with.dropout = true;
  LlmMemoryModel m;
  const double layers = s.layers;
  EXPECT_DOUBLE_EQ(m.predict(s, with).activations - m.predict(s, l).activations, layers * sbh * (2 + 3 * as_h));
  EXPECT_DOUBLE_EQ(m.predict(s, with).embedding_logits - m.predict(s, l).embedding_logits, sbh);
}

// An fp32 residual stream doubles the kept layer input and LayerNorm inputs:
// +4sbh per layer, or 4sbh instead of 2sbh under full recomputation; in fp32
// training everything is fp32 already.
TEST(LlmMemory, AnFp32ResidualStreamKeepsWiderLayerInputs) {
  auto s = one_layer();
  ParallelLayout l;
  l.micro_batch = 2;
  l.precision = Precision::kBf16;
  const double sbh = 512.0 * 2 * 1024;
  ParallelLayout wide = l;
  wide.fp32_residual = true;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, wide) - models::layer_activation_bytes(s, l), 4 * sbh);
  l.recompute = wide.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, wide), 4 * sbh);
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, l), 2 * sbh);
  l.precision = wide.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, wide), models::layer_activation_bytes(s, l));
}

// FP8: each layer weight's FP8 copy and transpose (2 bytes a parameter) are
// kept; the four products' saved inputs take half their 16-bit bytes
// (2sbh/sp + (sbh + sb·f)/t less); full recomputation keeps only the layer
// input, unchanged.
TEST(LlmMemory, Fp8KeepsWeightCopiesAndHalvesTheProductsSavedInputs) {
  auto s = one_layer();
  ParallelLayout l;
  l.tp = 2, l.sequence_parallel = true, l.micro_batch = 2, l.global_batch = 2;
  l.precision = Precision::kBf16;
  auto fp8 = l;
  fp8.precision = Precision::kFp8;
  const double sbh = double(s.seq) * l.micro_batch * s.hidden, sb = double(s.seq) * l.micro_batch;
  EXPECT_NEAR(models::layer_activation_bytes(s, l) - models::layer_activation_bytes(s, fp8),
              2 * sbh / 2 + (sbh + sb * s.ffn()) / 2, 1e-6);
  LlmMemoryModel m;
  const double layer_params = double(s.layers) * s.layer_params() / l.tp;
  EXPECT_NEAR(m.predict(s, fp8).weights - m.predict(s, l).weights, 2 * layer_params, 1e-6);
  l.recompute = fp8.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(s, l), models::layer_activation_bytes(s, fp8));
}

// Context parallelism keeps 1/cp of each sequence's activations and logits,
// and the distributed optimizer shards over the context-parallel ranks too.
// A lighter first stage holds fewer layers' weights and activations; then
// stage 1, with as many micro-batches in flight less one and more layers,
// may be the most loaded, and the model reports it.
TEST(LlmMemory, ALighterFirstStageMovesThePeakToTheNext) {
  auto s = *find_transformer("llama3-8b");
  ParallelLayout l;
  l.pp = 4, l.global_batch = 64, l.flash_attention = true, l.dropout = false;
  l.precision = Precision::kBf16;
  LlmMemoryModel m;
  auto even = m.predict(s, l);
  EXPECT_EQ(even.stage, 0);
  auto light = l;
  light.first_stage_layers = 2, light.last_stage_layers = 6;  // 12 on each stage between
  ASSERT_FALSE(check_layout(s, light).has_value());
  auto first = m.predict_stage(s, light, 0), peak = m.predict(s, light);
  EXPECT_LT(first.activations, m.predict_stage(s, l, 0).activations);
  EXPECT_EQ(peak.stage, 1);
  EXPECT_GT(peak.total(), first.total());
  EXPECT_DOUBLE_EQ(peak.activations / m.predict_stage(s, l, 1).activations, 12.0 / 8);
}

// Gradients kept in bf16: 2 bytes a parameter, nothing else moves.
TEST(LlmMemory, Bf16GradientsHalveTheGradientBytes) {
  auto s = *find_transformer("llama3-8b");
  ParallelLayout l;
  l.pp = 2, l.dp = 4, l.global_batch = 64, l.precision = Precision::kBf16, l.distributed_optimizer = true;
  LlmMemoryModel m;
  auto fp32 = m.predict(s, l);
  l.grad_reduce_in_bf16 = true;
  auto bf16 = m.predict(s, l);
  EXPECT_DOUBLE_EQ(bf16.gradients, fp32.gradients / 2);
  EXPECT_DOUBLE_EQ(bf16.weights, fp32.weights);
  EXPECT_DOUBLE_EQ(bf16.optimizer, fp32.optimizer);
  EXPECT_DOUBLE_EQ(bf16.activations, fp32.activations);
}

TEST(LlmMemory, ContextParallelismKeepsItsShareOfTheSequence) {
  auto s = one_layer();
  ParallelLayout l;
  l.flash_attention = true, l.micro_batch = 1, l.global_batch = 2, l.dp = 2, l.distributed_optimizer = true;
  auto split = l;
  split.cp = 4;
  EXPECT_NEAR(models::layer_activation_bytes(s, split), models::layer_activation_bytes(s, l) / 4, 1e-6);
  LlmMemoryModel m;
  EXPECT_NEAR(m.predict(s, split).optimizer, m.predict(s, l).optimizer / 4, 1e-6);
  EXPECT_LT(m.predict(s, split).embedding_logits, m.predict(s, l).embedding_logits);
}

TEST(LlmMemory, ARecomputedLayerHoldsWhatItsRecomputationProducedOnce) {
  auto s = one_layer();
  ParallelLayout l;
  l.micro_batch = 2, l.tp = 4, l.global_batch = 2;
  LlmMemoryModel mm;
  EXPECT_EQ(mm.predict(s, l).recompute_working, 0);  // none keeps everything already
  const double sbh = 512.0 * 2 * 1024;
  const double scores = 5.0 * 16 * 512 * 512 * 2 / 4;  // 5as²b/t bytes
  // Selective, unfused: the scores, once.
  l.recompute = Recompute::kSelective;
  auto m = mm.predict(s, l);
  EXPECT_DOUBLE_EQ(m.recompute_working, scores);
  EXPECT_DOUBLE_EQ(m.total(), m.weights + m.gradients + m.optimizer + m.activations + m.embedding_logits + scores);
  // Full: the whole layer as none keeps it (10sbh + 24sbh/t + the scores), less the 2sbh input kept.
  l.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(mm.predict(s, l).recompute_working, sbh * (10 + 24.0 / 4) + scores - 2 * sbh);
  l.recompute = Recompute::kSelective, l.dropout = false;
  EXPECT_DOUBLE_EQ(mm.predict(s, l).recompute_working, scores * 2 / 5);  // the softmax output alone
  l.flash_attention = true;
  EXPECT_EQ(mm.predict(s, l).recompute_working, 0);  // fused kernels keep their statistics either way
  l.flash_attention = false, l.cp = 2;
  EXPECT_EQ(mm.predict(s, l).recompute_working, 0);  // context parallelism runs on fused kernels only
}
