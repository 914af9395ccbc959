// The parallel configuration of a transformer training job (Megatron-LM
// style, structure/parallel_layout.h) that trains a token budget at the least
// cost, found by exhaustive search over every valid configuration.
//
// The space: tp · pp · dp <= max_gpus, past one node a whole number of nodes
// and past one host a whole number of hosts (a launcher starts as many ranks
// on every host; a GB200 NVL72's node, its NVLink domain, has hosts of 4), with
//   tp <= the GPUs of a node, dividing the heads, key/value groups and MLP width
//     (a tp that does not divide the node's GPUs puts groups across nodes,
//     and is priced on the network);
//   pp dividing the layers; virtual stages v > 1 only with pp > 1, pp·v
//     dividing the layers and the micro-batches per replica divisible by pp
//     (Megatron-LM's interleaved schedule requires it);
//   dp and micro-batch b with b·dp dividing the global batch;
//   recomputation none, selective or full; the distributed optimizer on or
//     off (only with dp·cp > 1, the ranks it shards over); sequence
//     parallelism on or off (only with tp > 1).
// A configuration whose predicted memory (models/llm_memory.h, the most
// loaded stage) exceeds the GPU's memory less `memory_reserve_bytes` is never
// chosen. Time to train = ceil(tokens / (global_batch · seq)) iterations ×
// the predicted iteration (models/llm_time.h); cost = GPUs × that time.
//
// Objective: without a GPU-hour budget, the fewest GPU-hours among the
// configurations that meet the deadline (if any); with one, the shortest
// time among those within the budget (and the deadline). Ties go to the other
// quantity, then to fewer GPUs. When nothing qualifies the result names the
// constraint that fails (memory, deadline, GPU-hour budget) and by how much.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/llm_memory.h"
#include "models/llm_time.h"
#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::plan {

struct LlmPlanOptions {
  // ---- The job ----
  // Tokens to train. REQUIRES: > 0.
  double tokens = 0;
  // Sequences per iteration over all replicas (fixed: it is a training
  // hyper-parameter, not a systems choice). REQUIRES: >= 1.
  int global_batch = 0;
  // Precision of every configuration. Default: bf16.
  structure::Precision precision = structure::Precision::kBf16;
  // Fused attention for every configuration (ParallelLayout::flash_attention);
  // layouts with cp > 1 have it whatever this says (Megatron-Core runs
  // context parallelism on fused kernels only). Default: false.
  bool flash_attention = false;
  // Dropout in every configuration (ParallelLayout::dropout). Default: true.
  bool dropout = true;
  // An fp32 residual stream (ParallelLayout::fp32_residual). REQUIRES: a
  // 16-bit or FP8 precision (in fp32 it is fp32 already). Default: false.
  bool fp32_residual = false;
  // Communication overlapped with computation in every configuration
  // (ParallelLayout::overlap_grad_reduce, overlap_param_gather with the
  // distributed optimizer, tp_comm_overlap where tp > 1). Default: false.
  bool overlap = false;
  // Gradients accumulated and reduced in bf16 in every configuration
  // (ParallelLayout::grad_reduce_in_bf16). REQUIRES: bf16, amp-fp32-master or
  // fp8 precision (Megatron-LM reads it with --bf16 only). Default: false.
  bool grad_reduce_in_bf16 = false;

  // ---- The search space ----
  // Most GPUs a configuration may use (tp·cp·pp·dp). REQUIRES: >= 1.
  int max_gpus = 8;
  // Fewest GPUs it may use: min_gpus = max_gpus asks for the best layout on
  // exactly that many (where GPU-hours rank as time does). REQUIRES: 1 to
  // max_gpus. Default: 1.
  int min_gpus = 1;
  // Most context-parallel ranks: cp is searched over the powers of two up
  // to it that split the sequence into 2·cp chunks. Default: 1 (none).
  int max_cp = 1;
  // GPUs per node: tensor parallelism stays within a node, and layouts past
  // one node take whole nodes. The time model prices nodes of this size, each
  // GPU with the hardware's share of the network (app::make_llm_plan). 0: the
  // hardware profile's. Default: 0.
  int gpus_per_node = 0;
  // Also the pipeline splits that count the embedding and the loss as a
  // layer each (Megatron-Core's --account-for-embedding-in-pipeline-split
  // and --account-for-loss-in-pipeline-split): the end stages (with two
  // stages, their first and last virtual chunks) one layer lighter than the
  // others, for every pp and virtual_stages whose pp·virtual_stages divides
  // layers + 2 in chunks of at least 2
  // (structure::end_stage_layers_with_embedding_and_loss_counted). They
  // balance a heavy output layer and allow stage counts the even split
  // does not (Llama 3.1 405B's 126 layers on 8 × 8 chunks). Default: false.
  bool uneven_end_stages = false;

