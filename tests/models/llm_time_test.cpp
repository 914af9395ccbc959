// The transformer iteration-time model: monotone in the work, the 1F1B
// bubble, recomputation, calibration, and the GEMM efficiency curve.
#include <gtest/gtest.h>

#include <cmath>

#include "io/csv.h"
#include "models/gemm_time.h"
#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "structure/gpu_catalog.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::structure;
using models::LlmTimeModel;

namespace {
LlmTimeModel a100() { return LlmTimeModel(*find_builtin_hardware("a100-80gb")); }

ParallelLayout layout(int tp, int pp, int dp, int global_batch) {
  ParallelLayout l;
  l.tp = tp, l.pp = pp, l.dp = dp, l.global_batch = global_batch;
  return l;
}
}  // namespace

TEST(LlmTime, GrowsWithLayersBatchAndSequence) {
  auto s = *find_transformer("gpt3-6.7b");
  auto l = layout(4, 2, 2, 64);
  double base = a100().predict(s, l).iteration;
  auto deeper = s;
  deeper.layers *= 2;
  EXPECT_GT(a100().predict(deeper, l).iteration, 1.9 * base);
  auto more = l;
  more.global_batch *= 2;
  EXPECT_GT(a100().predict(s, more).iteration, 1.8 * base);
  auto longer = s;
  longer.seq *= 2;
  EXPECT_GT(a100().predict(longer, l).iteration, 2 * base);
}

TEST(LlmTime, BubbleIsPpMinusOneOverVppStages) {
  auto s = *find_transformer("megatron-175b");
  auto l = layout(8, 8, 1, 64);
  auto t = a100().predict(s, l);
  // 1F1B: the first micro-batch's forward and the last one's backward pass
  // every stage, (m - 1)·t_slowest + pp·t_mean in all; (pp - 1)·t_mean when
  // the end stages (embedding, logits) cost no more than the others.
  EXPECT_GT(t.stage_step, t.mean_stage_step);
  EXPECT_NEAR(t.bubble, 8 * t.mean_stage_step - t.stage_step, 1e-12);
  EXPECT_NEAR(t.bubble, 7 * t.mean_stage_step, 0.01 * t.bubble);
  EXPECT_NEAR(t.iteration, 64 * t.stage_step + t.bubble + t.dp_comm + t.optimizer, 1e-9 * t.iteration);
  l.virtual_stages = 2;
  auto ti = a100().predict(s, l);
  EXPECT_NEAR(ti.bubble, 3.5 * ti.mean_stage_step, 1e-12);
  EXPECT_LT(ti.bubble, t.bubble);
  EXPECT_GT(ti.pp_comm, t.pp_comm);  // twice the point-to-point sends
  // One stage: no bubble, no point-to-point.
  auto one = a100().predict(s, layout(8, 1, 8, 64));
  EXPECT_EQ(one.bubble, 0);
  EXPECT_EQ(one.pp_comm, 0);
}

TEST(LlmTime, OneMicroBatchRunsThePipelineStagesOneAfterAnother) {
  auto s = *find_transformer("gpt3-1.3b");
  auto l = layout(1, 4, 1, 1);
  auto t = a100().predict(s, l);
  ASSERT_EQ(l.micro_batches(), 1);
  // Every stage once: 4 mean stages, not the slowest (the logits' stage) plus 3.
  EXPECT_NEAR(t.iteration, 4 * t.mean_stage_step + t.dp_comm + t.optimizer, 1e-9 * t.iteration);
  EXPECT_GT(t.stage_step, 1.05 * t.mean_stage_step);
}

