// How a transformer is trained across GPUs: tensor (tp), pipeline (pp) and
// data (dp) parallelism as Megatron-LM lays them out, the micro-batching,
// activation recomputation and precision. Plain data; the memory and time
// models read it (models/llm_memory.h, models/llm_time.h).
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "structure/transformer.h"

namespace trainplan::structure {

enum class Recompute {
  kNone,       // every activation is kept for the backward pass
  kSelective,  // the attention core (softmax, its dropout, QK^T) is recomputed
  kFull,       // only each layer's input is kept; the layer's forward runs again
};

enum class Precision {
  kFp16,  // mixed precision: fp16 weights and activations, fp32 main gradients and master weights
  kBf16,  // as kFp16 with bf16
  kFp32,  // everything fp32
  // PyTorch AMP with fp32 master weights ("amp-fp32-master"): fp32 weights,
  // gradients and Adam's two moments (16 bytes per parameter, no separate
  // master copy), bf16 autocast for the products and the activations.
  kAmpFp32Master,
  // FP8 training with Transformer Engine (Megatron-Core's --fp8-format
  // hybrid): each layer's four linear products in FP8 (E4M3 forward, E5M2
  // gradients) on the GPU's FP8 tensor cores, their inputs cast to FP8 and
  // saved so; everything else (the attention core, the output layer,
  // LayerNorms, communication, gradients, optimizer) as kBf16. Needs a GPU
  // with FP8 tensor cores (check_precision).
  kFp8,
};

struct ParallelLayout {
  int tp = 1;  // tensor-parallel ranks: split heads, key/value groups and the MLP width
  // Context-parallel ranks: split each sequence (Megatron-Core's
  // --context-parallel-size: 2·cp load-balanced chunks, keys and values
  // passed round a ring for the attention). REQUIRES: 2·cp divides seq.
  int cp = 1;
  int pp = 1;  // pipeline stages: split the layers
  int dp = 1;  // data-parallel replicas
  // Model chunks per pipeline stage (interleaved 1F1B); 1: plain 1F1B.
  // REQUIRES: each stage's layers divisible by virtual_stages (evenly split
  // stages), or at least virtual_stages (uneven end stages).
  int virtual_stages = 1;
  // Transformer layers on the first and on the last pipeline stage, where
  // they differ from the even split (Megatron-Core's
  // --decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers):
  // lighter end stages leave room for the embedding and the output layer,
  // which the even split puts on top of their layers. 0: the even share.
  // The other stages split the rest evenly (stage_layers).
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  int micro_batch = 1;   // sequences per micro-batch
  int global_batch = 1;  // sequences per iteration, over all replicas
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;      // LayerNorm and dropout split over the sequence across tp (needs tp > 1 to matter)
  bool distributed_optimizer = false;  // fp32 master weights and Adam states sharded across dp
  Precision precision = Precision::kFp16;
  // A fused attention kernel (FlashAttention, cuDNN fused attention: what
  // Megatron-Core with Transformer Engine uses unless told otherwise): the
  // s x s scores are never stored or streamed through memory, and the backward
  // pass recomputes them. false: Megatron 2022's unfused softmax.
  bool flash_attention = false;
  // Dropout on the attention probabilities and after each residual branch
  // (Megatron-LM's default, p = 0.1): its 1-byte masks and the attention
  // dropout's output are stored for the backward, and its kernels run.
  // false: no dropout (p = 0, as Llama recipes and this project's GPT
  // trainer): neither is stored nor run.
  bool dropout = true;
  // The residual stream (each layer's input and output, and so the
  // LayerNorms' inputs that are kept for the backward) in fp32: Megatron-LM's
  // --fp32-residual-connection, and what PyTorch autocast does to a model
  // whose embedding is fp32. false: in the activations' 16-bit type.
  bool fp32_residual = false;
  // Communication hidden behind computation, as Megatron-Core does it when
  // asked (--overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap;
  // NeMo's recipes ask for all three): the data-parallel gradient reduction
  // bucket by bucket during the last micro-batch's backward pass; with the
  // distributed optimizer, the all-gather of the updated weights during the
  // next iteration's first forward; the tensor-parallel all-gathers and
  // reduce-scatters (or all-reduces) chunk by chunk beside the products
  // that use them (Transformer Engine's userbuffers). false: each waits.
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  bool tp_comm_overlap = false;
  // The gradients accumulated and reduced in bf16 rather than fp32
  // (Megatron-LM's --grad-reduce-in-bf16; NeMo's FP8 performance recipes set
  // grad_reduce_in_fp32 False): 2 bytes a parameter held, and half the
  // data-parallel reduction's bytes. Meaningful for bf16 and fp8 training.
  bool grad_reduce_in_bf16 = false;

