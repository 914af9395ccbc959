#include "io/llm_config_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include "core/edit_distance.h"
#include "core/error.h"
#include "core/whole_file.h"

namespace trainplan::io {

using structure::ParallelLayout;
using structure::TransformerSpec;

namespace {

int integer(const CsvTable& t, const CsvRow& row, const std::string& col, int least = 1) {
  double v = t.number(row, col);
  if (v < least || v != std::floor(v)) t.fail(row, col, fmt::format("must be an integer >= {}", least));
  if (v > 1e9) t.fail(row, col, fmt::format("{} is more than 1e9", t.text(row, col)));
  return static_cast<int>(v);
}

// An optional value not given: no column, an empty cell, or a word that tools
// write for a missing value (R's NA, pandas' NaN, Python's None, JSON's null,
// a spreadsheet's n/a or -). The column's default applies.
// In a yes/no column "none" and "-" may well mean no: only the words that
// cannot (NA, NaN, null) are a missing value there, and the others are refused.
bool absent(const CsvTable& t, const CsvRow& row, const std::string& col, bool yes_no = false) {
  return !t.has_column(col) || says_missing(t.text(row, col), !yes_no);
}

std::optional<int> optional_integer(const CsvTable& t, const CsvRow& row, const std::string& col) {
  if (absent(t, row, col)) return std::nullopt;
  return integer(t, row, col);
}

// A count that may be 0; `fallback` where the column or the cell is absent.
int optional_count(const CsvTable& t, const CsvRow& row, const std::string& col, int fallback) {
  if (absent(t, row, col)) return fallback;
  return integer(t, row, col, 0);
}

// Megatron writes no interleaving as None, NeMo's tables as n/a; 0 says it too.
bool no_interleaving(const CsvTable& t, const CsvRow& row) {
  return absent(t, row, "virtual_stages") || t.number(row, "virtual_stages") == 0;
}

// The cell's truth value; `fallback` where the column or the cell is absent.
bool boolean(const CsvTable& t, const CsvRow& row, const std::string& col, bool fallback = false) {
  if (absent(t, row, col, /*yes_no=*/true)) return fallback;
  return t.truth(row, col);
}

}  // namespace

// Every column the reader takes, by its name as documented in the header.
const std::vector<std::string>& llm_columns_read() {
  static const std::vector<std::string> names = {
      "gpus", "global_batch", "micro_batch", "hidden", "heads", "layers", "seq", "tp", "dp", "pp", "vocab",
      "ffn_hidden", "kv_groups", "cp", "gated_mlp", "tied_embeddings", "position_embedding", "biases", "virtual_stages", "first_stage_layers",
      "last_stage_layers", "recompute", "recompute_activations", "checkpoint_activations", "sequence_parallel", "distributed_optimizer", "flash_attention", "dropout",
      "fp32_residual", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap", "grad_reduce_in_bf16",
      "precision", "iteration_time_s", "memory_gib", "tp_comm_s", "pp_comm_s", "dp_comm_s"};
  return names;
}

namespace {

// A column read under two spellings is refused (which would it be?); a column
// not read whose name is a slip from one that is gets a note, since its
// values would otherwise be passed over without a word.
void check_column_names(const CsvTable& t, std::vector<std::string>& notes) {
  for (const auto& name : llm_columns_read()) t.refuse_ambiguous(name);
  std::vector<int> read;  // the columns some name above finds, under another tool's name too
  for (const auto& name : llm_columns_read()) read.push_back(t.column(name));
  for (size_t i = 0; i < t.header().size(); ++i) {
    const std::string& h = t.header()[i];
    const std::string folded = fold_column_name(h);
    const auto& known = llm_columns_read();
    if (std::find(read.begin(), read.end(), int(i)) != read.end()) continue;
    if (std::find(known.begin(), known.end(), folded) != known.end()) continue;
    for (const auto& name : known) {
      // One slip in a short name, two in a long one; names of three letters
      // or fewer (tp, dp, seq) are too close to many others to guess at.
      const size_t most = name.size() >= 10 ? 2 : 1;
      if (name.size() >= 4 && !t.has_column(name) && edit_distance(folded, name) <= most) {
        notes.push_back(fmt::format("{}:{}: column '{}' is not read (did you mean '{}'?); its values are passed "
                                    "through unread",
                                    t.path(), t.header_line(), h, name));
        break;
      }
    }
  }
}

// Other tools' names for the columns read (Megatron-LM's arguments, NeMo's and
// Calculon's tables): read under the documented name, with a note saying so.
// The documented name, where the file has it, is the one read; of several other
// names the first below (padded_vocab_size is the vocabulary Megatron computes
// with), and a note names the rest as not read.
// A column under another tool's name beside the one read for the same thing:
// the two are checked row by row, since a file whose 'tp' says 2 where its
// 'tensor_model_parallel_size' says 4 is wrong in one of them.
struct UnreadAlias {
  std::string name;    // the documented name, read
  std::string header;  // the other column's name in the file, not read
};

std::vector<UnreadAlias> read_other_tools_names(CsvTable& t, std::vector<std::string>& notes) {
  std::vector<UnreadAlias> unread;
  static const std::vector<std::pair<std::string, std::vector<std::string>>> aliases = {
      // Hugging Face's config names (num_hidden_layers, intermediate_size, num_key_value_heads),
      // GPT-2's and nanoGPT's (n_layer, n_head, n_embd) and DeepSpeed's batch names too. A bare
      // batch_size is not read: micro or global, a file may mean either.
      // Not Lightning's num_devices (per node) nor max_seq_len (a model's context limit, often
      // longer than the sequences it trains on).
      {"gpus", {"num_gpus", "world_size", "n_gpus", "ngpus", "gpu_count"}},
      {"global_batch", {"global_batch_size", "gbs", "train_batch_size"}},
      {"micro_batch", {"micro_batch_size", "mbs", "microbatch", "microbatch_size", "train_micro_batch_size_per_gpu"}},
      {"hidden", {"hidden_size", "d_model", "n_embd"}},
      {"heads", {"num_attention_heads", "attention_heads", "num_heads", "n_heads", "n_head"}},
      {"layers", {"num_layers", "num_hidden_layers", "n_layers", "n_layer"}},
      {"seq", {"seq_length", "seq_len", "sequence_length", "seqlen", "encoder_seq_length"}},
      {"tp", {"tensor_model_parallel_size", "tp_size", "tensor_parallel_size", "tensor_parallel", "tp_degree"}},
      {"pp", {"pipeline_model_parallel_size", "pp_size", "pipeline_parallel_size", "pipeline_parallel", "pp_degree"}},
      {"dp", {"data_parallel_size", "dp_size", "data_parallel", "dp_degree"}},
      {"cp", {"context_parallel_size", "cp_size", "context_parallel", "cp_degree"}},
      {"vocab", {"padded_vocab_size", "vocab_size"}},
      {"ffn_hidden", {"ffn_hidden_size", "intermediate_size", "ffn_dim", "ffn_size"}},
      {"kv_groups", {"num_query_groups", "query_groups", "num_key_value_heads", "num_kv_heads", "n_kv_heads"}},
      {"position_embedding", {"position_embedding_type"}},
      {"virtual_stages", {"virtual_pipeline_model_parallel_size", "vpp", "vp", "vpp_size", "vpp_interleave"}},
      {"recompute", {"recompute_granularity", "recomputation", "activations_checkpoint_granularity"}},
      {"sequence_parallel", {"seq_parallel", "sequence_parallelism"}},
      {"distributed_optimizer", {"use_distributed_optimizer", "dist_optimizer", "optimizer_sharding"}},
      {"precision", {"dtype", "datatype"}},
      // Seconds only: a time in milliseconds under one of these names would be read 1,000 times too long.
      {"iteration_time_s", {"measured_iteration_time_s", "iteration_time_sec", "seconds_per_iteration", "step_time_s"}},
  };
  for (const auto& [name, others] : aliases) {
    std::vector<std::string> found = t.columns_named(name);
    std::vector<std::string> by_other;
    for (const auto& other : others)
      for (const auto& h : t.columns_named(other)) by_other.push_back(h);
    if (by_other.empty()) continue;
    const size_t first_unread = found.empty() ? 1 : 0;
    if (found.empty()) {
      t.read_column_as(by_other.front(), name);
      notes.push_back(fmt::format("{}:{}: column '{}' is read as '{}'", t.path(), t.header_line(), by_other.front(), name));
    }
    for (size_t i = first_unread; i < by_other.size(); ++i) {
      notes.push_back(fmt::format("{}:{}: column '{}' is not read: '{}' gives {}", t.path(), t.header_line(),
                                  by_other[i], found.empty() ? by_other.front() : found.front(), name));
      // Megatron's padded vocabulary is larger than the tokenizer's by design; a measured time
      // beside a predicted one (llm predict's own output, read again) differs by design too.
      if (name != "vocab" && name != "iteration_time_s") unread.push_back({name, by_other[i]});
    }
  }
  return unread;
}

// A position_embedding word (lowercased): true for learned positions
// (learned, learned_absolute, absolute), false for rotary (rope, rotary),
// nullopt for another word.
std::optional<bool> learned_positions(const std::string& v) {
  if (v == "learned" || v == "learned_absolute" || v == "absolute") return true;
  if (v == "rope" || v == "rotary") return false;
  return std::nullopt;
}

// What a cell of column `name` says, as the reader would take it (a number,
// a recompute or precision name, yes or no), so that two spellings of one
// value agree ('bf16' and 'torch.bfloat16', 'true' and '1'); nullopt where it
// says nothing (empty, NA, None) or cannot be read (the reader names that
// itself when it reads the column).
std::optional<std::string> read_as(const std::string& name, const std::string& cell) {
  const bool yes_no = name == "sequence_parallel" || name == "distributed_optimizer";
  if (says_missing(cell, !yes_no)) return std::nullopt;
  const std::string v = lowercase(cell);
  if (name == "recompute") {
    if (const auto r = structure::parse_recompute(cell)) return structure::to_string(*r);
    return std::nullopt;
  }
  if (name == "precision") {
    if (const auto p = structure::parse_precision(cell)) return structure::to_string(*p);
    return std::nullopt;
  }
  if (name == "position_embedding") {
    if (const auto learned = learned_positions(v)) return std::string(*learned ? "learned" : "rope");
    return v;
  }
  if (yes_no)
    if (const auto b = parse_truth(cell)) return std::string(*b ? "1" : "0");
  if (const auto x = parse_finite(cell)) {
    // No interleaving is 1 virtual stage, whichever way a tool writes it (0 or 1).
    if (name == "virtual_stages" && *x <= 1) return std::string("1");
    return fmt::format("{:.17g}", *x);
  }
  return std::nullopt;
}

// Two cells of one row that must say the same, as the reader takes them; a
// cell that says nothing says nothing against the other.
void check_alias_agrees(const CsvTable& t, const CsvRow& row, const UnreadAlias& alias) {
  const int c = t.own_column(alias.header);
  if (c < 0) return;
  const std::string& read = t.text(row, alias.name);
  const std::string& other = row.fields[c];
  const auto a = read_as(alias.name, read), b = read_as(alias.name, other);
  if (!a || !b || *a == *b) return;
  const std::string& read_header = t.header()[t.column(alias.name)];
  throw InputError(t.path(), row.line, alias.header,
                   fmt::format("'{}' here, but '{}' in column '{}'{}: which is meant? keep one column or make them "
                               "agree",
                               other, read, read_header,
                               fold_column_name(read_header) == alias.name ? "" : ", which is read for " + alias.name));
}

LlmConfigRow config_row(const CsvTable& t, const CsvRow& row, bool require_time);

// Nothing left to work on: the first fault, naming the other rows' lines too.
InputError every_row_rejected(const std::vector<InputError>& rejected) {
  const InputError& first = rejected.front();
  if (rejected.size() == 1) return first;
  constexpr size_t kMostNamed = 20;  // a message, not a listing of a large file
  std::vector<long> lines;
  for (size_t i = 1; i < rejected.size() && lines.size() < kMostNamed; ++i) lines.push_back(rejected[i].line());
  const size_t more = rejected.size() - 1 - lines.size();
  return InputError(first.file(), first.line(), first.field(),
                    fmt::format("{}; no row is left: line{} {}{} {} also bad", first.message(),
                                lines.size() == 1 && more == 0 ? "" : "s", fmt::join(lines, ", "),
                                more ? fmt::format(" and {} more", more) : "", lines.size() == 1 && more == 0 ? "is" : "are"));
}

LlmConfigTable llm_configs_from(CsvTable table, bool require_time, RowErrors row_errors = RowErrors::kThrow) {
  LlmConfigTable out{std::move(table), {}, {}, {}};
  const std::vector<UnreadAlias> unread_aliases = read_other_tools_names(out.table, out.notes);
  const CsvTable& t = out.table;
  const std::string& path = t.path();
  std::vector<std::string> required = {"gpus", "global_batch", "micro_batch", "hidden", "heads",
                                       "layers", "seq", "tp", "dp", "pp"};
  if (require_time) required.push_back("iteration_time_s");
  t.require_columns(required);
  check_column_names(t, out.notes);
  if (const auto& lines = t.comments_after_header(); !lines.empty()) {
    constexpr size_t kMostNamed = 10;
    std::vector<long> named;
    for (size_t i = 0; i < std::min(lines.size(), kMostNamed); ++i) named.push_back(lines[i].line);
    const bool one = lines.size() == 1;
    out.notes.push_back(fmt::format("{}: line{} {}{} {} with '#' and {} read as {}, not {}", path, one ? "" : "s",
                                    fmt::join(named, ", "),
                                    lines.size() > kMostNamed ? fmt::format(" and {} more", lines.size() - kMostNamed) : "",
                                    one ? "starts" : "start", one ? "was" : "were", one ? "a comment" : "comments",
                                    one ? "a configuration" : "configurations"));
  }
  out.rejected = t.malformed_rows();  // rows CSV could not split (kSkip only)
  if (t.rows().empty() && out.rejected.empty()) throw InputError(path, t.header_line(), "", "no configuration rows");
  for (const auto& row : t.rows()) {
    try {
      for (const auto& alias : unread_aliases) check_alias_agrees(t, row, alias);
      out.rows.push_back(config_row(t, row, require_time));
    } catch (const InputError& e) {
      if (row_errors == RowErrors::kThrow) throw;
      out.rejected.push_back(e);
    }
  }
  std::stable_sort(out.rejected.begin(), out.rejected.end(),
                   [](const InputError& a, const InputError& b) { return a.line() < b.line(); });
  if (out.rows.empty()) throw every_row_rejected(out.rejected);
  return out;
}

// One row, or InputError naming its line and column.
LlmConfigRow config_row(const CsvTable& t, const CsvRow& row, bool require_time) {
  LlmConfigRow r;
  r.line = row.line;
  TransformerSpec& s = r.spec;
  s.layers = integer(t, row, "layers"), s.hidden = integer(t, row, "hidden"), s.heads = integer(t, row, "heads");
  s.seq = integer(t, row, "seq");
  s.vocab = optional_integer(t, row, "vocab").value_or(51200);
  s.ffn_hidden = optional_integer(t, row, "ffn_hidden").value_or(0);
  s.kv_groups = optional_integer(t, row, "kv_groups").value_or(0);
  s.gated_mlp = boolean(t, row, "gated_mlp");
  // Tied unless the file says otherwise (an empty cell too): Megatron's default.
  s.tied_embeddings = boolean(t, row, "tied_embeddings", true);
  // Learned positions (s·h parameters on the first stage) unless the file
  // says rotary (Llama's, Megatron's --position-embedding-type rope).
  // "none" is a kind here (no position embedding: Megatron's --position-embedding-type none), not a
  // missing value.
  if (t.has_column("position_embedding") && lowercase(t.text(row, "position_embedding")) == "none") {
    s.learned_positions = false;
  } else if (!absent(t, row, "position_embedding")) {
    const auto learned = learned_positions(lowercase(t.text(row, "position_embedding")));
    if (!learned)
      t.fail(row, "position_embedding",
             fmt::format("must be learned_absolute or rope, got '{}'", t.text(row, "position_embedding")));
    s.learned_positions = *learned;
  }
  // Linear biases and LayerNorm, unless the file says none (Llama's bias-free linears and RMSNorm).
  s.biases = boolean(t, row, "biases", true);
  try {
    structure::validate(s);
  } catch (const InputError& e) {
    t.fail(row, e.field(), e.message());
  }
  ParallelLayout& l = r.layout;
  l.tp = integer(t, row, "tp"), l.pp = integer(t, row, "pp"), l.dp = integer(t, row, "dp");
  l.micro_batch = integer(t, row, "micro_batch"), l.global_batch = integer(t, row, "global_batch");
  l.virtual_stages = no_interleaving(t, row) ? 1 : optional_integer(t, row, "virtual_stages").value_or(1);
  l.cp = optional_integer(t, row, "cp").value_or(1);
  l.first_stage_layers = optional_count(t, row, "first_stage_layers", 0);
  l.last_stage_layers = optional_count(t, row, "last_stage_layers", 0);
  if (!absent(t, row, "recompute")) {
    auto rc = structure::parse_recompute(t.text(row, "recompute"));
    if (!rc) t.fail(row, "recompute", "must be none, selective or full, not '" + t.text(row, "recompute") + "'");
    l.recompute = *rc;
  } else {
    // Megatron-LM's yes/no flags, where a file has no granularity: --recompute-activations is
    // selective recomputation; the older --checkpoint-activations (its 2021 releases) was every
    // layer's, full.
    const bool selective = boolean(t, row, "recompute_activations"), full = boolean(t, row, "checkpoint_activations");
    if (selective && full)
      t.fail(row, "checkpoint_activations",
             "recompute_activations (selective) and checkpoint_activations (full) are both true: say which in 'recompute'");
    if (selective) l.recompute = structure::Recompute::kSelective;
    if (full) l.recompute = structure::Recompute::kFull;
  }
  if (!absent(t, row, "precision")) {
    auto p = structure::parse_precision(t.text(row, "precision"));
    if (!p) t.fail(row, "precision", "must be fp16, bf16, fp32, amp-fp32-master or fp8, not '" + t.text(row, "precision") + "'");
    l.precision = *p;
  }
  l.sequence_parallel = boolean(t, row, "sequence_parallel");
  l.distributed_optimizer = boolean(t, row, "distributed_optimizer");
  l.flash_attention = boolean(t, row, "flash_attention");
  l.dropout = boolean(t, row, "dropout", true);
  l.fp32_residual = boolean(t, row, "fp32_residual");
  l.overlap_grad_reduce = boolean(t, row, "overlap_grad_reduce");
  l.overlap_param_gather = boolean(t, row, "overlap_param_gather");
  l.tp_comm_overlap = boolean(t, row, "tp_comm_overlap");
  l.grad_reduce_in_bf16 = boolean(t, row, "grad_reduce_in_bf16");
  int gpus = integer(t, row, "gpus");
  // In double: the counts are not bounded yet (check_layout bounds them), and their product may pass int's range.
  const double product = double(l.tp) * l.cp * l.pp * l.dp;
  if (double(gpus) != product) {
    // cp named only where the row has it.
    const std::string cp_name = l.cp == 1 ? "" : "cp x ", cp_value = l.cp == 1 ? "" : fmt::format("{} x ", l.cp);
    t.fail(row, "gpus", fmt::format("{} GPUs is not tp x {}pp x dp = {} x {}{} x {} = {:.0f}", gpus, cp_name, l.tp,
                                    cp_value, l.pp, l.dp, product));
  }
  if (auto problem = structure::check_layout(s, l)) t.fail(row, problem->field, problem->message);
  // A file of configurations to predict: what its measured columns hold
  // ("OOM", "pending", a blank) is not read, as the predictions replace it.
  if (!require_time) return r;
  // Bounds far past any real run, so that seconds and bytes stay finite through the fits.
  constexpr double kMostSeconds = 1e7, kMostGib = 1e6;
  if (t.has_column("iteration_time_s")) {
    r.iteration_time_s = t.positive(row, "iteration_time_s");
    if (*r.iteration_time_s > kMostSeconds)
      t.fail(row, "iteration_time_s", fmt::format("{:g} s is more than {:g} s per iteration", *r.iteration_time_s, kMostSeconds));
  }
  if (!absent(t, row, "memory_gib")) {
    r.memory_gib = t.positive(row, "memory_gib");
    if (*r.memory_gib > kMostGib)
      t.fail(row, "memory_gib", fmt::format("{:g} GiB is more than {:g} GiB per GPU", *r.memory_gib, kMostGib));
  }
  // Seconds per iteration in each parallel group's calls (trainplan llm profile).
  for (auto [name, into] : {std::pair{"tp_comm_s", &r.tp_comm_s}, {"pp_comm_s", &r.pp_comm_s}, {"dp_comm_s", &r.dp_comm_s}}) {
    if (absent(t, row, name)) continue;
    const double v = t.number(row, name);
    if (!(v >= 0 && v <= kMostSeconds))
      t.fail(row, name, fmt::format("must be in [0, {:g}] s, got {}", kMostSeconds, t.text(row, name)));
    *into = v;
  }
  return r;
}

}  // namespace

std::string configuration_key(const LlmConfigRow& r) {
  const auto& s = r.spec;
  const auto& l = r.layout;
  return fmt::format("{} {} {} {} {} {} {} {} {} {} {} | {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
                     s.layers, s.hidden, s.heads, s.kv(), s.ffn(), s.gated_mlp, s.seq, s.vocab, s.tied_embeddings,
                     s.learned_positions, s.biases, l.tp, l.cp, l.pp, l.dp, l.virtual_stages, l.first_stage_layers,
                     l.last_stage_layers, l.micro_batch, l.global_batch, structure::to_string(l.recompute),
                     l.sequence_parallel, l.distributed_optimizer, structure::to_string(l.precision), l.flash_attention,
                     l.dropout, l.fp32_residual, l.overlap_grad_reduce, l.overlap_param_gather, l.tp_comm_overlap,
                     l.grad_reduce_in_bf16);
}

LlmConfigRow measured_config_row(long line, const structure::TransformerSpec& spec,
                                 const structure::ParallelLayout& layout, double iteration_time_s) {
  LlmConfigRow r;
  r.line = line, r.spec = spec, r.layout = layout, r.iteration_time_s = iteration_time_s;
  return r;
}

void require_hardware_support(LlmConfigTable& configs, const structure::HardwareProfile& hw, RowErrors row_errors) {
  std::vector<LlmConfigRow> kept;
  for (auto& r : configs.rows) {
    const auto p = structure::missing_unit(hw, r.layout);
    if (!p) {
      kept.push_back(std::move(r));
      continue;
    }
    InputError e(configs.table.path(), r.line, p->field, p->message);
    if (row_errors == RowErrors::kThrow) throw e;
    configs.rejected.push_back(std::move(e));
  }
  configs.rows = std::move(kept);
  // In file order, as the reader rejects them.
  std::stable_sort(configs.rejected.begin(), configs.rejected.end(),
                   [](const InputError& a, const InputError& b) { return a.line() < b.line(); });
  if (configs.rows.empty() && !configs.rejected.empty()) throw every_row_rejected(configs.rejected);
}

LlmConfigTable read_llm_configs(const std::string& path, bool require_time, RowErrors row_errors) {
  // A row of the wrong field count is a bad row like any other where rows are skipped.
  const BadFieldCount bad = row_errors == RowErrors::kSkip ? BadFieldCount::kSkip : BadFieldCount::kThrow;
  if (path == "-") {
    std::stringstream text;
    text << std::cin.rdbuf();
    return llm_configs_from(CsvTable::parse(text.str(), "stdin", bad), require_time, row_errors);
  }
  return llm_configs_from(CsvTable::read(path, bad), require_time, row_errors);
}

LlmConfigTable parse_llm_configs(const std::string& text, const std::string& name, bool require_time) {
  return llm_configs_from(CsvTable::parse(text, name), require_time);
}

void write_llm_predictions(const std::string& path, const CsvTable& in, const std::vector<std::string>& names,
                           const std::vector<std::vector<double>>& values, const std::vector<bool>& keep) {
  if (path != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "", "is a folder, not a file to write");
  }
  std::ostringstream file;  // written whole when complete (write_whole_file)
  std::ostream& out = path == "-" ? std::cout : file;
  std::vector<std::string> header = in.header();
  std::vector<int> at;  // where each name goes: the file's own column of that name, or appended
  for (const auto& n : names) {
    int c = in.own_column(n);
    if (c < 0)
      c = static_cast<int>(header.size()), header.push_back(n);
    else
      header[c] = n;  // the prediction's own name, whatever the file's spelling ("Iteration_Time_S")
    at.push_back(c);
  }
  auto write = [&](const std::vector<std::string>& fields) {
    std::string line;
    for (const auto& f : fields) line += csv_field(f) + ",";
    if (!line.empty()) line.pop_back();
    out << line << "\n";
  };
  write(header);
  static const std::vector<CsvRow> kNoRows;
  const std::vector<CsvRow>& unsplit = keep.empty() ? in.malformed_fields() : kNoRows;
  size_t next_unsplit = 0;
  // Cut or padded to the header's columns: the output stays a table any CSV reader takes.
  auto write_unsplit_before = [&](long line) {
    for (; next_unsplit < unsplit.size() && unsplit[next_unsplit].line < line; ++next_unsplit) {
      std::vector<std::string> fields = unsplit[next_unsplit].fields;
      fields.resize(in.header().size());  // cut to the input's columns: no stray field in a prediction's
      fields.resize(header.size());
      write(fields);
    }
  };
  for (size_t i = 0; i < in.rows().size(); ++i) {
    write_unsplit_before(in.rows()[i].line);
    if (!keep.empty() && !keep.at(i)) continue;
    std::vector<std::string> fields = in.rows()[i].fields;
    fields.resize(header.size());
    for (size_t j = 0; j < names.size(); ++j) {
      const double v = values.at(i).at(j);
      fields[at[j]] = std::isnan(v) ? std::string() : fmt::format("{:.6g}", v);
    }
    write(fields);
  }
  write_unsplit_before(std::numeric_limits<long>::max());
  if (path != "-") return write_whole_file(path, file.str());
  out.flush();
  if (!out) throw InputError(path, 0, "", "cannot write file");
}

}  // namespace trainplan::io