// Interleaving with fewer micro-batches than stages (a layout Megatron-LM
// refuses, which `llm predict` may be given): a micro-batch still passes all
// pp·vpp chunks in turn, so one micro-batch takes pp stages whatever vpp, and
// m < pp take (pp·vpp + m - 1) chunk steps (scripts/dev/pipeline-schedule-check.py
// simulates these cases to the same figure).
TEST(LlmTime, InterleavingCannotHideStagesFromTooFewMicroBatches) {
  auto s = *find_transformer("gpt3-1.3b");
  auto l = layout(1, 4, 1, 1);
  const double plain = a100().predict(s, l).iteration;
  for (int v : {2, 8}) {
    l.virtual_stages = v;
    auto t = a100().predict(s, l);
    // Every stage once, pp·t_mean, as without interleaving: only the extra
    // point-to-point sends differ (the logits' stage is the slowest).
    EXPECT_NEAR(t.stage_step + t.bubble, 4 * t.mean_stage_step, 1e-12) << v;
    EXPECT_NEAR(t.iteration, plain, 0.03 * plain) << v;
  }
  l.global_batch = 2;  // m = 2 < pp = 4, vpp 8: one more micro-batch, at least one chunk behind
  auto two = a100().predict(s, l);
  const double pipeline_two = 2 * two.stage_step + two.bubble;
  EXPECT_GT(pipeline_two, 4 * two.mean_stage_step + two.mean_stage_step / 8);
  EXPECT_LT(pipeline_two, 4 * two.mean_stage_step + two.stage_step / 2);
  l.global_batch = 4;  // m = pp: the usual (pp - 1)/vpp
  auto four = a100().predict(s, l);
  EXPECT_NEAR(four.bubble, 3.0 / 8 * four.mean_stage_step, 1e-12);
}

TEST(LlmTime, Fp32ProductsRunAtTheFp32PeakTheGpuSustains) {
  auto s = *find_transformer("gpt3-1.3b");
  auto l = layout(1, 1, 1, 8);
  l.precision = Precision::kFp32;
  auto h100 = *find_builtin_hardware("h100");
  const double fraction = h100.gpu.fp32_sustained;
  ASSERT_LT(fraction, 1);
  const auto sustained = LlmTimeModel(h100).predict(s, l);
  h100.gpu.fp32_sustained = 1;
  const auto datasheet = LlmTimeModel(h100).predict(s, l);
  // Compute-bound products take 1/0.78 as long; memory-bound kernels do not move.
  EXPECT_GT(sustained.compute, 1.2 * datasheet.compute);
  EXPECT_LE(sustained.compute, datasheet.compute / fraction * (1 + 1e-9));
  EXPECT_DOUBLE_EQ(sustained.memory_bound, datasheet.memory_bound);
  // Tensor-core precisions keep the datasheet peak.
  l.precision = Precision::kBf16;
  h100.gpu.fp32_sustained = 0.5;
  EXPECT_DOUBLE_EQ(LlmTimeModel(h100).predict(s, l).compute,
                   LlmTimeModel(*find_builtin_hardware("h100")).predict(s, l).compute);
}

TEST(LlmTime, RecomputationCostsAForwardOrTheAttentionCore) {
  auto s = *find_transformer("megatron-22b");
  auto l = layout(8, 1, 1, 4);
  l.micro_batch = 4;
  double none = a100().predict(s, l).iteration;
  l.recompute = Recompute::kSelective;
  double selective = a100().predict(s, l).iteration;
  l.recompute = Recompute::kFull;
  double full = a100().predict(s, l).iteration;
  EXPECT_GT(selective, none);
  EXPECT_LT(selective, 1.1 * none);
  EXPECT_GT(full, 1.25 * none);  // about a third more: the products' backward is twice the forward
  EXPECT_LT(full, 1.4 * none);
}

