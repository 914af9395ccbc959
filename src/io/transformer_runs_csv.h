// The project's own single-GPU transformer runs
// (examples/h100/transformer-training.csv, written by
// scripts/gpu/transformer-bench.py): one row per shape, micro-batch,
// accumulation and recomputation, with the median iteration and the
// allocator's peak. Rows whose status is not "ok" (out of memory) are
// skipped. Each becomes a shape (arch gpt: LayerNorm, biases, GELU MLP,
// learned positions; llama: RMSNorm, no biases, SwiGLU, rotary; both tied)
// and a layout: tp = pp = dp = 1, global batch micro_batch ·
// num_microbatches, precision amp-fp32-master (bf16-amp), fused attention
// (scaled_dot_product_attention). Bad values throw InputError with file,
// line and column.
#pragma once
#include <string>
#include <vector>

#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::io {

struct TransformerRun {
  long line = 0;
  std::string model;        // gpt-125m, llama-3.2-1b, ...
  structure::TransformerSpec spec;
  structure::ParallelLayout layout;
  double iteration_s = 0;   // median
  double peak_bytes = 0;    // allocator peak
};

std::vector<TransformerRun> read_transformer_runs(const std::string& path);

}  // namespace trainplan::io
