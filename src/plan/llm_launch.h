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
// Ranks are laid out by plan::layout_for (the same count on every host);
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
  // GPUs per host, one operating system: the launch's nodes and the ranks
  // each runs (NodeSpec::launch_gpus_per_host). REQUIRES: >= 1.
  int gpus_per_node = 8;
  // GPUs one NVLink domain joins where it spans several hosts (a GB200
  // NVL72's 72 over trays of 4): the plan priced them as one node, so a job
  // on several hosts must stay within a domain; the script says how. 0: a
  // domain is a host. Default: 0.
  int nvlink_domain_gpus = 0;
  long train_iters = 0;  // iterations to run (--train-iters)
  // Slurm's --time and Megatron-LM's --exit-duration-in-mins come from these
  // (0: not known). The job is given the predicted training time plus
  // kRunMargin (Megatron-LM's evaluation, the prediction's error) and
  // kStartupAllowance_s (Megatron-LM counts its exit duration from the
  // process's start: imports, data indexes, model build), then the save
  // reserve (5% of the limit, at least 15 minutes), and never less than the
  // deadline; a limit past the deadline is said in the script.
  double deadline_s = 0;
  double predicted_s = 0;
};

// The share the job's time limit adds to the predicted training time.
inline constexpr double kRunMargin = 0.10;
// Seconds the job's exit time adds for start-up before the first iteration.
inline constexpr double kStartupAllowance_s = 300;

// Slurm's time limit and Megatron-LM's exit time (seconds) for `o`; both 0
// when neither the deadline nor the prediction is known.
struct LlmTimeLimit {
  double limit_s = 0;
  double exit_s = 0;
  bool past_deadline = false;  // the predicted time with its margins exceeds the deadline
};
LlmTimeLimit llm_time_limit(const LlmLaunchOptions& o);

std::string megatron_torchrun_command(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout,
                                      const LlmLaunchOptions& o);
std::string megatron_slurm_script(const structure::TransformerSpec& spec, const structure::ParallelLayout& layout,
                                  const LlmLaunchOptions& o);
// Dispatches on "torchrun" or "slurm"; throws InputError (option --emit) otherwise.
std::string megatron_launch_spec(const std::string& kind, const structure::TransformerSpec& spec,
                                 const structure::ParallelLayout& layout, const LlmLaunchOptions& o);

}  // namespace trainplan::plan
