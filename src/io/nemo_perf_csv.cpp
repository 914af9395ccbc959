#include "io/nemo_perf_csv.h"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "core/error.h"
#include "core/name_key.h"
#include "io/csv.h"
#include "io/llm_row_check.h"
#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::io {

namespace {

// NeMo's GPT-3 configurations (NeMo-Framework-Launcher,
// launcher_scripts/conf/training/gpt3/{5b,20b}.yaml): 4h MLP, GeLU, learned
// positions, dropout 0.1, the GPT-2 BPE vocabulary.
structure::TransformerSpec nemo_gpt3(std::string name, int layers, int hidden, int heads) {
  structure::TransformerSpec s;
  s.name = std::move(name), s.layers = layers, s.hidden = hidden, s.heads = heads, s.vocab = 50257;
  s.source = "NeMo-Framework-Launcher launcher_scripts/conf/training/gpt3/" + s.name.substr(5) + ".yaml";
  return s;
}

// The shape of a model the tables name, or nullopt.
std::optional<structure::TransformerSpec> nemo_shape(const std::string& model) {
  const std::string k = name_key(model);
  if (k == "gpt35b") return nemo_gpt3("gpt3-5b", 24, 4096, 32);
  if (k == "gpt320b") return nemo_gpt3("gpt3-20b", 44, 6144, 48);
  const std::pair<const char*, const char*> zoo[] = {{"llama27b", "llama2-7b"},   {"llama213b", "llama2-13b"},
                                                     {"llama270b", "llama2-70b"}, {"llama38b", "llama3-8b"},
                                                     {"llama370b", "llama3-70b"}, {"llama31405b", "llama3.1-405b"},
                                                     {"gpt3175b", "gpt3-175b"}};
  for (const auto& [nemo, name] : zoo)
    if (k == nemo) return structure::find_transformer(name);
  return std::nullopt;
}

// A count column that may be empty or "n/a" (then 1).
int count_or_one(const CsvTable& t, const CsvRow& row, const std::string& col) {
  const std::string& v = t.text(row, col);
  if (v.empty() || v == "n/a") return 1;
  return t.positive_int(row, col);
}

}  // namespace

PublishedScaleRuns read_nemo_perf_runs(const std::string& path) {
  CsvTable t = CsvTable::read(path);
  t.require_columns({"container", "task", "system", "model", "precision", "num_gpus", "gbs", "mbs", "seq_len", "fsdp",
                     "tp", "pp", "cp", "vp", "ep", "iter_time_s_derived"});
  PublishedScaleRuns out;
  for (const auto& row : t.rows()) {
    // The systems whose GPU the catalog has.
    const std::string& system = t.text(row, "system");
    const std::string gpu = system == "DGX-H100" ? "h100" : system == "DGX-B200" ? "b200" : system == "DGX-GB200" ? "gb200" : "";
    if (gpu.empty()) {
      ++out.left_out["GPU outside the catalog (B300, GB300)"];
      continue;
    }
    if (t.text(row, "task").rfind("Pre-Training", 0) != 0) {
      ++out.left_out["not pre-training"];
      continue;
    }
    const std::string& ep = t.text(row, "ep");
    if (!(ep.empty() || ep == "n/a" || ep == "1")) {
      ++out.left_out["mixture of experts"];
      continue;
    }
    const std::string& fsdp = t.text(row, "fsdp");
    if (!(fsdp.empty() || fsdp == "0")) {
      ++out.left_out["FSDP"];
      continue;
    }
    const std::string& prec = t.text(row, "precision");
    if (prec.empty()) {
      ++out.left_out["precision not stated"];
      continue;
    }
    const auto precision = structure::parse_precision(prec);
    if (!precision) {
      ++out.left_out["precision outside the model (" + prec + ")"];
      continue;
    }
    auto shape = nemo_shape(t.text(row, "model"));
    if (!shape) {
      ++out.left_out["model shape not known here"];
      continue;
    }
    const auto seconds = plain_positive_number(t.text(row, "iter_time_s_derived"));
    if (t.text(row, "mbs").empty() || !seconds) {
      ++out.left_out["no micro-batch or time"];
      continue;
    }
    PublishedScaleRun r;
    r.table = "nemo " + t.text(row, "container");
    r.gpu = gpu;
    r.seconds_derived = false;  // the table's own seconds (from its tokens per second)
    PublishedRun& run = r.iteration.run;
    run.line = row.line;
    run.model = t.text(row, "model") + " (" + r.table + ")";
    auto& s = run.spec;
    s = *shape;
    s.seq = t.positive_int(row, "seq_len");
    auto& l = run.layout;
    l.tp = t.positive_int(row, "tp"), l.pp = t.positive_int(row, "pp");
    l.cp = count_or_one(t, row, "cp");
    l.virtual_stages = count_or_one(t, row, "vp");
    const int gpus = t.positive_int(row, "num_gpus");
    if (gpus % (l.tp * l.cp * l.pp) != 0) t.fail(row, "num_gpus", fmt::format("{} is not a multiple of tp x cp x pp", gpus));
    l.dp = gpus / (l.tp * l.cp * l.pp);
    l.micro_batch = t.positive_int(row, "mbs"), l.global_batch = t.positive_int(row, "gbs");
    l.precision = *precision;
    const bool gpt3 = s.name.rfind("gpt3", 0) == 0;
    if (gpt3) s.vocab = structure::megatron_padded_vocab(s.vocab, l.tp);
    l.sequence_parallel = l.tp > 1;
    l.distributed_optimizer = true;
    l.flash_attention = true;
    l.dropout = gpt3;
    l.recompute = gpt3 && s.name != "gpt3-5b" ? structure::Recompute::kSelective : structure::Recompute::kNone;
    l.overlap_grad_reduce = l.overlap_param_gather = true;
    l.tp_comm_overlap = l.tp > 1;
    // Megatron-Bridge's performance scripts keep and reduce the gradients in
    // bf16 (set_llama3_common_configs, set_llama31_common_configs:
    // grad_reduce_in_fp32 False); NeMo 24.07's tables do not say, and its
    // default is fp32.
    l.grad_reduce_in_bf16 = t.has_column("source_doc") && t.text(row, "source_doc").rfind("Megatron-Bridge", 0) == 0;
    if (l.tp > 1) r.assumed.push_back("sequence parallel, tensor-parallel communication overlapped");
    if (l.grad_reduce_in_bf16) r.assumed.push_back("gradients reduced in bf16");
    r.assumed.insert(r.assumed.end(), {"distributed optimizer with its reduction and gather overlapped", "flash attention",
                                       gpt3 ? "dropout 0.1" : "no dropout",
                                       std::string("recompute ") + structure::to_string(l.recompute)});
    // Llama 3.1 405B's recipe counts the embedding and the loss as a layer
    // each in the pipeline split (126 + 2 layers over pp·vp chunks).
    if (s.name == "llama3.1-405b" && l.pp > 1) {
      if (auto ends = structure::end_stage_layers_with_embedding_and_loss_counted(s.layers, l.pp, l.virtual_stages)) {
        l.first_stage_layers = ends->first, l.last_stage_layers = ends->second;
        r.assumed.push_back(fmt::format("embedding and loss counted in the pipeline split (end stages {} layers, the "
                                        "others {})",
                                        ends->first, structure::stage_layers(s, l, 1)));
      }
    }
    check_shape_and_layout(t, row, s, l);
    r.iteration.seconds = *seconds;
    out.runs.push_back(std::move(r));
  }
  return out;
}

}  // namespace trainplan::io