// The softmax and its dropout cost 4.5 passes over the attention scores
// forward and 5.5 backward (their backward kernels read dy and the saved
// probabilities or mask), not twice 4.5: what a fused attention kernel saves
// in memory-bound time is exactly those ten passes and their three launches.
TEST(LlmTime, SoftmaxAndDropoutBackwardAreCountedKernelByKernel) {
  auto hw = *find_builtin_hardware("a100-80gb");
  auto s = *find_transformer("megatron-22b");
  auto l = layout(8, 1, 1, 8);
  l.micro_batch = 2;
  const auto unfused = LlmTimeModel(hw).predict(s, l);
  l.flash_attention = true;
  const auto fused = LlmTimeModel(hw).predict(s, l);
  const models::LlmTimeParams p;
  const double scores = double(l.micro_batch) * s.heads / l.tp * double(s.seq) * s.seq * 2;  // fp16 bytes
  const double per_layer = 10 * scores / (hw.gpu.memory_bandwidth_gbps * 1e9 * p.gemm.memory_fraction) + 3 * p.gemm.launch_s;
  const double micro_batches = l.global_batch / (l.micro_batch * l.dp);
  EXPECT_NEAR((unfused.memory_bound - fused.memory_bound) / (micro_batches * s.layers * per_layer), 1, 1e-9);
}

TEST(LlmTime, DataParallelReductionAndOverlap) {
  auto s = *find_transformer("gpt3-1.3b");
  auto one = a100().predict(s, layout(1, 1, 1, 16));
  EXPECT_EQ(one.dp_comm, 0);
  auto l = layout(1, 1, 16, 16);  // two nodes: over the network
  auto t = a100().predict(s, l);
  EXPECT_GT(t.dp_comm, 0);
  models::LlmTimeParams p;
  p.dp_overlap = 1;
  EXPECT_EQ(LlmTimeModel(*find_builtin_hardware("a100-80gb"), p).predict(s, l).dp_comm, 0);
}

// With a collective latency exponent (NodeSpec), a step's latency grows as
// (bytes / 64 KiB)^exponent: four times the micro-batch, a quarter of the
// all-reduces, each 4^0.5 = 2 times as long: half the time in all, where a
// fixed latency gives a quarter. Links fast enough that the bytes cost nothing.
TEST(LlmTime, ACollectiveLatencyExponentMakesLargerStepsWaitLonger) {
  auto hw = *find_builtin_hardware("a100-80gb");
  hw.node.intra_node_gbps = 1e12;
  models::LlmTimeParams p;
  p.link_latency_s = 1e-3;
  auto s = *find_transformer("gpt3-1.3b");
  auto tp_comm = [&](const HardwareProfile& h, int micro_batch) {
    auto l = layout(2, 1, 1, 4);
    l.micro_batch = micro_batch;
    return LlmTimeModel(h, p).predict(s, l).tp_comm;
  };
  EXPECT_NEAR(tp_comm(hw, 4) / tp_comm(hw, 1), 0.25, 1e-6);
  auto growing = hw;
  growing.node.collective_latency_exponent = 0.5;
  EXPECT_NEAR(tp_comm(growing, 4) / tp_comm(growing, 1), 0.5, 1e-6);
  // A step of 64 KiB costs the latency itself: an all-reduce of 128 KiB
  // (64 tokens x 512 x 2 bytes x micro-batch 2) is two of them on two ranks.
  structure::TransformerSpec small;
  small.layers = 2, small.hidden = 512, small.heads = 8, small.seq = 64, small.vocab = 1024;
  auto l = layout(2, 1, 1, 2);
  l.micro_batch = 2;
  EXPECT_NEAR(LlmTimeModel(growing, p).predict(small, l).tp_comm / LlmTimeModel(hw, p).predict(small, l).tp_comm, 1,
              1e-9);
}

