#include "models/llm_memory.h"

#include <algorithm>

#include "core/error.h"
#include "core/median.h"

namespace trainplan::models {

using structure::ParallelLayout;
using structure::Precision;
using structure::Recompute;
using structure::TransformerSpec;

namespace {

double activation_scale(Precision p) { return p == Precision::kFp32 ? 2.0 : 1.0; }

// Micro-batches (in units of a whole stage's layers) whose activations stage
// k holds at the peak of Megatron-LM's 1F1B schedule: its warm-up forwards
// plus the first steady-state one, at most every forward of the iteration.
// Interleaved, the unit of work is a model chunk of layers/(pp·vpp) layers and
// the warm-up is (pp - k - 1)·2 + (vpp - 1)·pp chunks (schedules.py,
// forward_backward_pipelining_with_interleaving); on stage 0 this is
// Korthikanti et al.'s factor pp·(1 + (pp - 1)/(pp·vpp)), while the last stage
// holds (vpp - 1)·pp + 1 chunks, not one micro-batch.
double in_flight(const ParallelLayout& l, int stage) {
  double m = l.micro_batches();
  if (l.virtual_stages <= 1 || l.pp <= 1) return std::min(double(l.pp - stage), m);
  double v = l.virtual_stages;
  double warmup = double(l.pp - stage - 1) * 2 + (v - 1) * l.pp;
  return std::min(m * v, warmup + 1) / v;
}

// Bytes per logit element held at the peak of the loss on the last stage.
// Megatron-LM (16-bit): the output layer's 16-bit logits and the fp32 copy
// its vocab-parallel cross entropy makes and turns into the softmax in place;
// in backward the fp32 gradient (the softmax, in place) and its 16-bit cast.
// fp32: the logits alone (the cast is a no-op). PyTorch AMP
// (F.cross_entropy(logits.float())): in backward the fp32 log-softmax it
// saved, its gradient and the fp32 input gradient.
double logit_bytes(Precision p) {
  switch (p) {
    case Precision::kFp32: return 4;
    case Precision::kAmpFp32Master: return 12;
    default: return 6;
  }
}

// One layer's unfused attention scores in 16-bit units: the queries' share
// s/cp against all s keys, 5 (2 without dropout) per head and pair.
double scores_units(const TransformerSpec& s, const ParallelLayout& l) {
  return (l.dropout ? 5.0 : 2.0) * s.heads * (double(s.seq) / l.cp) * s.seq * l.micro_batch / l.tp;
}

}  // namespace

double layer_activation_bytes(const TransformerSpec& s, const ParallelLayout& l) {
  // A rank keeps its 1/cp of each sequence (context parallelism).
  const double q = double(s.seq) / l.cp;
  double sbh = q * l.micro_batch * s.hidden;
  double sb = q * l.micro_batch;
  double t = l.tp;
  double sp = l.sequence_parallel ? t : 1.0;
  double scale = activation_scale(l.precision);
  // An fp32 residual stream doubles what is kept of it: the layer's input
  // (all full recomputation keeps) and the two LayerNorms' inputs.
  const bool wide = l.fp32_residual && l.precision != Precision::kFp32;
  if (l.recompute == Recompute::kFull) return scale * (wide ? 4 : 2) * sbh / sp;
  double kv_width = double(s.kv()) * s.head_dim();
  // Korthikanti's 10sbh: two LayerNorm inputs, the QKV and FC1 inputs, two
  // dropout masks (1 byte an element; none without dropout).
  double replicated = (l.dropout ? 10 : 8) * sbh + (wide ? 4 * sbh : 0);
  // Korthikanti's 24sbh: Q and K for QK^T, V, the output projection's input (8sbh
  // with as many groups as heads) and the MLP's activations (16sbh for f = 4h).
  double mlp = s.gated_mlp ? 6 * sb * s.ffn() : 4 * sb * s.ffn();
  double split = 4 * sbh + 4 * sb * kv_width + mlp;
  double bytes = replicated / sp + split / t;
  // FP8: the four products keep their inputs for the backward in FP8, half
  // the 16-bit bytes: the QKV and FC1 inputs (sbh each, split as the
  // LayerNorms are), the projection's input (sbh) and FC2's (sb·f).
  if (l.precision == Precision::kFp8) bytes -= 2 * sbh / sp + (sbh + sb * s.ffn()) / t;
  // 5as²b: the softmax output, its dropout mask and the dropout output; 2as²b
  // without dropout, the softmax output alone (both the softmax's backward
  // and the product with V read it). A fused kernel keeps instead one fp32
  // log-sum-exp per row and head: 4 bytes whatever the training's precision.
  if (!l.fused_attention() && l.recompute == Recompute::kNone) bytes += scores_units(s, l);
  const double log_sum_exp = l.fused_attention() ? 4.0 * s.heads * q * l.micro_batch / t : 0.0;
  return scale * bytes + log_sum_exp;
}

double unfused_scores_bytes(const TransformerSpec& s, const ParallelLayout& l) {
  return l.fused_attention() ? 0 : activation_scale(l.precision) * scores_units(s, l);
}

double layers_in_flight(const TransformerSpec& s, const ParallelLayout& l) {
  return double(structure::stage_layers(s, l, 0)) * in_flight(l, 0);
}

LlmMemoryBreakdown LlmMemoryModel::predict_stage(const TransformerSpec& s, const ParallelLayout& l, int stage) const {
  LlmMemoryBreakdown m;
  m.stage = stage;
  double t = l.tp;
  bool first = stage == 0, last = stage == l.pp - 1;
  double h = s.hidden, V = s.vocab;
  const double stage_layers = structure::stage_layers(s, l, stage);
  double layer_params = stage_layers * s.layer_params() / t;
  double params = layer_params;
  if (first) params += V * h / t + (s.learned_positions ? double(s.seq) * h : 0);
  // The last stage holds the output layer: its own weights when untied, and
  // with pp > 1 a copy of the shared embedding when tied.
  if (last && (!s.tied_embeddings || (l.pp > 1))) params += V * h / t;
  if (last) params += s.biases ? 2 * h : h;

  // 16-bit weights with an fp32 master copy in the optimizer (Megatron), or
  // fp32 weights that are their own master (fp32, PyTorch AMP).
  bool master_copy = l.precision == Precision::kFp16 || l.precision == Precision::kBf16 || l.precision == Precision::kFp8;
  // The distributed optimizer shards over every rank that holds the same
  // weights: data- and context-parallel.
  double dp_shard = l.distributed_optimizer ? double(l.dp) * l.cp : 1.0;
  m.weights = params * (master_copy ? 2 : 4);
  // Autocast keeps a bf16 copy of every fp32 weight it casts until the
  // forward and backward are done.
  if (l.precision == Precision::kAmpFp32Master) m.weights += params * 2;
  // FP8: each layer weight's FP8 copy and its transpose, kept across the
  // micro-batches of an iteration.
  if (l.precision == Precision::kFp8) m.weights += layer_params * 2;
  m.gradients = params * (l.grad_reduce_in_bf16 ? 2 : 4);
  m.optimizer = params * (master_copy ? 12 : 8) / dp_shard;
  m.layer_states = (m.weights + m.gradients + m.optimizer) * layer_params / params;

  double layers = stage_layers * in_flight(l, stage);
  m.activations = layer_activation_bytes(s, l) * layers;
  // A recomputed layer's backward holds what its recomputation produced
  // until it is done, one layer at a time: what none keeps of a layer less
  // what this mode keeps. Under full recomputation the layer's activations
  // less its input; under selective, with unfused attention, its scores
  // (which at long sequences outgrow everything else), and with fused
  // attention nothing (its few statistics are kept either way).
  if (l.recompute != Recompute::kNone && stage_layers > 0) {
    ParallelLayout kept = l;
    kept.recompute = Recompute::kNone;
    m.recompute_working = layer_activation_bytes(s, kept) - layer_activation_bytes(s, l);
  }
  double sbh = double(s.seq) / l.cp * l.micro_batch * h, sp = l.sequence_parallel ? t : 1.0;
  double scale = activation_scale(l.precision);
  // Korthikanti et al. 2022, section 4.3: the embedding's dropout mask per
  // micro-batch in flight; the output layer's input and the logits.
  if (first && l.dropout) m.embedding_logits += scale * sbh / sp * in_flight(l, 0);
  if (last) m.embedding_logits += scale * 4 * sbh / t + logit_bytes(l.precision) * s.seq / l.cp * l.micro_batch * V / t;
  m.overhead = params_.overhead_bytes;
  return m;
}

LlmMemoryBreakdown LlmMemoryModel::predict(const TransformerSpec& s, const ParallelLayout& l) const {
  LlmMemoryBreakdown best = predict_stage(s, l, 0);
  // Stage 0 holds the most activations; the last one the logits. The stages
  // between hold fewer micro-batches than the first, and as many layers
  // unless the end stages' layers are given: then stage 1, the first of
  // them, may hold more.
  for (int stage : {l.pp - 1, l.uneven() && l.pp > 2 ? 1 : 0}) {
    if (stage <= 0 || stage >= l.pp) continue;
    auto m = predict_stage(s, l, stage);
    if (m.total() > best.total()) best = m;
  }
  return best;
}

void LlmMemoryModel::fit(const std::vector<LlmMemorySample>& samples) {
  if (samples.empty()) throw InputError("", 0, "", "no measured memory to fit the overhead on");
  std::vector<double> gaps;
  LlmMemoryModel bare;
  for (const auto& x : samples) gaps.push_back(x.bytes - bare.predict(x.spec, x.layout).total());
  params_.overhead_bytes = std::max(0.0, median(gaps));
}

}  // namespace trainplan::models
