// Megatron-LM's CI golden values (../shared/data/llm/
// megatron_ci_golden_iteration_time_memory.csv, README section 5): per-step
// time and torch allocator memory of small models under many parallel
// layouts. Only the rows the transformer models describe are kept; every
// other row is counted under the reason it was left out:
//   world size unknown (the test is not in the current recipes);
//   context parallelism (cp > 1) or mixture of experts (num_experts set);
//   not a GPT or BERT model (T5, hybrid Mamba, multimodal, ...);
//   multi-latent attention, FP8, Megatron FSDP, CUDA graphs or an uneven
//     pipeline (--decoder-first/last-pipeline-num-layers);
//   a GPU outside the catalog (GB200, "unspecified");
//   a layout that does not divide the shape.
// Shape and layout: blank vocabulary is the tokenizer's (GPT-2 BPE 50,257,
// BERT WordPiece 30,522) padded to a multiple of 128·tp as Megatron does;
// a blank MLP width is 4h, or int(8h/3 / 64)·64 with SwiGLU; attention is
// fused (flash_attention) unless attention_backend is unfused or local or
// transformer_impl is local (Transformer Engine's default backend is fused).
// Memory is `mem_max_allocated_GiB_lastrank`: the last rank, so the last
// pipeline stage. Bad numbers throw InputError with file, line and column.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::io {

struct MegatronCiRun {
  long line = 0;
  std::string family;     // model_family: gpt, bert
  std::string test_case;  // the CI test
  std::string model;      // family and shape: "gpt h512 L12 s1024", the unit left out in evaluation
  std::string gpu;        // catalog name: a100-80gb, h100
  structure::TransformerSpec spec;
  structure::ParallelLayout layout;
  double iteration_s = 0;  // median seconds per iteration
  double peak_gib = 0;     // allocator peak on the last rank
};

struct MegatronCiData {
  std::vector<MegatronCiRun> runs;
  std::map<std::string, int> excluded;  // reason -> rows
  int total_rows = 0;
};

MegatronCiData read_megatron_ci(const std::string& path);

}  // namespace trainplan::io
