// The transformer a `trainplan llm` verb works on: --model NAME from the zoo
// (structure/transformer.h) or the shape flags (--layers, --hidden, --heads,
// --kv-groups, --ffn-hidden, --gated-mlp, --seq, --vocab); with --model,
// --seq overrides the zoo's sequence length.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "structure/transformer.h"

namespace trainplan::cli {

struct LlmShapeArgs {
  std::string model;
  structure::TransformerSpec spec;  // vocab defaults to 51,200
};

void add_llm_shape_options(CLI::App* cmd, LlmShapeArgs& a);
// The zoo entry or the shape; throws InputError naming the option at fault.
structure::TransformerSpec resolve_llm_shape(const LlmShapeArgs& a);

// --fit's help, for every verb that calibrates the transformer models.
inline constexpr const char* kLlmFitHelp =
    "With --calibrate: efficiency (peak, link and memory fractions), overheads (per-iteration and per-layer host "
    "seconds, fractions as the datasheet's), all (both, and the link latency; 8 distinct configurations), or auto "
    "(whichever of the three cross-validates best on the measured rows)";

}  // namespace trainplan::cli
