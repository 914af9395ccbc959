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

// --fit, for every verb that calibrates the transformer models: one of
// app::llm_fit_modes(), "auto" by default; `help` replaces the standard text.
void add_llm_fit_option(CLI::App* cmd, std::string& fit, const char* help = nullptr);

}  // namespace trainplan::cli