  // ---- Constraints and objective ----
  // Seconds the training may take; 0: no deadline. Default: 0.
  double deadline_s = 0;
  // GPU-hours the training may use; > 0 switches the objective to the
  // shortest time within the budget. Default: 0 (minimise GPU-hours).
  double gpu_hour_budget = 0;
  // What one GPU-hour costs, in the user's currency: each configuration's
  // cost is its GPU-hours times it. Within one GPU type it ranks as
  // GPU-hours do; it makes plans on different GPUs comparable. 0: no price.
  // Default: 0.
  double price_per_gpu_hour = 0;
  // What the training may cost, in price_per_gpu_hour's currency; > 0
  // switches the objective to the shortest time within it (the GPU-hours it
  // buys at that price). REQUIRES: price_per_gpu_hour > 0 and no
  // gpu_hour_budget when set. Default: 0 (none).
  double cost_budget = 0;
  // Bytes of each GPU's memory kept free for what the memory model leaves out
  // (CUDA context, NCCL buffers, allocator fragmentation). Default: 2 GiB.
  double memory_reserve_bytes = 2.0 * 1024 * 1024 * 1024;
  // Alternatives returned, best first. Default: 5.
  int top_k = 5;
  // Also return the cost-time frontier (LlmPlanResult::frontier): what each
  // deadline costs. Keeps the frontier so far while searching (a map lookup
  // per configuration that fits). Default: false.
  bool frontier = false;

  // ---- Reporting (no effect on the result) ----
  // Called from the search about every 2^16 configurations with how many
  // were enumerated so far, for a progress line on a long search; empty:
  // none. Default: empty.
  std::function<void(long enumerated)> on_progress;
};

// One evaluated configuration.
struct LlmCandidate {
  structure::ParallelLayout layout;
  double iteration_s = 0;
  double train_s = 0;        // iterations × iteration_s
  double gpu_hours = 0;      // gpus × train_s / 3600
  double memory_bytes = 0;   // predicted, most loaded stage
  double headroom_bytes = 0; // GPU memory − memory_bytes (negative: does not fit)
};

struct LlmPlanResult {
  std::vector<LlmCandidate> top;  // best first; empty when nothing qualifies
  long iterations = 0;            // per training run: ceil(tokens / (global_batch · seq))
  long enumerated = 0;            // configurations in the space
  long fit = 0;                   // of them, predicted to fit in memory
  long qualified = 0;             // of them, within the deadline and the budget
  double capacity_bytes = 0;      // GPU memory less the reserve
  // When `top` is empty: "memory", "deadline", "gpu_budget", "precision"
  // (the GPU lacks the precision's unit: nothing is enumerated),
  // "attention" (fused attention asked of a GPU without it) or "gpus" (no
  // layout has from min_gpus to max_gpus GPUs), a sentence
  // saying by how much, and the configuration closest to qualifying.
  std::string failing;
  std::string explanation;
  // For memory, deadline, gpu_budget and cost_budget: the constraint's
  // limit and the closest configuration's value of it, in `unit` ("GiB",
  // "s", "GPU-hours" or the price's currency, "cost").
  struct Shortfall {
    double limit = 0, value = 0;
    std::string unit;
  };
  std::optional<Shortfall> shortfall;
  std::optional<LlmCandidate> closest;
  // With LlmPlanOptions::frontier: the configurations that fit and that no
  // other beats on both training time and GPU-hours, fastest first (so
  // GPU-hours fall along it). The cheapest within a deadline D is the last
  // one with train_s <= D; the deadline and budget do not filter it.
  std::vector<LlmCandidate> frontier;
  // What the search left out of what was asked, and why (a --max-cp the GPU
  // cannot run), for people.
  std::vector<std::string> notes;
};

// "tp 8, cp 2, pp 4, vpp 2, dp 16, micro-batch 1, recompute selective, sequence
// parallel, distributed optimizer": a configuration in words.
std::string describe(const structure::ParallelLayout& layout);

// REQUIRES: validate(spec) passes. Throws InputError (naming the option:
// tokens, global_batch, max_gpus) on options outside their contracts.
LlmPlanResult plan_llm(const structure::TransformerSpec& spec, const models::LlmTimeModel& time,
                       const models::LlmMemoryModel& memory, const LlmPlanOptions& options);

}  // namespace trainplan::plan
