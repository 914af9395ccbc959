// Memory per GPU of a transformer trained with tensor, pipeline and data
// parallelism (structure/parallel_layout.h), on the most loaded pipeline
// stage. docs/LLM.md gives the equations and their sources.
//
//   weights, gradients, optimizer: parameters on the stage / tp, times 2, 4
//     and 12 bytes in mixed precision (Megatron's 18 bytes per parameter:
//     16-bit weights, fp32 main gradients, fp32 master weights and Adam's two
//     moments); 4, 4, 8 in fp32; in PyTorch AMP with fp32 master weights
//     4 + 2 (autocast's bf16 copies), 4, 8. The distributed optimizer divides the
//     optimizer bytes (and, in fp32, nothing else) by dp.
//   activations (Korthikanti et al. 2022, eq. 1-6), bytes per layer and
//     micro-batch for 16-bit activations, h = hidden, s = seq, b = micro-batch:
//       none       sbh(10 + 24/t + 5as/(ht))      sequence parallel: sbh(34 + 5as/h)/t
//       selective  sbh(10 + 24/t)                 sequence parallel: 34·sbh/t
//       full       2sbh (the layer input)         sequence parallel: 2sbh/t
//     generalised to grouped-query attention and other MLP widths (the 24
//     is 8sbh of attention and 16sbh of a 4h-wide MLP; docs/LLM.md).
//     Layers in flight on stage k under Megatron-LM's 1F1B: layers/pp per
//     micro-batch times min(pp - k, micro-batches); interleaved (vpp > 1),
//     chunks of layers/(pp·vpp) layers times min(m·vpp, (pp-k-1)·2 +
//     (vpp-1)·pp + 1), which on stage 0 is Korthikanti's 1 + (pp-1)/(pp·vpp).
//   embedding and logits: the first stage keeps the embedding's output and
//     dropout mask per micro-batch in flight; the last stage the output
//     layer's input and the loss's logits of one micro-batch: 6 bytes per
//     element in 16-bit mixed precision (16-bit logits and the fp32 copy of
//     the cross entropy), 4 in fp32, 12 in PyTorch AMP.
//   recompute working set: what recomputing one layer in its backward
//     materialises beyond what is kept (the layer's activations under full
//     recomputation, its unfused scores under selective), once a stage.
//   overhead: a constant (CUDA context, allocator slack), fitted or set.
#pragma once
#include <vector>

#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::models {

struct LlmMemoryParams {
  // Bytes per GPU added to every prediction: the CUDA context, NCCL buffers
  // and allocator fragmentation. Default: 0 (none until fitted).
  double overhead_bytes = 0;
};

// Bytes per GPU on the most loaded stage, by part.
struct LlmMemoryBreakdown {
  int stage = 0;  // 0-based index of the most loaded stage
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;         // the transformer layers' activations in flight
  double embedding_logits = 0;    // the embedding's and the output layer's buffers
  // What recomputing one layer in the backward materialises beyond the
  // activations kept: under full recomputation the layer's activations, under
  // selective its attention scores when the attention is unfused.
  double recompute_working = 0;
  double overhead = 0;
  // Of weights + gradients + optimizer, the transformer layers' share (the
  // rest is the embedding, the output layer and the final norm).
  double layer_states = 0;
  double total() const {
    return weights + gradients + optimizer + activations + embedding_logits + recompute_working + overhead;
  }
};

// One measured run: a shape, a layout and the peak memory per GPU.
struct LlmMemorySample {
  structure::TransformerSpec spec;
  structure::ParallelLayout layout;
  double bytes = 0;
};

class LlmMemoryModel {
 public:
  explicit LlmMemoryModel(LlmMemoryParams p = {}) : params_(p) {}

  // Fits the overhead: the median of measured minus predicted bytes, at
  // least 0. Throws InputError on no samples.
  void fit(const std::vector<LlmMemorySample>& samples);
  // REQUIRES: check_layout(spec, layout) is nullopt.
  LlmMemoryBreakdown predict(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout) const;
  // One stage's memory (0 <= stage < pp).
  LlmMemoryBreakdown predict_stage(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout,
                                   int stage) const;

  const LlmMemoryParams& params() const { return params_; }

 private:
  LlmMemoryParams params_;
};

// Activation bytes of one layer for one micro-batch (the table above).
double layer_activation_bytes(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout);
// One layer's unfused attention scores as the forward makes them (5as²b/t,
// 2as²b/t without dropout; the queries' share s/cp), bytes; 0 where the
// attention is fused.
double unfused_scores_bytes(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout);
// Layer-activations in flight on the first stage, in layers (the 1F1B and
// interleaving factor above times the first stage's layers).
double layers_in_flight(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout);

}  // namespace trainplan::models