TEST(LlmTime, CalibrationRecoversTheEfficiencyFactors) {
  auto hw = *find_builtin_hardware("h100");
  models::LlmTimeParams truth;
  truth.gemm.peak_fraction = 0.5, truth.link_fraction = 0.6, truth.gemm.memory_fraction = 0.55;
  LlmTimeModel real(hw, truth);
  std::vector<models::LlmTimeSample> measured;
  for (const char* name : {"gpt3-1.3b", "gpt3-6.7b", "llama2-7b"})
    for (int tp : {1, 2, 8}) {
      auto s = *find_transformer(name);
      auto l = layout(tp, 1, 8 / tp, 32);
      measured.push_back({s, l, real.predict(s, l).iteration});
    }
  LlmTimeModel m(hw);
  m.fit(measured);
  EXPECT_EQ(m.fitted_factors(), 3);
  EXPECT_NEAR(m.params().gemm.peak_fraction, 0.5, 0.01);
  EXPECT_NEAR(m.params().link_fraction, 0.6, 0.03);
  EXPECT_NEAR(m.params().gemm.memory_fraction, 0.55, 0.03);
}

// The prior on the fractions: one run 30% slower than the datasheet's
// prediction is met exactly without it; with it the peak fraction stops
// between the datasheet's and the exact fit's, nearer the exact one (a factor
// of 1.3 is a quarter of the prior's standard deviation), and a run with no
// collectives leaves the link fraction, which it cannot see, where it was.
TEST(LlmTime, ThePriorHoldsTheFractionsNearTheDatasheetsWhereTheRunsSayLittle) {
  auto hw = *find_builtin_hardware("h100");
  auto s = *find_transformer("gpt3-1.3b");
  auto l = layout(1, 1, 1, 8);
  const double datasheet = LlmTimeModel(hw).predict(s, l).iteration;
  std::vector<models::LlmTimeSample> measured{{s, l, 1.3 * datasheet}};
  models::LlmTimeParams none;
  none.fraction_prior_log_sd = 0;
  LlmTimeModel exact(hw, none), map(hw);
  exact.fit(measured);
  map.fit(measured);
  const double start = models::LlmTimeParams{}.gemm.peak_fraction;
  const double f_exact = exact.params().gemm.peak_fraction, f_map = map.params().gemm.peak_fraction;
  EXPECT_NEAR(exact.predict(s, l).iteration / (1.3 * datasheet), 1, 1e-6);
  EXPECT_LT(f_exact, f_map);
  EXPECT_LT(f_map, start);
  EXPECT_LT(f_map - f_exact, start - f_map);
  EXPECT_GT(map.predict(s, l).iteration / (1.3 * datasheet), 0.95);
  EXPECT_LT(map.predict(s, l).iteration / (1.3 * datasheet), 1);
  EXPECT_DOUBLE_EQ(map.params().link_fraction, models::LlmTimeParams{}.link_fraction);
  // As the runs' noise goes to nothing the prior's pull vanishes.
  models::LlmTimeParams sure;
  sure.relative_noise = 1e-6;
  LlmTimeModel precise(hw, sure);
  precise.fit(measured);
  EXPECT_NEAR(precise.params().gemm.peak_fraction, f_exact, 1e-3);
  // Fitted state apart from the given parameters: a second fit on the same
  // run starts from, and centres its prior on, the datasheet's again, so it
  // lands where the first did (from the first fit the prior would pull less
  // and the fraction would drift towards the exact fit).
  EXPECT_DOUBLE_EQ(map.given_params().gemm.peak_fraction, start);
  map.fit(measured);
  EXPECT_DOUBLE_EQ(map.params().gemm.peak_fraction, f_map);
  EXPECT_DOUBLE_EQ(map.given_params().gemm.peak_fraction, start);
}

TEST(GemmTime, EfficiencyRisesWithSizeToThePeakFraction) {
  models::GemmEfficiency e;
  double peak = 312e12, bw = 2039e9;
  auto eff = [&](double n) { return 2 * n * n * n / models::gemm_seconds(n, n, n, 1, 2, peak, bw, e) / peak; };
  EXPECT_LT(eff(256), eff(1024));
  EXPECT_LT(eff(1024), eff(8192));
  EXPECT_NEAR(eff(16384), e.peak_fraction, 0.01);
}

