// Seconds per training iteration of a transformer under tensor, pipeline and
// data parallelism (structure/parallel_layout.h) on one kind of GPU
// (structure/gpu_catalog.h). docs/LLM.md gives the equations and sources.
//
// Per micro-batch and layer, on one GPU of a stage:
//   matrix products: QKV, output projection, FC1, FC2 (split by tp), and the
//     attention core QK^T and (softmax)·V as batched products (gemm_time.h);
//     backward = 2 × forward; full recomputation adds the forward again,
//     selective the attention core's.
//   memory-bound kernels: LayerNorms, dropouts, residual adds (split by tp
//     only with sequence parallelism), the activation function and the
//     softmax with its dropout (split by tp); bytes / (bandwidth ·
//     memory_fraction); backward counted kernel by kernel (the
//     softmax and dropout 5.5 passes against 4.5 forward, the rest about
//     twice the forward).
//   FP8 (Precision::kFp8): the four linear products on the FP8 unit, their
//     casts to FP8 as memory-bound passes.
//   tensor-parallel collectives: per layer 2 all-reduces forward and 2
//     backward of the sbh activations (ring: 2(t-1) steps, each a latency,
//     growing as (bytes / 64 KiB)^exponent where the hardware says so
//     (NodeSpec::collective_latency_exponent), and bytes/t over the link);
//     with sequence parallelism 2 all-gathers + 2 reduce-scatters forward and
//     4 + 2 backward (the all-gathers redone for the weight gradients);
//     with tp_comm_overlap what the products do not cover.
//   context parallelism (cp > 1): a rank's 1/cp of each sequence through
//     the linears, its queries against all keys in the attention, the keys
//     and values passed round a ring where the attention does not cover them.
// A stage's step is its layers plus, on the first and last stage, the
// embedding and the logits (with a vocabulary-parallel cross entropy), plus
// point-to-point sends of sbh/t bytes per virtual stage each way. The
// iteration, m micro-batches per replica:
//   m · t_slowest_stage + bubble, the bubble pp · t_mean_stage - t_slowest_stage
//   for 1F1B (the first micro-batch's forward and the last one's backward
//   through every stage) and (pp - 1)/vpp · t_mean_stage interleaved
//   + exposed data-parallel gradient reduction (a ring across nodes through
//     each of the group's members on a node; with overlap_grad_reduce and
//     overlap_param_gather what the stage's backward and forward do not
//     cover) + optimizer step
// Two uses: the datasheet alone (default parameters) and calibrated
// (fit() scales the efficiency factors to measured iterations).
#pragma once
#include <string>
#include <vector>

#include "models/gemm_time.h"
#include "structure/gpu_catalog.h"
#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::models {

struct LlmTimeParams {
  // Matrix products and memory-bound kernels (gemm_time.h).
  GemmEfficiency gemm;
  // The share of a link's one-way bandwidth that NCCL's ring collectives and
  // point-to-point sends reach. Default: 0.8.
  double link_fraction = 0.8;
  // Seconds per collective step (a ring of n ranks takes 2(n-1) steps for an
  // all-reduce) and per point-to-point send; of a 64 KiB step where the
  // hardware's collective_latency_exponent is not 0. Default: 1e-5.
  double link_latency_s = 1e-5;
  // The share of the data-parallel gradient reduction hidden behind the
  // backward pass. Default: 0 (Megatron-LM's default, no overlap).
  double dp_overlap = 0;
  // Bytes moved per parameter by the optimizer step: Adam reads the fp32
  // master weight, gradient and two moments and writes three of them and the
  // 16-bit copy (30), the gradient norm and overflow check read the gradient
  // twice (8), zeroing writes it (4). Default: 42. Divided by dp with the
  // distributed optimizer.
  double optimizer_bytes_per_param = 42;

  // Host-side costs the kernels above leave out (Python, launches of the
  // kernels not modelled, logging, deterministic algorithms): seconds per
  // iteration, and per layer per micro-batch (forward and backward) on a
  // stage. Default: 0 each (the datasheet model has none).
  double iteration_overhead_s = 0;
  double layer_overhead_s = 0;
  // fit() fits the two overheads above (within [0, 10] s) instead of the
  // efficiency factors, which stay as given: runs of small models, which are
  // most of what measures overheads, cannot tell a slow kernel from a host
  // delay. Needs three distinct configurations, one more than it fits (else
  // the factors are fitted as without it). Default: false.
  bool fit_overheads = false;
  // fit() fits the three fractions, the link latency (within [0, 0.1] s) and
  // the two overheads together: for a machine whose datasheet says little
  // about what a framework reaches (a CPU, where each operator's dispatch
  // and each collective's hand-off through the kernel cost more than the
  // datasheet's microseconds). Needs eight distinct configurations (else the
  // factors alone are fitted). Default: false.
  bool fit_all = false;
  // fit() draws each fitted fraction (peak, link, memory) toward its
  // starting value: a normal prior on the fraction's logarithm with this
  // standard deviation, weighed against the measured iterations' relative
  // errors, taken as normal with standard deviation `relative_noise` (a
  // maximum a posteriori fit). A few runs often cannot tell the fractions
  // apart (five runs of one model, where a slower link and slower kernels
  // explain them equally); the prior keeps what they do not determine near
  // the datasheet's instead of wherever the search stopped, and costs a
  // fraction the rows do ask for little (one standard deviation is a factor
  // of e). 0: no prior. Defaults: 1.0 and 0.05 (Megatron's runs repeat to a
  // few per cent).
  double fraction_prior_log_sd = 1.0;
  double relative_noise = 0.05;
};

