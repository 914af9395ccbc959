#include "io/transformer_runs_csv.h"

#include "io/csv.h"

namespace trainplan::io {

std::vector<TransformerRun> read_transformer_runs(const std::string& path) {
  auto t = CsvTable::read(path);
  t.require_columns({"model", "arch", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len",
                     "micro_batch", "num_microbatches", "recompute", "precision", "status", "iter_ms_median",
                     "peak_mem_bytes"});
  std::vector<TransformerRun> out;
  for (const auto& r : t.rows()) {
    if (t.text(r, "status") != "ok") continue;
    TransformerRun x;
    x.line = r.line, x.model = t.text(r, "model");
    std::string arch = t.text(r, "arch");
    if (arch != "gpt" && arch != "llama") t.fail(r, "arch", "must be gpt or llama");
    auto& s = x.spec;
    s.name = x.model;
    s.layers = int(t.positive_int(r, "layers")), s.hidden = int(t.positive_int(r, "hidden"));
    s.heads = int(t.positive_int(r, "heads")), s.kv_groups = int(t.positive_int(r, "kv_heads"));
    s.ffn_hidden = int(t.positive_int(r, "ffn_hidden")), s.vocab = int(t.positive_int(r, "vocab"));
    s.seq = int(t.positive_int(r, "seq_len"));
    bool gpt = arch == "gpt";
    s.gated_mlp = !gpt, s.biases = gpt, s.learned_positions = gpt, s.tied_embeddings = true;
    auto& l = x.layout;
    l.micro_batch = int(t.positive_int(r, "micro_batch"));
    l.global_batch = l.micro_batch * int(t.positive_int(r, "num_microbatches"));
    auto rc = structure::parse_recompute(t.text(r, "recompute"));
    if (!rc) t.fail(r, "recompute", "must be none, selective or full");
    l.recompute = *rc;
    if (t.text(r, "precision") != "bf16-amp") t.fail(r, "precision", "must be bf16-amp");
    l.precision = structure::Precision::kAmpFp32Master;
    l.flash_attention = true;
    l.dropout = false;  // transformer-bench.py's models have no dropout layer
    // Autocast leaves the embedding, and so the residual stream, in fp32.
    l.fp32_residual = true;
    x.iteration_s = t.positive(r, "iter_ms_median") / 1000;
    x.peak_bytes = t.positive(r, "peak_mem_bytes");
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace trainplan::io
