#include "structure/transformer.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "structure/network_zoo.h"

namespace trainplan::structure {

double TransformerSpec::layer_params() const {
  double h = hidden, f = ffn(), qkv = h + 2.0 * kv() * head_dim();
  double attention = h * qkv + h * h;
  double mlp = (gated_mlp ? 3.0 : 2.0) * h * f;
  double bias = biases ? qkv + h + (gated_mlp ? 2 * f : f) + h : 0;
  double norms = 2 * (biases ? 2 * h : h);
  return attention + mlp + bias + norms;
}

double TransformerSpec::embedding_params() const {
  double h = hidden;
  return double(vocab) * h + (learned_positions ? double(seq) * h : 0) + (tied_embeddings ? 0 : double(vocab) * h);
}

double TransformerSpec::total_params() const {
  return layers * layer_params() + embedding_params() + (biases ? 2.0 * hidden : double(hidden));
}

void validate(const TransformerSpec& s) {
  auto need = [](int v, const char* field, int most) {
    if (v < 1) throw InputError("", 0, field, "must be an integer >= 1");
    if (v > most) throw InputError("", 0, field, "must be at most " + std::to_string(most));
  };
  constexpr int kWidth = 1 << 22, kCount = 1 << 24;
  need(s.layers, "layers", kCount), need(s.hidden, "hidden", kWidth), need(s.heads, "heads", kCount);
  need(s.seq, "seq", kCount), need(s.vocab, "vocab", kCount);
  if (s.ffn_hidden > kWidth) throw InputError("", 0, "ffn_hidden", "must be at most " + std::to_string(kWidth));
  if (s.kv_groups < 0) throw InputError("", 0, "kv_groups", "must be >= 0 (0: as many as heads)");
  if (s.ffn_hidden < 0) throw InputError("", 0, "ffn_hidden", "must be >= 0 (0: 4 x hidden)");
  if (s.hidden % s.heads != 0)
    throw InputError("", 0, "heads", "hidden " + std::to_string(s.hidden) + " is not a multiple of " +
                                         std::to_string(s.heads) + " heads");
  if (s.heads % s.kv() != 0)
    throw InputError("", 0, "kv_groups", std::to_string(s.heads) + " heads are not a multiple of " +
                                             std::to_string(s.kv()) + " key/value groups");
}

namespace {

TransformerSpec gpt3(std::string name, int layers, int hidden, int heads, std::string note = "") {
  TransformerSpec s;
  s.name = std::move(name), s.layers = layers, s.hidden = hidden, s.heads = heads;
  s.seq = 2048, s.vocab = 50257;
  s.source = "Brown et al. 2020 (arXiv 2005.14165), Table 2.1; vocabulary: GPT-2 BPE (50,257)" + note;
  return s;
}

TransformerSpec megatron(std::string name, int layers, int hidden, int heads) {
  TransformerSpec s;
  s.name = std::move(name), s.layers = layers, s.hidden = hidden, s.heads = heads;
  s.seq = 2048, s.vocab = 51200;
  s.source = "Korthikanti et al. 2022 (arXiv 2205.05198), Table 3; vocabulary 51,200 (Megatron-LM README)";
  return s;
}

TransformerSpec llama(std::string name, int layers, int hidden, int heads, int kv, int ffn, int seq, int vocab,
                      std::string source) {
  TransformerSpec s;
  s.name = std::move(name), s.layers = layers, s.hidden = hidden, s.heads = heads, s.kv_groups = kv;
  s.ffn_hidden = ffn, s.gated_mlp = true, s.biases = false, s.learned_positions = false;
  s.tied_embeddings = false, s.seq = seq, s.vocab = vocab, s.source = std::move(source);
  return s;
}

std::vector<TransformerSpec> build_zoo() {
  std::vector<TransformerSpec> z = {
      gpt3("gpt3-125m", 12, 768, 12),
      gpt3("gpt3-350m", 24, 1024, 16),
      gpt3("gpt3-760m", 24, 1536, 16),
      // Table 2.1 lists 24 heads of width 128, which does not divide 2048;
      // 16 heads keep its head width.
      gpt3("gpt3-1.3b", 24, 2048, 16, "; 16 heads of width 128 (the table's 24 x 128 is not 2048)"),
      gpt3("gpt3-2.7b", 32, 2560, 32),
      gpt3("gpt3-6.7b", 32, 4096, 32),
      // Table 2.1 prints d_model 5140; 40 heads of width 128 make 5120.
      gpt3("gpt3-13b", 40, 5120, 40, "; d_model 5120 = 40 x 128 (the table prints 5140)"),
      gpt3("gpt3-175b", 96, 12288, 96),
      megatron("megatron-22b", 48, 6144, 64),
      megatron("megatron-175b", 96, 12288, 96),
      megatron("megatron-530b", 105, 20480, 128),
      megatron("megatron-1t", 128, 25600, 160),
      llama("llama2-7b", 32, 4096, 32, 32, 11008, 4096, 32000,
            "Touvron et al. 2023 (arXiv 2307.09288), Table 1, and Meta's params.json"),
      llama("llama2-13b", 40, 5120, 40, 40, 13824, 4096, 32000,
            "Touvron et al. 2023 (arXiv 2307.09288), Table 1, and Meta's params.json"),
      llama("llama2-70b", 80, 8192, 64, 8, 28672, 4096, 32000,
            "Touvron et al. 2023 (arXiv 2307.09288), Table 1 (GQA), and Meta's params.json"),
      llama("llama3-8b", 32, 4096, 32, 8, 14336, 8192, 128256, "Meta Llama 3 model card and params.json (2024)"),
      llama("llama3-70b", 80, 8192, 64, 8, 28672, 8192, 128256, "Meta Llama 3 model card and params.json (2024)"),
      llama("llama3.1-405b", 126, 16384, 128, 8, 53248, 8192, 128256,
            "Llama Team 2024 (arXiv 2407.21783), Table 3: 126 layers, model dimension 16,384, FFN 53,248, 128 heads, "
            "8 key/value heads, vocabulary 128,000 (128,256 with the special tokens, as params.json); sequence 8,192, the "
            "main pre-training stage's (params.json's max_seq_len is 131,072, reached in a later stage)"),
  };
  // Llama 3's rotary base is 500,000 (params.json rope_theta; the paper's
  // Table 3); 3.1 also scales the frequencies for long contexts (params.json
  // use_scaled_rope).
  for (auto& s : z)
    if (s.name.rfind("llama3", 0) == 0) s.rotary_base = 500000, s.rope_scaling = s.name.rfind("llama3.1", 0) == 0;
  TransformerSpec bert;
  bert.name = "bert-large", bert.layers = 24, bert.hidden = 1024, bert.heads = 16, bert.seq = 512;
  bert.vocab = 30522, bert.encoder = true;
  bert.source = "Devlin et al. 2019 (arXiv 1810.04805): L=24, H=1024, A=16, WordPiece 30,522, 512 positions";
  z.push_back(bert);
  return z;
}

}  // namespace

const std::vector<TransformerSpec>& transformer_zoo() {
  static const std::vector<TransformerSpec> zoo = build_zoo();
  return zoo;
}

std::optional<TransformerSpec> find_transformer(const std::string& name) {
  // As network names are matched: case, '-', '_' and spaces aside ("Llama-2-7B" is llama2-7b), the
  // dots kept (gpt3-1.3b is not gpt3-13b).
  const std::string key = network_name_key(name);
  for (const auto& s : transformer_zoo())
    if (network_name_key(s.name) == key) return s;
  return std::nullopt;
}

std::vector<std::string> transformer_names() {
  std::vector<std::string> out;
  for (const auto& s : transformer_zoo()) out.push_back(s.name);
  return out;
}

int megatron_padded_vocab(int vocab, int tp) {
  const int m = 128 * tp;
  return (vocab + m - 1) / m * m;
}

}  // namespace trainplan::structure
