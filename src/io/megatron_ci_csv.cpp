#include "io/megatron_ci_csv.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "io/csv.h"

namespace trainplan::io {

namespace {

bool yes(const std::string& s) { return s == "True" || s == "true" || s == "1"; }

}  // namespace

MegatronCiData read_megatron_ci(const std::string& path) {
  auto t = CsvTable::read(path);
  t.require_columns({"model_family", "test_case", "gpu", "world_size", "tp", "pp", "cp", "num_experts", "num_layers",
                     "hidden", "heads", "seq_len", "micro_batch", "global_batch", "iter_time_s_median",
                     "mem_max_allocated_GiB_lastrank", "other_args_json"});
  MegatronCiData d;
  auto text = [&](const CsvRow& r, const char* c) { return t.has_column(c) ? t.text(r, c) : std::string(); };
  auto integer = [&](const CsvRow& r, const char* c, int dflt) {
    auto v = t.optional_number(r, c);
    if (!v) return dflt;
    if (*v != double(long(*v)) || *v < 0) t.fail(r, c, "must be a non-negative integer");
    return int(*v);
  };
  for (const auto& r : t.rows()) {
    ++d.total_rows;
    auto skip = [&](const std::string& why) { ++d.excluded[why]; };
    std::string family = t.text(r, "model_family"), gpu_text = t.text(r, "gpu"), args = text(r, "other_args_json");
    if (t.text(r, "world_size").empty()) { skip("world size unknown"); continue; }
    if (!t.text(r, "num_experts").empty() || integer(r, "ep", 1) > 1) { skip("mixture of experts"); continue; }
    if (family != "gpt" && family != "bert") { skip("not a GPT or BERT model"); continue; }
    if (yes(text(r, "mla")) || !text(r, "fp8_format").empty() || yes(text(r, "megatron_fsdp")) ||
        !text(r, "cuda_graph").empty()) {
      skip("MLA, FP8, FSDP or CUDA graphs");
      continue;
    }
    std::string gpu;
    if (gpu_text.rfind("A100", 0) == 0) gpu = "a100-80gb";
    else if (gpu_text.rfind("H100", 0) == 0) gpu = "h100";
    if (gpu.empty()) { skip("GPU outside the catalog (GB200, unspecified)"); continue; }
    if (t.text(r, "iter_time_s_median").empty() || t.text(r, "mem_max_allocated_GiB_lastrank").empty()) {
      skip("no time or memory");
      continue;
    }
    MegatronCiRun x;
    x.line = r.line, x.family = family, x.test_case = t.text(r, "test_case"), x.gpu = gpu;
    auto& s = x.spec;
    s.layers = integer(r, "num_layers", 0), s.hidden = integer(r, "hidden", 0), s.heads = integer(r, "heads", 0);
    s.seq = integer(r, "seq_len", 0);
    s.gated_mlp = yes(text(r, "swiglu"));
    s.ffn_hidden = integer(r, "ffn_hidden", 0);
    if (s.ffn_hidden == 0 && s.gated_mlp) s.ffn_hidden = int(4.0 * s.hidden * 2 / 3 / 64) * 64;
    if (yes(text(r, "gqa"))) s.kv_groups = integer(r, "query_groups", 0);
    s.biases = args.find("--disable-bias-linear") == std::string::npos;
    std::string pos = text(r, "position_embedding");
    s.learned_positions = pos.empty() || pos == "learned_absolute";
    s.tied_embeddings = !yes(text(r, "untie_embeddings"));
    auto& l = x.layout;
    l.tp = integer(r, "tp", 1), l.pp = integer(r, "pp", 1);
    l.cp = std::max(1, integer(r, "cp", 1));
    int world = integer(r, "world_size", 1);
    l.dp = world / (l.tp * l.pp * l.cp);
    int per_stage = integer(r, "vpp_layers_per_stage", 0);
    l.virtual_stages = per_stage > 0 && l.pp > 1 ? s.layers / (l.pp * per_stage) : 1;
    // The end stages' layers where the run gave them (Megatron's own options).
    const auto options = nlohmann::json::parse(args, nullptr, false);
    if (options.is_object()) {
      for (auto [option, into] : {std::pair{"--decoder-first-pipeline-num-layers", &l.first_stage_layers},
                                  {"--decoder-last-pipeline-num-layers", &l.last_stage_layers}})
        if (options.contains(option) && options[option].is_number_integer()) *into = options[option].get<int>();
    }
    l.micro_batch = integer(r, "micro_batch", 1), l.global_batch = integer(r, "global_batch", 1);
    std::string rc = text(r, "recompute_granularity");
    l.recompute = rc == "full" ? structure::Recompute::kFull
                  : rc == "selective" ? structure::Recompute::kSelective : structure::Recompute::kNone;
    l.sequence_parallel = yes(text(r, "sequence_parallel"));
    l.distributed_optimizer = yes(text(r, "dist_optimizer"));
    l.overlap_grad_reduce = yes(text(r, "overlap_grad_reduce"));
    l.overlap_param_gather = yes(text(r, "overlap_param_gather"));
    l.tp_comm_overlap = yes(text(r, "tp_comm_overlap"));
    l.grad_reduce_in_bf16 = args.find("--grad-reduce-in-bf16") != std::string::npos;
    l.precision = yes(text(r, "bf16")) ? structure::Precision::kBf16
                  : yes(text(r, "fp16")) ? structure::Precision::kFp16 : structure::Precision::kFp32;
    std::string backend = text(r, "attention_backend"), impl = text(r, "transformer_impl");
    l.flash_attention = !(backend == "unfused" || backend == "local" || impl == "local");
    int vocab = integer(r, "vocab_size", 0);
    if (vocab == 0) vocab = family == "bert" ? 30522 : 50257;
    s.vocab = structure::megatron_padded_vocab(vocab, l.tp);
    x.model = fmt::format("{} h{} L{} s{}", family, s.hidden, s.layers, s.seq);
    bool ok = s.layers > 0 && s.hidden > 0 && s.heads > 0 && s.seq > 0 && s.hidden % s.heads == 0 &&
              world % (l.tp * l.pp * l.cp) == 0 && (per_stage == 0 || l.pp == 1 || s.layers % (l.pp * per_stage) == 0);
    if (!ok || structure::check_layout(s, l)) { skip("layout does not divide the shape"); continue; }
    x.iteration_s = t.positive(r, "iter_time_s_median");
    x.peak_gib = t.positive(r, "mem_max_allocated_GiB_lastrank");
    d.runs.push_back(std::move(x));
  }
  return d;
}

}  // namespace trainplan::io