  int gpus() const { return tp * cp * pp * dp; }
  // Whether the end stages' layers are given rather than the even share.
  bool uneven() const { return pp > 1 && (first_stage_layers > 0 || last_stage_layers > 0); }
  // Whether Megatron-Core runs this layout's attention on fused kernels:
  // asked for (flash_attention), or context parallelism, which runs on
  // nothing else (Transformer Engine refuses the unfused kernel with it).
  bool fused_attention() const { return flash_attention || cp > 1; }
  // Micro-batches per replica per iteration: global_batch / (micro_batch·dp).
  int micro_batches() const { return global_batch / (micro_batch * dp); }
};

// The largest tp, pp, dp, virtual_stages, micro_batch, global_batch and GPU
// count (tp·pp·dp) a layout may have: 2^24, far past any cluster, and small
// enough that their products cannot overflow.
constexpr int kMaxLayoutCount = 1 << 24;

// Why a layout cannot train a spec: the field at fault (a column name of the
// configuration CSV: tp, pp, dp, virtual_stages, micro_batch, global_batch)
// and a message.
struct LayoutProblem {
  std::string field;
  std::string message;
};

// nullopt when the layout is valid for the spec: every count >= 1, tp divides
// the heads, the key/value groups and the MLP width, 2·cp divides the
// sequence (when cp > 1), the layers split over the stages: evenly, each
// stage's over its virtual_stages; or the given end stages and the rest
// evenly over the stages between, each stage with a layer for each of its
// virtual_stages. micro_batch·dp divides global_batch.
std::optional<LayoutProblem> check_layout(const TransformerSpec& spec, const ParallelLayout& layout);

// Settings Megatron-LM refuses or ignores in the layout's precision, on any
// GPU (an fp32 residual in fp32, bf16 gradients in fp16 or fp32): a time or
// memory priced with them would not be a run's. Part of check_layout; the
// planner asks it of its options before searching.
std::optional<LayoutProblem> precision_setting_problem(const ParallelLayout& layout);

// Transformer layers on pipeline stage `stage` (0 to pp - 1): the given
// first or last stage's, else the even share of the rest.
// REQUIRES: check_layout(spec, layout) passed.
int stage_layers(const TransformerSpec& spec, const ParallelLayout& layout, int stage);

// Megatron-Core's --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split: the embedding and the output layer
// each count as one layer in the split, so the end stages hold one
// transformer layer fewer than the others. The first and last stages' layers
// that does (nullopt when layers + 2 is not a multiple of pp·virtual_stages).
std::optional<std::pair<int, int>> end_stage_layers_with_embedding_and_loss_counted(int layers, int pp,
                                                                                    int virtual_stages);

// "none", "selective", "full"; "fp16", "bf16", "fp32", "amp-fp32-master",
// "fp8" (also fp8-hybrid, fp8-ds, fp8-cs, fp8-delayed, fp8-current)
// (parsed in any case: "BF16" is bf16; also "no"/"off" for none, a bracketed
// note after the mode, and PyTorch's and Lightning's precision names:
// float16, half, 16-mixed; bfloat16, bf16-mixed; float32, float, 32-true).
std::string to_string(Recompute r);
std::string to_string(Precision p);
std::optional<Recompute> parse_recompute(const std::string& s);
std::optional<Precision> parse_precision(const std::string& s);

}  // namespace trainplan::structure
