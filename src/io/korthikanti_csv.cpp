#include "io/korthikanti_csv.h"

#include "core/error.h"
#include "io/csv.h"
#include "io/llm_row_check.h"

namespace trainplan::io {

namespace {

PublishedRun run(const CsvTable& t, const CsvRow& row) {
  PublishedRun r;
  r.line = row.line;
  r.model = t.text(row, "model");
  auto& s = r.spec;
  s.name = r.model;
  s.layers = t.positive_int(row, "num_layers"), s.hidden = t.positive_int(row, "hidden");
  s.ffn_hidden = t.positive_int(row, "ffn_hidden"), s.heads = t.positive_int(row, "heads");
  s.seq = t.positive_int(row, "seq_len"), s.vocab = t.positive_int(row, "vocab");
  s.source = "Korthikanti et al. 2022 as collected in " + t.path();
  auto& l = r.layout;
  l.tp = t.positive_int(row, "tp"), l.pp = t.positive_int(row, "pp"), l.dp = t.positive_int(row, "dp");
  l.virtual_stages = t.positive_int(row, "vpp_interleave");
  l.micro_batch = t.positive_int(row, "micro_batch"), l.global_batch = t.positive_int(row, "global_batch");
  const std::string& rc = t.text(row, "recompute");
  if (rc == "none") l.recompute = structure::Recompute::kNone;
  else if (rc == "full") l.recompute = structure::Recompute::kFull;
  else if (rc.rfind("selective", 0) == 0) l.recompute = structure::Recompute::kSelective;
  else t.fail(row, "recompute", "must be none, full or selective (...), not '" + rc + "'");
  l.sequence_parallel = t.truth(row, "sequence_parallel");
  l.distributed_optimizer = t.truth(row, "optimizer_sharding");
  const std::string& dt = t.text(row, "datatype");
  if (dt == "float16") l.precision = structure::Precision::kFp16;
  else if (dt == "bfloat16") l.precision = structure::Precision::kBf16;
  else if (dt == "float32") l.precision = structure::Precision::kFp32;
  else t.fail(row, "datatype", "must be float16, bfloat16 or float32, not '" + dt + "'");
  check_shape_and_layout(t, row, s, l);
  return r;
}

const std::vector<std::string> kRunColumns = {
    "model", "num_layers", "hidden", "ffn_hidden", "heads", "seq_len", "vocab", "tp", "pp", "dp", "vpp_interleave",
    "micro_batch", "global_batch", "recompute", "sequence_parallel", "optimizer_sharding", "datatype"};

}  // namespace

std::vector<PublishedIteration> read_korthikanti_iterations(const std::string& path) {
  CsvTable t = CsvTable::read(path);
  auto cols = kRunColumns;
  cols.push_back("measured_iteration_time_s");
  t.require_columns(cols);
  std::vector<PublishedIteration> out;
  for (const auto& row : t.rows()) out.push_back({run(t, row), t.positive(row, "measured_iteration_time_s")});
  return out;
}

std::vector<PublishedMemory> read_korthikanti_memory(const std::string& path) {
  CsvTable t = CsvTable::read(path);
  auto cols = kRunColumns;
  for (const char* c : {"figure", "mode", "metric", "value"}) cols.push_back(c);
  t.require_columns(cols);
  std::vector<PublishedMemory> out;
  for (const auto& row : t.rows())
    out.push_back({run(t, row), t.text(row, "figure"), t.text(row, "mode"), t.text(row, "metric"),
                   t.positive(row, "value")});
  return out;
}

}  // namespace trainplan::io
