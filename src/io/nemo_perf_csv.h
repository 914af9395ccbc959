// Reader for NVIDIA's NeMo and Megatron-Bridge performance tables as collected
// in ../shared/data/llm/nvidia_nemo_megatron_bridge_perf_summary.csv (its
// README, section 4): published seconds per iteration of dense transformers
// pre-trained on DGX H100, DGX B200 and GB200 NVL72 systems. Columns are
// taken by header name.
//
// A row is kept when it is a pre-training run on DGX-H100, DGX-B200 or
// DGX-GB200 (the catalog's h100, b200 and gb200) of a model whose
// shape is known here (the Llama 2 and Llama 3 models of the zoo, GPT-3 5B,
// 20B and 175B as NeMo configures them), in BF16 or FP8, with no expert or
// fully sharded data parallelism, and gives its micro-batch and
// iter_time_s_derived. Left out, counted by reason: other systems (B300 and
// GB300 are not in the catalog), fine-tuning, mixture of experts, FSDP,
// precision not stated or outside the model (MXFP8, NVFP4), models of
// unknown shape, rows without a micro-batch or a time.
//
// What the tables do not say is taken from the recipes, and said so in
// `assumed`: sequence parallelism and the tensor-parallel collectives
// overlapped with the products where tp > 1, the distributed optimizer with
// its gradient reduction and weight gather overlapped, fused (flash)
// attention; Llama without dropout and without recomputation; GPT-3 with
// dropout 0.1 and selective recomputation (20B and 175B; none for 5B), its
// GPT-2 vocabulary of 50,257 padded as Megatron pads it. The seconds are the
// table's iter_time_s_derived (global batch × sequence / tokens per second
// per GPU / GPUs).
#pragma once
#include <string>

#include "io/megatron_scale_csv.h"

namespace trainplan::io {

// Throws InputError naming the file, line and column for a missing column or
// a kept row with a bad value (a GPU count that is not tp·pp·dp, a layout the
// shape does not divide).
PublishedScaleRuns read_nemo_perf_runs(const std::string& path);

}  // namespace trainplan::io
