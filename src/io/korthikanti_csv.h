// Readers for Korthikanti et al. 2022's published Megatron-LM runs as
// collected in ../shared/data/llm/ (their README describes the columns):
// the measured iteration times of Table 5 and the memory per GPU of
// Figures 1 and 7. Columns are taken by header name.
//
// Shape: model, num_layers, hidden, ffn_hidden, heads, seq_len, vocab.
// Layout: tp, pp, dp, vpp_interleave, micro_batch, global_batch,
// recompute (none | full | "selective (attention)"), sequence_parallel and
// optimizer_sharding (True | False), datatype (float16 | bfloat16 | float32).
#pragma once
#include <string>
#include <vector>

#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::io {

struct PublishedRun {
  long line = 0;
  std::string model;
  structure::TransformerSpec spec;
  structure::ParallelLayout layout;
};

// korthikanti2022_megatron_a100_iteration_time.csv: a run and
// measured_iteration_time_s.
struct PublishedIteration {
  PublishedRun run;
  double seconds = 0;
};
std::vector<PublishedIteration> read_korthikanti_iterations(const std::string& path);

// korthikanti2022_memory_per_gpu.csv: a run, figure, mode, metric and value
// (GiB per GPU, or percent of the activations without recomputation or
// sequence parallelism).
struct PublishedMemory {
  PublishedRun run;
  std::string figure, mode, metric;
  double value = 0;
};
std::vector<PublishedMemory> read_korthikanti_memory(const std::string& path);

}  // namespace trainplan::io
