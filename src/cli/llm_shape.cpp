#include "cli/llm_shape.h"

#include "app/llm_calibration.h"

#include "core/error.h"

namespace trainplan::cli {

void add_llm_shape_options(CLI::App* m, LlmShapeArgs& a) {
  m->add_option("--model", a.model, "A zoo name (gpt3-175b, llama3-70b, megatron-1t, ...); else give the shape");
  m->add_option("--layers", a.spec.layers, "Layers");
  m->add_option("--hidden", a.spec.hidden, "Hidden size");
  m->add_option("--heads", a.spec.heads, "Attention heads");
  m->add_option("--kv-groups", a.spec.kv_groups, "Key/value groups (0: as many as heads)");
  m->add_option("--ffn-hidden", a.spec.ffn_hidden, "MLP width (0: 4 x hidden)");
  m->add_flag("--gated-mlp", a.spec.gated_mlp, "SwiGLU MLP");
  m->add_option("--seq", a.spec.seq, "Sequence length (with --model: overrides the zoo's)");
  a.spec.vocab = 51200;
  m->add_option("--vocab", a.spec.vocab, "Vocabulary")->capture_default_str();
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
    if (a.spec.seq > 0) s.seq = a.spec.seq;
  }
  try {
    structure::validate(s);
  } catch (const InputError& e) {
    throw InputError("", 0, "--" + e.field(), e.message());
  }
  return s;
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