TEST(GemmTime, DefaultsAreTheFitToTheShippedH100Sweep) {
  auto t = io::CsvTable::read(tptest::source_dir() + "/examples/h100/gemm-sweep.csv");
  std::vector<models::GemmTiming> g;
  for (const auto& row : t.rows())
    if (t.text(row, "dtype") == "bfloat16")
      g.push_back({t.number(row, "m"), t.number(row, "k"), t.number(row, "n"), t.positive(row, "ms") / 1e3});
  auto h100 = *find_builtin_hardware("h100");
  auto fit = models::fit_gemm_efficiency(g, 2, h100.gpu.bf16_tensor_tflops * 1e12, h100.gpu.memory_bandwidth_gbps * 1e9);
  models::GemmEfficiency d;
  EXPECT_NEAR(fit.peak_fraction, d.peak_fraction, 0.02);
  EXPECT_NEAR(fit.memory_fraction, d.memory_fraction, 0.1);
  EXPECT_NEAR(fit.launch_s, d.launch_s, 5e-6);
}

// Without dropout its kernels do not run: a layer's memory-bound work
// shrinks, its products do not.
TEST(LlmTime, WithoutDropoutItsKernelsDoNotRun) {
  auto s = *find_transformer("gpt3-1.3b");
  auto l = layout(1, 1, 1, 1);
  auto none = l;
  none.dropout = false;
  auto with = a100().predict(s, l), without = a100().predict(s, none);
  EXPECT_LT(without.memory_bound, with.memory_bound);
  EXPECT_DOUBLE_EQ(without.compute, with.compute);
  EXPECT_LT(without.iteration, with.iteration);
}

// FP8: the four linear products on the FP8 unit (twice bf16's peak on an
// H100), the attention core and the output layer still bf16, and the casts
// paid for as memory-bound passes; a GPU without FP8 tensor cores is refused
// before the model is asked.
TEST(LlmTime, Fp8ProductsRunOnTheFp8UnitAndPayForTheirCasts) {
  auto hw = *find_builtin_hardware("h100");
  auto s = *find_transformer("llama2-70b");
  auto l = layout(4, 4, 2, 64);
  l.sequence_parallel = true, l.flash_attention = true, l.dropout = false;
  auto bf16 = l, fp8 = l;
  bf16.precision = Precision::kBf16, fp8.precision = Precision::kFp8;
  const LlmTimeModel m(hw);
  auto a = m.predict(s, bf16), b = m.predict(s, fp8);
  EXPECT_LT(b.compute, 0.75 * a.compute);  // the linears are most of it, at up to twice the rate
  EXPECT_GT(b.compute, 0.5 * a.compute);   // the attention core and the logits are not
  EXPECT_GT(b.memory_bound, a.memory_bound);
  EXPECT_GT(b.optimizer, a.optimizer);  // the weights cast once an iteration
  EXPECT_LT(b.iteration, a.iteration);
  EXPECT_DOUBLE_EQ(b.tp_comm, a.tp_comm);
  EXPECT_FALSE(missing_precision_unit(hw, Precision::kFp8));
  auto why = missing_precision_unit(*find_builtin_hardware("a100-80gb"), Precision::kFp8);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("FP8"), std::string::npos) << *why;
  EXPECT_FALSE(missing_precision_unit(*find_builtin_hardware("a100-80gb"), Precision::kBf16));
}

