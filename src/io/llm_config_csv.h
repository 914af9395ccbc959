// Transformer training configurations as a CSV table, one per row, for
// `trainplan llm predict` (docs/LLM.md). Columns are taken by header name,
// in any order; others are kept and passed through.
//
//   required  gpus, global_batch, micro_batch, hidden, heads, layers, seq, tp, dp, pp
//   optional  vocab (51200), ffn_hidden (4 x hidden), kv_groups (heads),
//             cp (1: context-parallel ranks; then gpus = tp·cp·pp·dp),
//             gated_mlp (false), tied_embeddings (true), virtual_stages (1),
//             first_stage_layers, last_stage_layers (0: the even share; Megatron-Core's
//             --decoder-first/last-pipeline-num-layers),
//             recompute: none | selective | full (none),
//             sequence_parallel, distributed_optimizer, flash_attention: true | false (false),
//             dropout: true | false (true: Megatron's attention and hidden dropout),
//             fp32_residual: true | false (false; Megatron's --fp32-residual-connection),
//             overlap_grad_reduce, overlap_param_gather, tp_comm_overlap: true | false
//             (false; Megatron-Core's --overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap),
//             grad_reduce_in_bf16: true | false (false: fp32 gradients; Megatron's --grad-reduce-in-bf16),
//             precision: fp16 | bf16 | fp32 | amp-fp32-master | fp8 (fp16, mixed precision)
//   measured  iteration_time_s (seconds per iteration, > 0 and at most 1e7) where asked for;
//             memory_gib (peak GiB per GPU, > 0 and at most 1e6), optional;
//             tp_comm_s, pp_comm_s, dp_comm_s (seconds per iteration a rank spent
//             in its tensor-, pipeline- and data-parallel groups' calls, as
//             `trainplan llm profile` records them; >= 0), optional
//
// An empty optional cell takes the default, as does one that says a value is
// missing (NA, N/A, NaN, None, null, -; in any case); in a yes/no column only
// NA, N/A, NaN and null (none and - may mean no there: refused, not guessed).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/csv.h"
#include "structure/gpu_catalog.h"
#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::io {

struct LlmConfigRow {
  long line = 0;
  structure::TransformerSpec spec;
  structure::ParallelLayout layout;
  std::optional<double> iteration_time_s;  // when the file has the column
  std::optional<double> memory_gib;        // when the file has the column and the cell is not empty
  std::optional<double> tp_comm_s, pp_comm_s, dp_comm_s;  // likewise
};

// A row measured elsewhere (a published run, a CI record): its shape, layout
// and seconds per iteration, the optional columns empty.
LlmConfigRow measured_config_row(long line, const structure::TransformerSpec& spec,
                                 const structure::ParallelLayout& layout, double iteration_time_s);

// Equal for two rows that are one configuration (repeats of one run): every
// field of the shape (defaults resolved: kv groups, FFN width) and of the
// layout that the models read, whatever other columns the file carries.
std::string configuration_key(const LlmConfigRow& r);

struct LlmConfigTable {
  CsvTable table;  // the file as read, for passing its columns through
  std::vector<LlmConfigRow> rows;
  // With RowErrors::kSkip, the rows not read, each with why (file, line and
  // column), in file order; `rows` holds the others.
  std::vector<InputError> rejected;
  // What a user should hear of, each naming the file: a column not read whose
  // name is close to one that is ("sequence_paralel"), passed through unread.
  std::vector<std::string> notes;
};

// What a bad row does: stop the read (kThrow), or leave the row out and keep
// why in LlmConfigTable::rejected (kSkip), so that one bad row does not lose
// the others' predictions.
enum class RowErrors { kThrow, kSkip };

// Reads a configuration file ("-": standard input, named "stdin" in
// messages); `require_time` makes it a measured file, with
// iteration_time_s required and memory_gib and the *_comm_s columns read
// where given; without it those columns are not read (a file of
// configurations to predict, whose time and memory cells the predictions
// replace).
// Throws InputError naming the file, the line and the column on: a missing
// required column, a value that is not a positive integer (or not one of
// the words above), gpus != tp·pp·dp, a shape that is not a transformer, or a
// layout the shape does not divide (structure::check_layout: tp not dividing
// the heads, micro_batch·dp not dividing global_batch, ...), or a column
// under another tool's name, not read, that says otherwise than the one
// read (compared as read; not the vocabulary nor the time). With kSkip such
// a row is rejected instead, and only a file-wide fault (a missing column, no
// row, a row whose fields CSV cannot split, such as the wrong count or an
// unclosed quote, every row rejected) throws.
LlmConfigTable read_llm_configs(const std::string& path, bool require_time = false,
                                RowErrors row_errors = RowErrors::kThrow);
// Throws InputError naming the file and the row's line for the first row
// that asks what `hw` has no unit for (structure::missing_unit: its
// precision, such as FP8 on a GPU without FP8 tensor cores, or fused
// attention before Ampere, asked for or run by context parallelism). With
// kSkip moves such rows to `rejected` (throwing when none is left).
void require_hardware_support(LlmConfigTable& configs, const structure::HardwareProfile& hw,
                              RowErrors row_errors = RowErrors::kThrow);
// The same from CSV text (a request's body); `name` stands for the path in
// messages.
LlmConfigTable parse_llm_configs(const std::string& text, const std::string& name, bool require_time = false);

// Every column the reader takes (the configuration's, then the measured
// iteration_time_s, memory_gib and *_comm_s), by its documented name; a
// table's column(name) finds it under another tool's name too.
const std::vector<std::string>& llm_columns_read();

// Writes `in`'s columns and rows with `values[row][j]` under names[j]: in
// the column of that name when `in` has one, else in a column appended.
// A NaN value leaves its cell empty. Without `keep`, a row `in` could not
// split (its field count is not the header's) is written in its place without
// values, its fields cut or padded to the header's columns, so that the output
// pairs row for row with the input and stays a well-formed table; with `keep` (one flag per row of `in`), only the rows flagged true
// are written. `path` "-" is standard output.
// Throws InputError when the file cannot be written.
void write_llm_predictions(const std::string& path, const CsvTable& in, const std::vector<std::string>& names,
                           const std::vector<std::vector<double>>& values, const std::vector<bool>& keep = {});

}  // namespace trainplan::io
