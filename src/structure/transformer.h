// A decoder (or encoder) transformer as data: the shape that the memory and
// time models of a training job read (models/llm_memory.h, models/llm_time.h),
// and a zoo of published configurations, each with its source.
//
// Parameter count (Megatron-LM's layout; biases and LayerNorm or RMSNorm as
// the flags say):
//   per layer  h(h + 2·g·d) + h·h             attention: Q, K and V for g groups of
//                                             width d = h/a, output projection
//            + (gated ? 3 : 2)·h·f            MLP: FC1 (two of them when gated), FC2
//            + biases ? (h + 2gd) + h + (gated ? 2f : f) + h : 0
//            + 2 norms · (biases ? 2h : h)
//   model      L · per layer + V·h (token embedding) + (learned positions ? s·h : 0)
//            + (tied ? 0 : V·h) + final norm (biases ? 2h : h)
// GPT-3 175B with V = 51,200: 96·(12h² + 13h) + 51,200h + 2048h + 2h
// = 174,615,846,912 with h = 12288.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace trainplan::structure {

struct TransformerSpec {
  std::string name;  // zoo key, lowercase: "gpt3-175b"; empty for a user's shape
  int layers = 0;
  int hidden = 0;      // h, the model width
  int heads = 0;       // a, attention heads; h must be a multiple of a
  int kv_groups = 0;   // g, key/value heads (grouped-query attention); 0: as many as heads
  int ffn_hidden = 0;  // f, the MLP width; 0: 4h
  bool gated_mlp = false;  // SwiGLU: FC1 produces a gate and a value, each f wide
  bool biases = true;      // linear biases and LayerNorm (weight and bias); false: no biases, RMSNorm
  bool learned_positions = true;  // a learned position embedding (s·h); false: rotary, no parameters
  bool tied_embeddings = true;    // the output layer reuses the token embedding
  // Rotary embedding's base (theta); 0: Megatron-LM's default, 10,000. It
  // changes no cost, only the model a launch line trains.
  double rotary_base = 0;
  bool rope_scaling = false;  // Llama 3.1's long-context scaling of the rotary frequencies
  // A bidirectional encoder (BERT): the same costs per layer, but Megatron-LM
  // trains it with pretrain_bert.py, not the causal pretrain_gpt.py.
  bool encoder = false;
  int seq = 0;     // s, training sequence length (tokens)
  int vocab = 0;   // V
  std::string source;  // where the figures come from

  int kv() const { return kv_groups > 0 ? kv_groups : heads; }
  int ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  int head_dim() const { return heads > 0 ? hidden / heads : 0; }

  // Parameters of one transformer layer, of the embeddings (token, position
  // and an untied output layer) and of the whole model (formula above).
  double layer_params() const;
  double embedding_params() const;
  double total_params() const;
};

// Throws InputError naming the field when the shape is not a transformer:
// a count < 1, h not a multiple of a, a not a multiple of g; or is past the
// bounds that keep every product of counts within int: hidden and ffn_hidden
// at most 2^22, layers, heads, seq and vocab at most 2^24.
void validate(const TransformerSpec& spec);

// The vocabulary Megatron-LM builds for `vocab` tokens under tensor
// parallelism tp: padded to a multiple of 128·tp (--make-vocab-size-divisible-by).
int megatron_padded_vocab(int vocab, int tp);

// The zoo, in a fixed order: GPT-3 125M to 175B (Brown et al. 2020, Table 2.1),
// Megatron 22B, 175B, 530B and 1T (Korthikanti et al. 2022, Table 3),
// Llama-2 7B, 13B, 70B (Touvron et al. 2023), Llama-3 8B and 70B (Meta's
// model cards), BERT-large (Devlin et al. 2019).
const std::vector<TransformerSpec>& transformer_zoo();
// The zoo entry called `name`, compared by network_name_key (case, '-', '_'
// and spaces aside: "Llama-2-7B" is llama2-7b), or nullopt.
std::optional<TransformerSpec> find_transformer(const std::string& name);
std::vector<std::string> transformer_names();

}  // namespace trainplan::structure