// FP8 products run at the GPU's measured share of the FP8 peak: below the
// share 16-bit products reach of theirs, so FP8 saves less than half of
// the linears' time. The 16-bit run does not depend on it.
TEST(LlmTime, Fp8ProductsReachTheirMeasuredShareOfTheFp8Peak) {
  auto hw = *find_builtin_hardware("h100");
  EXPECT_NEAR(hw.gpu.fp8_matmul_share, 0.709 / 0.803, 1e-12);
  auto unmeasured = hw;
  unmeasured.gpu.fp8_matmul_share = 1;
  auto s = *find_transformer("llama2-70b");
  auto l = layout(4, 4, 2, 64);
  l.sequence_parallel = true, l.flash_attention = true, l.dropout = false;
  l.precision = Precision::kFp8;
  auto shared = LlmTimeModel(hw).predict(s, l), full = LlmTimeModel(unmeasured).predict(s, l);
  const double slower = 1 / hw.gpu.fp8_matmul_share - 1;
  // The linears are most of the products, not all: the attention core and
  // the logits stay 16-bit.
  EXPECT_GT(shared.compute - full.compute, 0.6 * slower * full.compute);
  EXPECT_LT(shared.compute - full.compute, slower * full.compute);
  EXPECT_DOUBLE_EQ(shared.memory_bound, full.memory_bound);
  l.precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(LlmTimeModel(hw).predict(s, l).iteration, LlmTimeModel(unmeasured).predict(s, l).iteration);
}

// The slowest stage sets the pace: an output layer over a 128k vocabulary
// makes the last stage of an even split the slowest; a layer moved off it
// to the stages between shortens the iteration, too many make a stage
// between the slowest and lengthen it again. The end stages hold fewer
// layers' weights and so reduce fewer gradients.
TEST(LlmTime, LighterEndStagesBalanceThePipeline) {
  auto s = *find_transformer("llama3-8b");  // 32 layers, 128,256 words
  auto even = layout(1, 4, 1, 64);
  even.flash_attention = true, even.dropout = false, even.precision = Precision::kBf16;
  const LlmTimeModel m(*find_builtin_hardware("h100"));
  auto lighter = even, lightest = even;
  lighter.last_stage_layers = 6, lighter.first_stage_layers = 8;     // 9 on each stage between
  lightest.last_stage_layers = 2, lightest.first_stage_layers = 8;   // 11 on each stage between
  ASSERT_FALSE(check_layout(s, lighter).has_value());
  ASSERT_FALSE(check_layout(s, lightest).has_value());
  auto a = m.predict(s, even), b = m.predict(s, lighter), c = m.predict(s, lightest);
  EXPECT_LT(b.iteration, a.iteration);
  EXPECT_GT(c.iteration, b.iteration);
  // The last stage's step, the slowest when even, holds the output layer's products.
  EXPECT_GT(a.compute, b.compute);
  // A stage between sets the pace of the lightest splits: 11 and 10 layers' work.
  auto light = even;
  light.last_stage_layers = 4, light.first_stage_layers = 8;  // 10 on each stage between
  EXPECT_NEAR(c.compute / m.predict(s, light).compute, 11.0 / 10, 1e-9);
}

// Gradients reduced in bf16 move half the bytes of fp32 ones: the ring's
// bandwidth term halves, its latency does not.
TEST(LlmTime, Bf16GradientsHalveTheDataParallelBytes) {
  auto s = *find_transformer("gpt3-1.3b");
  auto l = layout(1, 1, 16, 64);  // two nodes
  l.precision = Precision::kBf16;
  auto fp32 = a100().predict(s, l);
  l.grad_reduce_in_bf16 = true;
  auto bf16 = a100().predict(s, l);
  EXPECT_LT(bf16.dp_comm, 0.55 * fp32.dp_comm);
  EXPECT_GT(bf16.dp_comm, 0.45 * fp32.dp_comm);
  EXPECT_DOUBLE_EQ(bf16.compute, fp32.compute);
}

// Tensor-parallel collectives overlapped with the products: less waits, but
// never less than one chunk in tp.
TEST(LlmTime, OverlappedTensorParallelCollectivesHideBehindTheProducts) {
  auto s = *find_transformer("gpt3-13b");
  auto l = layout(8, 1, 1, 16);
  l.sequence_parallel = true;
  auto plain = a100().predict(s, l);
  l.tp_comm_overlap = true;
  auto hidden = a100().predict(s, l);
  EXPECT_LT(hidden.tp_comm, 0.7 * plain.tp_comm);
  EXPECT_GE(hidden.tp_comm, plain.tp_comm / 8 * (1 - 1e-9));
  EXPECT_DOUBLE_EQ(hidden.compute, plain.compute);
}

