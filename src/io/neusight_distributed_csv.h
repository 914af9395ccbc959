// Reader for NeuSight's 4-GPU training steps
// (../shared/data/llm/neusight_distributed_4gpu_measured.csv, its README,
// section 7): GPT-2 Large and GPT-3 XL shapes trained by Megatron-LM through
// accelerate on one node of A100-SXM4-40GB or H100 GPUs, with data, tensor
// or pipeline parallelism of 4, in fp32, timed as whole training steps.
// Columns are taken by header name.
//
// Read as Megatron-LM runs them: a GPT-2 model (learned positions, tied
// embeddings, biases, a 4h GELU MLP unless ffn_hidden says otherwise), the
// vocabulary padded to a multiple of 128·tp, no fused attention; a pipeline
// row's num_microbatches is its micro-batch count (1: the stages run one
// after another). measured_ms is the mean of the 10 fastest of 50 steps.
#pragma once
#include <string>

#include "io/megatron_scale_csv.h"

namespace trainplan::io {

// Every row, as PublishedScaleRuns (table "neusight-4gpu", gpu the catalog's
// name for the device). Throws InputError naming file, line and column for a
// missing column, a device outside the catalog, a bad number or a layout
// that does not divide the shape.
PublishedScaleRuns read_neusight_distributed(const std::string& path);

}  // namespace trainplan::io
