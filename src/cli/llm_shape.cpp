#include "cli/llm_shape.h"

#include <algorithm>
#include <iostream>

#include "app/llm_calibration.h"

#include "core/error.h"

namespace trainplan::cli {

void add_llm_shape_options(CLI::App* m, LlmShapeArgs& a) {
  m->add_option("--model", a.model, "A zoo name (gpt3-175b, llama3-70b, megatron-1t, ...); else give the shape");
  a.spec.vocab = 51200;
  a.flags = {
      {"layers", m->add_option("--layers", a.spec.layers, "Layers (needed without --model, as are --hidden, --heads and --seq)")},
      {"hidden", m->add_option("--hidden", a.spec.hidden, "Hidden size (needed without --model)")},
      {"heads", m->add_option("--heads", a.spec.heads, "Attention heads (needed without --model)")},
      {"kv-groups", m->add_option("--kv-groups", a.spec.kv_groups, "Key/value groups (0: as many as heads)")},
      {"ffn-hidden", m->add_option("--ffn-hidden", a.spec.ffn_hidden, "MLP width (0: 4 x hidden)")},
      {"gated-mlp", m->add_flag("--gated-mlp", a.spec.gated_mlp, "SwiGLU MLP")},
      {"seq", m->add_option("--seq", a.spec.seq, "Sequence length (needed without --model)")},
      {"vocab", m->add_option("--vocab", a.spec.vocab, "Vocabulary [default: the --model's, else 51200]")},
  };
  m->footer("With --model, each shape option given replaces the zoo's value (--model llama3-8b --seq 8192).");
}

structure::TransformerSpec resolve_llm_shape(const LlmShapeArgs& a) {
  structure::TransformerSpec s = a.spec;
  if (!a.model.empty()) {
    auto z = structure::find_transformer(a.model);
    if (!z) {
      std::string names;
      for (const auto& n : structure::transformer_names()) names += " " + n;
      throw InputError("", 0, "--model", "'" + a.model + "' is not in the zoo:" + names);
    }
    s = *z;
    std::string changed;
    for (const auto& [flag, option] : a.flags) {
      if (!option || option->count() == 0) continue;
      if (flag == "layers") s.layers = a.spec.layers;
      if (flag == "hidden") s.hidden = a.spec.hidden;
      if (flag == "heads") s.heads = a.spec.heads;
      if (flag == "kv-groups") s.kv_groups = a.spec.kv_groups;
      if (flag == "ffn-hidden") s.ffn_hidden = a.spec.ffn_hidden;
      if (flag == "gated-mlp") s.gated_mlp = a.spec.gated_mlp;
      if (flag == "seq") s.seq = a.spec.seq;
      if (flag == "vocab") s.vocab = a.spec.vocab;
      changed += (changed.empty() ? " with " : ", ") + flag +
                 (flag == "gated-mlp" ? "" : " " + option->as<std::string>());
    }
    s.name += changed;
  }
  try {
    structure::validate(s);
  } catch (const InputError& e) {
    std::string option = e.field();  // kv_groups is --kv-groups
    std::replace(option.begin(), option.end(), '_', '-');
    // Without --model the four dimensions have no value to fall back on: one not given is missing, not bad.
    for (const auto& [flag, given] : a.flags)
      if (a.model.empty() && flag == option && (!given || given->count() == 0))
        throw InputError("", 0, "--" + option,
                         "is required without --model (give --layers, --hidden, --heads and --seq, or --model NAME "
                         "from the zoo: trainplan llm models)");
    throw InputError("", 0, "--" + option, e.message());
  }
  return s;
}

io::LlmConfigTable read_llm_configs_noted(const std::string& path, bool require_time, io::RowErrors row_errors) {
  auto table = io::read_llm_configs(path, require_time, row_errors);
  for (const auto& n : table.notes) std::cerr << "note: " << n << "\n";
  return table;
}

void add_llm_fit_option(CLI::App* cmd, std::string& fit, const char* help) {
  cmd->add_option("--fit", fit,
                  help ? help
                       : "With --calibrate: efficiency (peak, link and memory fractions), overheads (per-iteration "
                         "and per-layer host seconds, fractions as the datasheet's), all (both, and the link latency; "
                         "8 distinct configurations), or auto (whichever of the three cross-validates best on the "
                         "measured rows)")
      ->capture_default_str()
      ->check(CLI::IsMember(app::llm_fit_modes()));
}

}  // namespace trainplan::cli