// The gradient reduction overlapped with the last micro-batch's backward and
// the weights' gather with the next forward: what the other layers cannot
// cover waits, and at least one layer's share.
TEST(LlmTime, OverlappedDataParallelReductionHidesBehindTheBackward) {
  auto s = *find_transformer("gpt3-1.3b");
  auto l = layout(1, 1, 16, 64);  // two nodes
  l.distributed_optimizer = true;
  auto plain = a100().predict(s, l);
  l.overlap_grad_reduce = l.overlap_param_gather = true;
  auto hidden = a100().predict(s, l);
  EXPECT_LT(hidden.dp_comm, plain.dp_comm);
  EXPECT_GE(hidden.dp_comm, plain.dp_comm / s.layers * (1 - 1e-9));
  EXPECT_DOUBLE_EQ(hidden.compute, plain.compute);
}

// Across nodes a data-parallel ring with k members on each node runs through
// k network shares: sixteen single-GPU replicas on two 8-GPU nodes reduce
// their gradients at the node's network rate, not at one GPU's eighth of it.
TEST(LlmTime, ADataParallelRingAcrossNodesUsesEachMembersNetwork) {
  auto hw = *find_builtin_hardware("h100");
  auto s = *find_transformer("gpt3-1.3b");
  models::LlmTimeParams p;
  p.link_latency_s = 0;
  const LlmTimeModel m(hw, p);
  auto one_node = m.predict(s, layout(1, 1, 8, 64)), two_nodes = m.predict(s, layout(1, 1, 16, 64));
  // (15/16 over 400 GB/s) against (7/8 over NVLink's 450 GB/s).
  EXPECT_NEAR(two_nodes.dp_comm / one_node.dp_comm, (15.0 / 16 / 400) / (7.0 / 8 / 450), 1e-6);
  // With tp 8, one member on each node: one GPU's network share (50 GB/s)
  // for an eighth of the bytes over a ring of two: (1/2 x 1/8 / 50) against
  // (15/16 / 400).
  auto tp8 = m.predict(s, layout(8, 1, 2, 64));
  EXPECT_NEAR(tp8.dp_comm / two_nodes.dp_comm, (0.5 / 8 / 50) / (15.0 / 16 / 400), 1e-6);
}

// Tensor-parallel groups are consecutive ranks, and ranks fill nodes in
// order: tp 3 on 8-GPU nodes keeps every group on NVLink when the job fits in
// one node, and puts groups across nodes (the network) when it does not.
TEST(LlmTime, ATensorParallelGroupAcrossNodesIsPricedOnTheNetwork) {
  auto hw = *find_builtin_hardware("h100");
  auto s = *find_transformer("gpt3-175b");  // 96 heads: tp 3 and tp 4 both divide them
  const LlmTimeModel m(hw);
  auto per_replica = [&](int tp, int dp) { return m.predict(s, layout(tp, 1, dp, 8 * dp)).tp_comm; };
  // Within one node tp 3 and tp 4 move nearly the same bytes over NVLink
  // (2(t-1)/t of each all-reduce: 4/3 against 3/2).
  EXPECT_NEAR(per_replica(3, 2) / per_replica(4, 2), (4.0 / 3) / (3.0 / 2), 0.1);
  // Over 24 GPUs tp 3 groups straddle nodes; tp 4 groups never do.
  const double straddling = per_replica(3, 8) / per_replica(4, 8);
  EXPECT_GT(straddling, 5) << "NVLink 450 GB/s against a GPU's 50 GB/s network share";
}

