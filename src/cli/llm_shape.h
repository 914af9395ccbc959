// The transformer a `trainplan llm` verb works on: --model NAME from the zoo
// (structure/transformer.h) or the shape flags (--layers, --hidden, --heads,
// --kv-groups, --ffn-hidden, --gated-mlp, --seq, --vocab); with --model,
// each shape flag given replaces the zoo's value, and the name says so
// ("llama3-8b with seq 8192").
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "io/llm_config_csv.h"
#include "structure/transformer.h"

namespace trainplan::cli {

struct LlmShapeArgs {
  std::string model;
  structure::TransformerSpec spec;  // vocab defaults to 51,200
  // The shape flags, to tell which were given (add_llm_shape_options sets them).
  std::vector<std::pair<std::string, CLI::Option*>> flags;
};

void add_llm_shape_options(CLI::App* cmd, LlmShapeArgs& a);
// The zoo entry or the shape; throws InputError naming the option at fault.
structure::TransformerSpec resolve_llm_shape(const LlmShapeArgs& a);

// --fit, for every verb that calibrates the transformer models: one of
// app::llm_fit_modes(), "auto" by default; `help` replaces the standard text.
void add_llm_fit_option(CLI::App* cmd, std::string& fit, const char* help = nullptr);

// io::read_llm_configs, with the reader's notes (a near miss of a column's
// name) on stderr, as every verb that reads a configuration file gives them.
io::LlmConfigTable read_llm_configs_noted(const std::string& path, bool require_time = false,
                                          io::RowErrors row_errors = io::RowErrors::kThrow);

}  // namespace trainplan::cli