// Seconds by part for one iteration.
struct LlmTimeBreakdown {
  double iteration = 0;
  double stage_step = 0;        // one micro-batch's forward and backward on the slowest stage
  double mean_stage_step = 0;   // the same averaged over the stages
  double compute = 0;           // matrix products per iteration on the slowest stage
  double memory_bound = 0;      // memory-bound kernels per iteration on the slowest stage
  double tp_comm = 0;           // tensor-parallel collectives per iteration, and the context-parallel ring's wait
  double pp_comm = 0;           // point-to-point sends per iteration
  double bubble = 0;            // the pipeline bubble
  double dp_comm = 0;           // exposed gradient reduction (and parameter all-gather)
  double optimizer = 0;         // the optimizer step
  double flops_per_gpu = 0;     // model FLOPs per GPU per iteration (without recomputation)
};

// One measured iteration: a shape, a layout and the seconds.
struct LlmTimeSample {
  structure::TransformerSpec spec;
  structure::ParallelLayout layout;
  double seconds = 0;
};

// The least a fitted efficiency fraction may be (LlmTimeModel::fit).
inline constexpr double kFractionFloor = 0.02;

class LlmTimeModel {
 public:
  explicit LlmTimeModel(structure::HardwareProfile hw, LlmTimeParams p = {})
      : hw_(std::move(hw)), given_(p), params_(p) {}

  // Scales the efficiency factors (peak_fraction, then link_fraction, then
  // memory_fraction: as many as the distinct samples allow, at most three;
  // with fit_overheads the two overheads instead)
  // by bounded Levenberg-Marquardt on relative errors, each within
  // [kFractionFloor, 1], the fractions under the prior of
  // LlmTimeParams::fraction_prior_log_sd. Every fit starts from the given
  // parameters (a second fit does not start from, or centre its prior on,
  // the first). Throws InputError on no samples.
  void fit(const std::vector<LlmTimeSample>& samples);
  // REQUIRES: check_layout(spec, layout) is nullopt.
  LlmTimeBreakdown predict(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout) const;

  // The parameters predictions use: the given ones, after a fit the fitted.
  const LlmTimeParams& params() const { return params_; }
  // The parameters the model was made with.
  const LlmTimeParams& given_params() const { return given_; }
  const structure::HardwareProfile& hardware() const { return hw_; }
  // Factors fitted (0 before fit or for the datasheet use).
  int fitted_factors() const { return fitted_factors_; }
  // What the last fit fitted: "efficiency", "overheads" or "all" ("" before
  // a fit). Less than asked for when the samples cannot carry it: fit_all
  // needs 8 samples of 8 distinct configurations, fit_overheads 3 distinct
  // configurations; short of that the efficiency factors are fitted.
  const std::string& fitted_mode() const { return fitted_mode_; }
  // The distinct configurations the last fit saw: samples the model times
  // alike (the same products, collectives and memory-bound work) count once.
  int fitted_configurations() const { return fitted_configurations_; }

 private:
  structure::HardwareProfile hw_;
  LlmTimeParams given_;
  LlmTimeParams params_;
  int fitted_factors_ = 0;
  std::string fitted_mode_;
  int fitted_configurations_ = 0;
};

// The blocking collectives of one iteration on a rank of the first stage, as
// the model counts them: the layers' tensor-parallel all-reduces (none
// counted with sequence parallelism, whose collectives are all-gathers and
// reduce-scatters; the embedding's left out) and the data-parallel gradient
// all-reduce (none counted with the distributed optimizer).
struct LlmCollectives {
  double tp_bytes = 0;  // one all-reduce's buffer
  double tp_count = 0;  // all-reduces per iteration
  double dp_bytes = 0;  // the gradient buffer, reduced once per iteration
};
LlmCollectives llm_collectives(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout);

// Model FLOPs of one iteration (forward and backward, no recomputation) for
// the whole job: 3 × (per layer 2·tokens·(params-like products) + attention
// core) × layers + the logits.
double llm_model_flops(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout);

}  // namespace trainplan::models