// Pipeline stages are tp·cp·dp ranks apart: a pipeline of 16 stages of one
// GPU spans two 8-GPU nodes, so a boundary crosses the network and the 1F1B
// steady state goes at its pace, however small tp·cp·dp is.
TEST(LlmTime, APipelineAcrossNodesSendsAtTheNetworksPace) {
  auto hw = *find_builtin_hardware("h100");
  auto s = *find_transformer("gpt3-1.3b");  // 24 layers: pp 8 and 24 divide them
  models::LlmTimeParams p;
  p.link_latency_s = 0;
  const LlmTimeModel m(hw, p);
  // pp 24 on three 8-GPU nodes against on one 32-GPU node: the same sends,
  // a GPU's 50 GB/s share of the network against NVLink's 450 GB/s.
  auto wide = hw;
  wide.node.gpus_per_node = 32;
  const LlmTimeModel one_node(wide, p);
  const double across = m.predict(s, layout(1, 24, 1, 64)).pp_comm;
  const double within = one_node.predict(s, layout(1, 24, 1, 64)).pp_comm;
  EXPECT_NEAR(across / within, 450.0 / 50, 1e-6) << across << " " << within;
  // Within one node either way, nothing changes.
  EXPECT_DOUBLE_EQ(m.predict(s, layout(1, 8, 1, 64)).pp_comm, one_node.predict(s, layout(1, 8, 1, 64)).pp_comm);
}

// Context parallelism: each rank runs its 1/cp of the sequence through the
// linears and 1/cp of the attention's queries against all the keys; the keys
// and values passing round the ring wait where the attention step does not
// cover them. A sequence that 2·cp does not divide is refused.
TEST(LlmTime, ContextParallelismSplitsTheSequence) {
  auto hw = *find_builtin_hardware("h100");
  auto s = *find_transformer("llama3-8b");
  s.seq = 32768;
  auto l = layout(1, 1, 1, 1);
  l.flash_attention = true, l.dropout = false;
  auto split = l;
  split.cp = 2;
  const LlmTimeModel m(hw);
  auto one = m.predict(s, l), two = m.predict(s, split);
  EXPECT_NEAR(two.compute / one.compute, 0.5, 0.02);  // every product halves (the logits, too)
  EXPECT_EQ(two.tp_comm, 0);  // at 32k positions a step's attention covers the next keys and values
  EXPECT_LT(two.iteration, one.iteration);
  auto shorter = s;
  shorter.seq = 1024;  // a step's attention is microseconds: the ring waits
  EXPECT_GT(m.predict(shorter, split).tp_comm, 0);
  EXPECT_EQ(split.gpus(), 2);
  auto odd = split;
  odd.cp = 3;
  EXPECT_TRUE(check_layout(s, odd));
  EXPECT_EQ(check_layout(s, odd)->field, "cp");
  EXPECT_FALSE(check_layout(s, split));
}

// Context parallelism runs only on fused attention kernels (Transformer Engine
// refuses the unfused one with it): a cp > 1 layout is priced fused whether or
// not the row asked for flash attention, in time and in memory.
TEST(LlmTime, ContextParallelismIsPricedOnFusedAttention) {
  auto hw = *find_builtin_hardware("h100");
  auto s = *find_transformer("llama3-8b");
  auto l = layout(1, 1, 1, 1);
  l.cp = 2, l.dropout = false;
  auto asked = l;
  asked.flash_attention = true;
  const LlmTimeModel m(hw);
  EXPECT_DOUBLE_EQ(m.predict(s, l).iteration, m.predict(s, asked).iteration);
  const models::LlmMemoryModel memory;
  EXPECT_DOUBLE_EQ(memory.predict(s, l).total(), memory.predict(s, asked).total());
  auto one = l;
  one.cp = 1;  // without context parallelism the request decides
  auto one_fused = one;
  one_fused.flash_attention = true;
  EXPECT_NE(m.predict(s, one).iteration, m.predict(s, one_fused).iteration);
}
