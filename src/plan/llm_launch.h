// Launch specifications for a transformer configuration chosen by the LLM
// planner (plan/llm_planner.h): a Megatron-LM `torchrun` command line and an
// sbatch script (Slurm) that runs it on every node.
//
// The command runs Megatron-LM's `pretrain_gpt.py` (option `script`) with the
// shape (layers, hidden, heads, key/value groups, MLP width, SwiGLU, norms and
// biases, rotary or learned positions, tied embeddings, sequence length), the
// layout (tensor, pipeline and virtual stages, sequence parallelism,
// recomputation, distributed optimizer, micro and global batch), the
// precision and the iterations that train the token budget. Data and
// tokenizer arguments are the user's: the command ends with $DATA_ARGS.
// Ranks are laid out by plan::layout_for (the same count on every node);
// torchrun's rendezvous uses $MASTER_ADDR and $MASTER_PORT (set by the
// sbatch script from the first node of the allocation).
#pragma once
#include <string>

#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::plan {

struct LlmLaunchOptions {
  std::string job_name = "trainplan-llm";
  // Megatron-LM's training script, run by torchrun. Default: pretrain_gpt.py.
  std::string script = "pretrain_gpt.py";
  // GPUs per node (the nodes and ranks per node). REQUIRES: >= 1.
  int gpus_per_node = 8;
  long train_iters = 0;     // iterations to run (--train-iters)
  double time_limit_s = 0;  // > 0: Slurm --time
};

std::string megatron_torchrun_command(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout,
                                      const LlmLaunchOptions& o);
std::string megatron_slurm_script(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout,
                                  const LlmLaunchOptions& o);
// Dispatches on "torchrun" or "slurm"; throws InputError (option --emit) otherwise.
std::string megatron_launch_spec(const std::string& kind, const structure::TransformerSpec& spec,
                                 const structure::ParallelLayout& layout, const LlmLaunchOptions& o);

}  // namespace trainplan::plan
