#include "plan/llm_launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <utility>

#include "core/digits_apart.h"
#include "core/error.h"
#include "plan/launch_spec.h"
#include "profile/launcher.h"

namespace trainplan::plan {

using structure::ParallelLayout;
using structure::Precision;
using structure::Recompute;
using structure::TransformerSpec;

namespace {

// pretrain_gpt.py's arguments, one per continuation line; `exit_minutes` > 0
// stops the run (saving a checkpoint where --save is given) that long after
// it starts.
std::string megatron_args(const TransformerSpec& s, const ParallelLayout& l, const LlmLaunchOptions& o,
                          long exit_minutes = 0) {
  // Megatron-LM has no PyTorch-AMP mode: --bf16 keeps bf16 weights beside fp32 main weights, which
  // is not what an amp-fp32-master plan priced (fp32 weights and an autocast copy).
  if (l.precision == Precision::kAmpFp32Master)
    throw InputError("", 0, "--precision",
                     "amp-fp32-master (PyTorch autocast over fp32 weights) has no Megatron-LM launch: Megatron's "
                     "--bf16 keeps bf16 weights with fp32 main weights in the optimizer; plan with --precision bf16 "
                     "to emit one");
  std::vector<std::string> a;
  a.push_back(fmt::format("--tensor-model-parallel-size {}", l.tp));
  if (l.cp > 1) a.push_back(fmt::format("--context-parallel-size {}", l.cp));
  a.push_back(fmt::format("--pipeline-model-parallel-size {}", l.pp));
  // Lighter end stages: as the embedding and the loss counted in the split
  // where the layout is that one, else the end stages' own layer counts.
  const auto counted = structure::end_stage_layers_with_embedding_and_loss_counted(s.layers, l.pp, l.virtual_stages);
  const bool accounted =
      l.uneven() && counted && l.first_stage_layers == counted->first && l.last_stage_layers == counted->second;
  if (accounted) {
    a.push_back("--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split");
  } else if (l.uneven()) {
    if (l.first_stage_layers > 0) a.push_back(fmt::format("--decoder-first-pipeline-num-layers {}", l.first_stage_layers));
    if (l.last_stage_layers > 0) a.push_back(fmt::format("--decoder-last-pipeline-num-layers {}", l.last_stage_layers));
  }
  if (l.virtual_stages > 1 && l.uneven())
    a.push_back(fmt::format("--num-virtual-stages-per-pipeline-rank {}", l.virtual_stages));
  else if (l.virtual_stages > 1)
    a.push_back(fmt::format("--num-layers-per-virtual-pipeline-stage {}", s.layers / (l.pp * l.virtual_stages)));
  if (l.sequence_parallel) a.push_back("--sequence-parallel");
  if (l.distributed_optimizer) a.push_back("--use-distributed-optimizer");
  if (l.recompute == Recompute::kSelective) a.push_back("--recompute-granularity selective");
  if (l.recompute == Recompute::kFull)
    a.push_back("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
  a.push_back(fmt::format("--num-layers {} --hidden-size {} --num-attention-heads {}", s.layers, s.hidden, s.heads));
  if (s.kv() != s.heads) a.push_back(fmt::format("--group-query-attention --num-query-groups {}", s.kv()));
  a.push_back(fmt::format("--ffn-hidden-size {}", s.ffn()));
  if (s.gated_mlp) a.push_back("--swiglu");
  if (!s.biases) a.push_back("--normalization RMSNorm --disable-bias-linear");
  a.push_back(s.learned_positions ? "--position-embedding-type learned_absolute" : "--position-embedding-type rope");
  if (!s.learned_positions && s.rotary_base > 0) a.push_back(fmt::format("--rotary-base {:.0f}", s.rotary_base));
  if (!s.learned_positions && s.rope_scaling) a.push_back("--use-rope-scaling");
  if (!s.tied_embeddings) a.push_back("--untie-embeddings-and-output-weights");
  a.push_back(fmt::format("--seq-length {} --max-position-embeddings {}", s.seq, s.seq));
  a.push_back(fmt::format("--micro-batch-size {} --global-batch-size {}", l.micro_batch, l.global_batch));
  a.push_back(fmt::format("--train-iters {}", o.train_iters));
  if (l.precision == Precision::kFp16) a.push_back("--fp16");
  if (l.precision == Precision::kBf16) a.push_back("--bf16");
  if (l.precision == Precision::kFp8) a.push_back("--bf16 --fp8-format hybrid --transformer-impl transformer_engine");
  // The kernel the plan priced; context parallelism runs on fused kernels only. Transformer Engine's
  // cuDNN fused attention (as Megatron-LM's own Llama recipes), not "flash", which needs the separate
  // flash-attn package and turns the cuDNN kernels off.
  a.push_back(l.fused_attention() ? "--attention-backend fused" : "--attention-backend unfused");
  if (!l.dropout) a.push_back("--attention-dropout 0 --hidden-dropout 0");
  if (exit_minutes > 0) a.push_back(fmt::format("--exit-duration-in-mins {}", exit_minutes));
  if (l.fp32_residual) a.push_back("--fp32-residual-connection");
  if (l.overlap_grad_reduce) a.push_back("--overlap-grad-reduce");
  if (l.overlap_param_gather) a.push_back("--overlap-param-gather");
  if (l.tp_comm_overlap && l.sequence_parallel) a.push_back("--tp-comm-overlap");  // Megatron-LM asserts sp with it
  if (l.grad_reduce_in_bf16) a.push_back("--grad-reduce-in-bf16");
  a.push_back("$DATA_ARGS");
  std::string out;
  for (const auto& x : a) out += " \\\n    " + x;
  return out;
}

// "28 minutes", "12.5 hours", "41.3 days".
// `decimals` more figures where two texts must tell their times apart.
std::string hours_text(double s, int decimals = 0) {
  if (s < 3600) {
    const double m = decimals > 0 ? s / 60 : std::ceil(s / 60);
    return fmt::format("{:.{}f} minute{}", m, decimals, m == 1 && decimals == 0 ? "" : "s");
  }
  if (s < 72 * 3600.0) return fmt::format("{:.{}f} hours", s / 3600, 1 + decimals);
  return fmt::format("{:.{}f} days", s / 86400, 1 + decimals);
}

// The two times as texts that differ where the times do.
std::pair<std::string, std::string> hours_apart(double a, double b) {
  const int decimals = digits_apart([](double s, int d) { return hours_text(s, d); }, a, b, 0, 4);
  return {hours_text(a, decimals), hours_text(b, decimals)};
}

// Where an NVLink domain spans hosts, the plan priced a domain's GPUs as one
// node: a job on several hosts must hold whole groups of them in one domain.
std::string nvlink_domain_note(const Layout& n, const LlmLaunchOptions& o) {
  if (o.nvlink_domain_gpus <= o.gpus_per_node || o.nvlink_domain_gpus % o.gpus_per_node != 0 || n.nodes <= 1)
    return "";
  const int hosts_per_domain = o.nvlink_domain_gpus / o.gpus_per_node;
  // Slurm takes a segment that divides the job's nodes: a job within one
  // domain is one segment; the planner's jobs past one domain are whole
  // domains, whose hosts then divide it.
  const int segment = n.nodes <= hosts_per_domain ? n.nodes : std::gcd(n.nodes, hosts_per_domain);
  return fmt::format(
      "# The plan prices each {} GPUs ({} hosts of {}) as one NVLink domain: {} of this job's {} nodes must\n"
      "# share a domain. With Slurm's topology/block plugin, #SBATCH --segment={} keeps them in one block;\n"
      "# elsewhere ask your site how to place a job within one NVLink domain.\n",
      o.nvlink_domain_gpus, hosts_per_domain, o.gpus_per_node, segment == n.nodes ? "all" : std::to_string(segment),
      n.nodes, segment);
}

// The header both launches share: what runs, what it needs, and the one
// variable the user must set.
std::string note(const TransformerSpec& s, const ParallelLayout& l, const Layout& n, const LlmLaunchOptions& o) {
  std::string out = fmt::format("# {} on {} GPUs ({} node(s) x {}): tp {}{} x pp {} x dp {}\n",
                                s.name.empty() ? "transformer" : s.name, l.gpus(), n.nodes, n.per_node, l.tp,
                                l.cp > 1 ? fmt::format(" x cp {}", l.cp) : "", l.pp, l.dp);
  out += "# For a Megatron-LM recent enough to have --attention-backend and --num-virtual-stages-per-pipeline-rank\n"
         "# (megatron/training/arguments.py), with Transformer Engine; run from the Megatron-LM folder, or give\n"
         "# --script its path.\n";
  if (s.encoder && std::filesystem::path(o.script).filename() == "pretrain_gpt.py")
    out += fmt::format("# {} is a bidirectional encoder: pretrain_gpt.py trains a causal GPT of its shape (the same\n"
                       "# costs); Megatron-LM trains BERT with pretrain_bert.py, whose arguments differ.\n",
                       s.name);
  out += "# DATA_ARGS must hold your data, tokenizer, optimizer and checkpoint arguments, e.g.\n"
         "#   DATA_ARGS=\"--data-path ... --tokenizer-type ... --lr 3e-4 --save ckpt --load ckpt --save-interval 1000\"\n"
         "# (Megatron-LM needs a learning rate; without checkpoints a job stopped at its time limit loses all).\n"
         "# DATA_ARGS is split at spaces: a path in it cannot hold one.\n";
  if (o.predicted_s > 0)
    out += fmt::format("# The plan predicts {} of training ({} iterations); Megatron-LM's evaluation (by default 100\n"
                       "# forward passes every 1000 iterations, about 3%) and checkpoint saves come on top.\n",
                       hours_text(o.predicted_s), o.train_iters);
  return out;
}

// Stops the launch, saying why, when DATA_ARGS is unset or empty: a script
// exits there; pasted into a terminal, the `&&` that follows it keeps the
// launch from running.
constexpr const char* kDataArgsCheck =
    ": \"${DATA_ARGS:?export DATA_ARGS with your data, tokenizer, optimizer and checkpoint arguments}\"";

}  // namespace

LlmTimeLimit llm_time_limit(const LlmLaunchOptions& o) {
  LlmTimeLimit t;
  const double run = o.predicted_s > 0 ? o.predicted_s * (1 + kRunMargin) + kStartupAllowance_s : 0;
  // The least limit that leaves `run` before the save reserve, max(15 min, 5%).
  const double needed = run > 0 ? std::max(run + 900, run / 0.95) : 0;
  t.limit_s = std::max(o.deadline_s, needed);
  if (t.limit_s <= 0) return t;
  t.exit_s = t.limit_s - std::max(900.0, 0.05 * t.limit_s);
  t.past_deadline = o.deadline_s > 0 && needed > o.deadline_s;
  return t;
}

std::string megatron_torchrun_command(const TransformerSpec& s, const ParallelLayout& l, const LlmLaunchOptions& o) {
  Layout n = layout_for(l.gpus(), o.gpus_per_node);
  std::string out = note(s, l, n, o);
  if (n.nodes > 1)
    out += fmt::format("# Run on each of the {} nodes with MASTER_ADDR and MASTER_PORT (the first node's address and a\n"
                       "# free port) and NODE_RANK (0 to {}) set.\n",
                       n.nodes, n.nodes - 1);
  out += nvlink_domain_note(n, o);
  out += std::string(kDataArgsCheck) + " &&\n";
  out += "CUDA_DEVICE_MAX_CONNECTIONS=1 ";
  out += fmt::format("torchrun --nnodes {} --nproc-per-node {}", n.nodes, n.per_node);
  if (n.nodes > 1)
    out += " --node-rank \"${NODE_RANK:?set NODE_RANK}\" --master-addr \"${MASTER_ADDR:?set MASTER_ADDR}\""
           " --master-port \"${MASTER_PORT:?set MASTER_PORT}\"";
  out += " " + profile::shell_word(o.script) + megatron_args(s, l, o) + "\n";
  return out;
}

std::string megatron_slurm_script(const TransformerSpec& s, const ParallelLayout& l, const LlmLaunchOptions& o) {
  Layout n = layout_for(l.gpus(), o.gpus_per_node);
  std::string out = "#!/bin/bash\n";
  out += fmt::format("#SBATCH --job-name={}\n", profile::shell_word(o.job_name));
  out += fmt::format("#SBATCH --nodes={}\n", n.nodes);
  out += "#SBATCH --ntasks-per-node=1\n";
  out += fmt::format("#SBATCH --gpus-per-node={}\n", n.per_node);
  // Whole nodes only: a plan on part of a node shares it (the cost counts its GPUs only).
  if (n.per_node >= o.gpus_per_node) out += "#SBATCH --exclusive\n";
  // Megatron-LM stops itself, saving a checkpoint where --save is given, before Slurm kills the job at
  // --time: 5% of the limit, at least 15 minutes, is left for the save.
  const LlmTimeLimit time = llm_time_limit(o);
  if (time.limit_s > 0) out += fmt::format("#SBATCH --time={}\n", slurm_time(time.limit_s));
  const long exit_minutes = long(std::floor(time.exit_s / 60));
  out += note(s, l, n, o);
  out += nvlink_domain_note(n, o);
  if (time.past_deadline) {
    const auto [limit, deadline] = hours_apart(time.limit_s, o.deadline_s);
    out += fmt::format("# --time ({}) is past the deadline ({}): the predicted training time with {:.0f}% for\n"
                       "# evaluation and the prediction's error, {:.0f} minutes for start-up, and the save, does not\n"
                       "# fit within it.\n",
                       limit, deadline, 100 * kRunMargin, kStartupAllowance_s / 60);
  }
  // Sites commonly cap a job at one to three days; a months-long deadline as
  // --time is refused at submission or never scheduled.
  if (time.limit_s > 48 * 3600.0)
    out += fmt::format(
        "# --time is {:.0f} hours; most sites cap a job's time (sinfo -o \"%P %l\" lists each\n"
        "# partition's): give yours (and --exit-duration-in-mins below it), and resubmit until done, each job\n"
        "# resuming from --load.\n",
        time.limit_s / 3600);
  if (n.per_node < o.gpus_per_node)
    out += "# Part of a node: Slurm gives the job one CPU unless your site sets DefCpuPerGPU; add\n"
           "# #SBATCH --cpus-per-gpu=N (your node's cores per GPU) for the ranks and their data loaders.\n";
  out += std::string(kDataArgsCheck) + "\n";
  out += "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  out += std::string(kMasterPortOfTheJob) + "\n";
  out += "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
  out += fmt::format(
      "{} torchrun --nnodes $SLURM_NNODES --nproc-per-node {} --rdzv-id $SLURM_JOB_ID --rdzv-backend c10d "
      "--rdzv-endpoint $MASTER_ADDR:$MASTER_PORT {}{}\n",
      kSrunWithNodeCpus, n.per_node, profile::shell_word(o.script), megatron_args(s, l, o, exit_minutes));
  return out;
}

std::string megatron_launch_spec(const std::string& kind, const TransformerSpec& s, const ParallelLayout& l,
                                 const LlmLaunchOptions& o) {
  if (kind == "torchrun") return megatron_torchrun_command(s, l, o);
  if (kind == "slurm") {
    check_job_name(kind, o.job_name);
    return megatron_slurm_script(s, l, o);
  }
  throw InputError("", 0, "--emit", "must be torchrun or slurm, not '" + kind + "'");
}

}  // namespace trainplan::plan
