#include "structure/parallel_layout.h"

#include <cctype>
#include <cstdint>

#include "structure/gpu_catalog.h"

namespace trainplan::structure {

std::optional<LayoutProblem> check_layout(const TransformerSpec& s, const ParallelLayout& l) {
  auto n = [](int v) { return std::to_string(v); };
  for (auto [v, f] : {std::pair{l.tp, "tp"}, {l.cp, "cp"}, {l.pp, "pp"}, {l.dp, "dp"}, {l.virtual_stages, "virtual_stages"},
                      {l.micro_batch, "micro_batch"}, {l.global_batch, "global_batch"}}) {
    if (v < 1) return LayoutProblem{f, "must be an integer >= 1"};
    if (v > kMaxLayoutCount) return LayoutProblem{f, "must be at most " + n(kMaxLayoutCount)};
  }
  // In 64 bits: each factor is below 2^24, so the products fit; the checks
  // keep gpus() and micro_batches() within int for every layout that passes.
  if (int64_t(l.tp) * l.cp * l.pp * l.dp > kMaxLayoutCount)
    return LayoutProblem{"dp", "tp x cp x pp x dp is more than " + n(kMaxLayoutCount) + " GPUs"};
  if (l.cp > 1 && s.seq % (2 * int64_t(l.cp)) != 0)
    return LayoutProblem{"cp", "cp " + n(l.cp) + " needs a sequence that is a multiple of 2 x cp = " + n(2 * l.cp) +
                                   ", and it is " + n(s.seq) + " (context parallelism splits it into 2·cp balanced chunks)"};
  if (s.heads % l.tp != 0) return LayoutProblem{"tp", "tp " + n(l.tp) + " does not divide " + n(s.heads) + " heads"};
  // Sequence parallelism scatters each context-parallel rank's share of the sequence over the tp ranks.
  if (l.sequence_parallel && l.tp > 1 && (s.seq / l.cp) % l.tp != 0)
    return LayoutProblem{"sequence_parallel", "needs the sequence" + std::string(l.cp > 1 ? " over cp" : "") + " (" +
                                                  n(int(s.seq / l.cp)) + ") to be a multiple of tp " + n(l.tp) +
                                                  ": Megatron-LM scatters it over the tensor-parallel ranks"};
  if (s.kv() % l.tp != 0)
    return LayoutProblem{"tp", "tp " + n(l.tp) + " does not divide " + n(s.kv()) + " key/value groups"};
  if (s.ffn() % l.tp != 0)
    return LayoutProblem{"tp", "tp " + n(l.tp) + " does not divide the MLP width " + n(s.ffn())};
  for (auto [v, f] : {std::pair{l.first_stage_layers, "first_stage_layers"}, {l.last_stage_layers, "last_stage_layers"}}) {
    if (v < 0) return LayoutProblem{f, "must be an integer >= 0 (0: the even share)"};
    if (v > 0 && l.pp == 1) return LayoutProblem{f, "needs pp > 1 (one stage holds every layer)"};
  }
  // As Megatron-LM refuses it: the interleaved schedule splits the stages of a pipeline.
  if (l.virtual_stages > 1 && l.pp == 1)
    return LayoutProblem{"virtual_stages", "virtual_stages " + n(l.virtual_stages) +
                                               " needs pp > 1 (interleaving splits a pipeline's stages; one stage "
                                               "has none to interleave)"};
  if (!l.uneven()) {
    if (s.layers % (int64_t(l.pp) * l.virtual_stages) != 0) {
      if (l.virtual_stages == 1)
        return LayoutProblem{"pp", "pp " + n(l.pp) + " does not divide " + n(s.layers) + " layers"};
      return LayoutProblem{"virtual_stages", "pp " + n(l.pp) + " x virtual_stages " + n(l.virtual_stages) +
                                                 " does not divide " + n(s.layers) + " layers"};
    }
  } else {
    const int given = l.first_stage_layers + l.last_stage_layers;
    const int between = l.pp - (l.first_stage_layers > 0) - (l.last_stage_layers > 0);
    const std::string field = l.last_stage_layers > 0 ? "last_stage_layers" : "first_stage_layers";
    const int rest = s.layers - given;
    if (between == 0 ? rest != 0 : rest < between || rest % between != 0)
      return LayoutProblem{field, "first_stage_layers " + n(l.first_stage_layers) + " and last_stage_layers " +
                                      n(l.last_stage_layers) + " leave " + n(rest) + " of " + n(s.layers) +
                                      (between == 0 ? " layers, and no other stage holds them (pp " + n(l.pp) +
                                                          " is the two end stages alone)"
                                                    : " layers, which do not split evenly over the " + n(between) +
                                                          " other stages")};
    // Interleaved, each stage's chunks need a layer each; they may differ
    // by a layer, as when the embedding and the loss count in the split.
    for (int stage : {0, l.pp - 1, 1}) {
      if (stage >= l.pp) continue;
      if (stage_layers(s, l, stage) < l.virtual_stages)
        return LayoutProblem{"virtual_stages", "virtual_stages " + n(l.virtual_stages) + " is more than stage " +
                                                   n(stage) + "'s " + n(stage_layers(s, l, stage)) + " layers"};
    }
    // End stages given by their own counts (Megatron-Core's
    // --decoder-first/last-pipeline-num-layers), interleaved: each stage
    // splits into equal chunks, and Megatron-Core refuses a count the
    // virtual stages do not divide. The split with the embedding and the
    // loss counted is the exception: its end stages' first and last chunks
    // give a place to them.
    const auto counted = end_stage_layers_with_embedding_and_loss_counted(s.layers, l.pp, l.virtual_stages);
    const bool accounted =
        counted && l.first_stage_layers == counted->first && l.last_stage_layers == counted->second;
    if (l.virtual_stages > 1 && !accounted)
      for (int stage : {0, l.pp - 1, 1}) {
        if (stage >= l.pp || stage_layers(s, l, stage) % l.virtual_stages == 0) continue;
        const std::string which = stage == 0 && l.first_stage_layers > 0    ? "first_stage_layers"
                                  : stage == l.pp - 1 && l.last_stage_layers > 0 ? "last_stage_layers"
                                                                                 : "virtual_stages";
        return LayoutProblem{which, "stage " + n(stage) + "'s " + n(stage_layers(s, l, stage)) +
                                        " layers do not split into virtual_stages " + n(l.virtual_stages) +
                                        " equal chunks (Megatron-Core refuses it)"};
      }
  }
  if (auto p = precision_setting_problem(l)) return p;
  if (l.fused_attention())
    if (auto why = fused_attention_precision_problem(l.precision))
      return LayoutProblem{l.cp > 1 ? "cp" : "flash_attention",
                           (l.cp > 1 ? "context parallelism runs on fused attention kernels only: "
                                     : "flash attention: ") + *why};
  if (l.global_batch % (int64_t(l.micro_batch) * l.dp) != 0)
    return LayoutProblem{"global_batch", "micro_batch " + n(l.micro_batch) + " x dp " + n(l.dp) + " does not divide " +
                                             "global_batch " + n(l.global_batch)};
  return std::nullopt;
}

std::optional<LayoutProblem> precision_setting_problem(const ParallelLayout& l) {
  if (l.precision == Precision::kFp32 && l.fp32_residual)
    return LayoutProblem{"fp32_residual", "goes with fp16, bf16 or fp8: in fp32 training the residual stream is fp32 "
                                          "already (Megatron-LM refuses --fp32-residual-connection without --fp16 or "
                                          "--bf16)"};
  if (l.grad_reduce_in_bf16 && (l.precision == Precision::kFp16 || l.precision == Precision::kFp32))
    return LayoutProblem{"grad_reduce_in_bf16", "goes with bf16, amp-fp32-master or fp8, not " + to_string(l.precision) +
                                                    ": Megatron-LM reads --grad-reduce-in-bf16 only with --bf16"};
  return std::nullopt;
}

int stage_layers(const TransformerSpec& s, const ParallelLayout& l, int stage) {
  if (!l.uneven()) return s.layers / l.pp;
  if (stage == 0 && l.first_stage_layers > 0) return l.first_stage_layers;
  if (stage == l.pp - 1 && l.last_stage_layers > 0) return l.last_stage_layers;
  const int between = l.pp - (l.first_stage_layers > 0) - (l.last_stage_layers > 0);
  return (s.layers - l.first_stage_layers - l.last_stage_layers) / between;
}

std::optional<std::pair<int, int>> end_stage_layers_with_embedding_and_loss_counted(int layers, int pp,
                                                                                    int virtual_stages) {
  const int64_t chunks = int64_t(pp) * virtual_stages;
  if (pp < 2 || chunks <= 0 || (layers + 2) % chunks != 0 || (layers + 2) / chunks < 2) return std::nullopt;
  // Each stage holds virtual_stages chunks of (layers + 2) / chunks; the
  // first stage's first chunk and the last stage's last one each give a
  // place to the embedding and to the output layer.
  const int per_stage = int((layers + 2) / pp);
  return std::pair{per_stage - 1, per_stage - 1};
}

std::string to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

std::string to_string(Precision p) {
  switch (p) {
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kFp32: return "fp32";
    case Precision::kAmpFp32Master: return "amp-fp32-master";
    case Precision::kFp8: return "fp8";
  }
  return "?";
}

namespace {
std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

std::optional<Recompute> parse_recompute(const std::string& text) {
  // A note in brackets ("selective (attention)", as Korthikanti's tables
  // write it) does not change the mode.
  std::string s = lowercase(text.substr(0, text.find('(')));
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s == "none" || s == "no" || s == "off" || s == "false" || s == "null" || s == "n/a") return Recompute::kNone;
  if (s == "selective") return Recompute::kSelective;
  if (s == "full") return Recompute::kFull;
  return std::nullopt;
}

std::optional<Precision> parse_precision(const std::string& text) {
  // PyTorch's dtype names and Lightning's precision flags say the same. A
  // note in brackets, "torch." and a trailing "mixed" ("fp16 mixed", as
  // Megatron's scaling tables write Megatron's own mixed precision, which
  // fp16 and bf16 here are) do not change it.
  std::string s = lowercase(text.substr(0, text.find('(')));
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.starts_with("torch.")) s = s.substr(6);
  for (const std::string suffix : {" mixed", "_mixed", "-mixed"})
    if (s.size() > suffix.size() && s.ends_with(suffix) && s != "16-mixed" && s != "bf16-mixed") {
      s.resize(s.size() - suffix.size());
      if (s != "fp16" && s != "bf16" && s != "float16" && s != "bfloat16") return std::nullopt;
    }
  // "mixed" alone: the interface's default, fp16 mixed precision. ("amp",
  // PyTorch's with fp32 weights, is amp-fp32-master, which it does not name.)
  if (s == "fp16" || s == "float16" || s == "half" || s == "16-mixed" || s == "16" || s == "mixed")
    return Precision::kFp16;
  if (s == "bf16" || s == "bfloat16" || s == "bf16-mixed") return Precision::kBf16;
  if (s == "fp32" || s == "float32" || s == "float" || s == "32-true" || s == "32") return Precision::kFp32;
  if (s == "amp-fp32-master") return Precision::kAmpFp32Master;
  // FP8 with delayed or current scaling, as NeMo's tables name them.
  if (s == "fp8" || s == "fp8-hybrid" || s == "fp8-ds" || s == "fp8-cs" || s == "fp8-delayed" || s == "fp8-current")
    return Precision::kFp8;
  return std::nullopt;
}

}  // namespace trainplan::structure
