#include "io/megatron_scale_csv.h"

#include <cstdlib>
#include <optional>

#include "core/error.h"
#include "io/csv.h"
#include "io/llm_row_check.h"

namespace trainplan::io {

namespace {

bool empty(const CsvTable& t, const CsvRow& row, const std::string& col) { return t.text(row, col).empty(); }

}  // namespace

PublishedScaleRuns read_published_scale_runs(const std::string& path) {
  CsvTable t = CsvTable::read(path);
  t.require_columns({"table_id", "model", "num_layers", "hidden", "heads", "seq_len", "vocab", "tp", "pp", "dp",
                     "num_gpus", "micro_batch", "global_batch", "recompute", "sequence_parallel", "gpu",
                     "achieved_tflops_per_gpu", "iteration_time_s"});
  PublishedScaleRuns out;
  for (const auto& row : t.rows()) {
    const std::string table = t.text(row, "table_id");
    if (empty(t, row, "tp") || empty(t, row, "pp") || empty(t, row, "num_gpus") || empty(t, row, "global_batch")) {
      ++out.left_out["no tensor/pipeline split, GPU count or batch"];
      continue;
    }
    const int tp = t.positive_int(row, "tp"), pp = t.positive_int(row, "pp");
    if (tp == 1 && pp == 1 && table.rfind("narayanan", 0) == 0) {
      ++out.left_out["ZeRO-3 baseline (not a Megatron layout)"];
      continue;
    }
    const std::string gpu_text = t.text(row, "gpu");
    if (gpu_text.find("A100") == std::string::npos) {
      ++out.left_out["not an A100"];
      continue;
    }
    const auto published = plain_positive_number(t.text(row, "iteration_time_s"));
    if (!published && empty(t, row, "achieved_tflops_per_gpu")) {
      ++out.left_out["no time or throughput"];
      continue;
    }
    PublishedScaleRun r;
    r.table = table;
    r.gpu = gpu_text.find("40GB") != std::string::npos ? "a100-40gb" : "a100-80gb";
    PublishedRun& run = r.iteration.run;
    run.line = row.line;
    run.model = t.text(row, "model") + " (" + table + ")";
    auto& s = run.spec;
    s.name = run.model;
    s.layers = t.positive_int(row, "num_layers"), s.hidden = t.positive_int(row, "hidden");
    s.heads = t.positive_int(row, "heads"), s.seq = t.positive_int(row, "seq_len");
    s.ffn_hidden = 4 * s.hidden;
    if (empty(t, row, "vocab")) r.assumed.push_back("vocab 51200");
    s.vocab = empty(t, row, "vocab") ? 51200 : t.positive_int(row, "vocab");
    s.source = table + " as collected in " + t.path();
    auto& l = run.layout;
    l.tp = tp, l.pp = pp, l.global_batch = t.positive_int(row, "global_batch");
    l.dp = t.positive_int(row, "num_gpus") / (tp * pp);
    if (l.dp * tp * pp != t.positive_int(row, "num_gpus")) t.fail(row, "num_gpus", "is not a multiple of tp x pp");
    if (empty(t, row, "micro_batch")) r.assumed.push_back("micro_batch 1");
    l.micro_batch = empty(t, row, "micro_batch") ? 1 : t.positive_int(row, "micro_batch");
    const std::string& rc = t.text(row, "recompute");
    if (rc.empty()) r.assumed.push_back("recompute full");
    if (rc.empty() || rc.rfind("full", 0) == 0) l.recompute = structure::Recompute::kFull;
    else if (rc.rfind("selective", 0) == 0) l.recompute = structure::Recompute::kSelective;
    else if (rc.rfind("none", 0) == 0) l.recompute = structure::Recompute::kNone;
    else t.fail(row, "recompute", "must begin with none, full or selective, not '" + rc + "'");
    l.sequence_parallel = t.text(row, "sequence_parallel").rfind("True", 0) == 0;
    l.precision = structure::Precision::kFp16;
    check_shape_and_layout(t, row, s, l);
    if (published) {
      r.iteration.seconds = *published;
    } else {
      const double B = l.global_batch, seq = s.seq, L = s.layers, h = s.hidden, V = s.vocab;
      const double flops = 96 * B * seq * L * h * h * (1 + seq / (6 * h) + V / (16 * L * h));
      r.iteration.seconds = flops / (t.positive(row, "achieved_tflops_per_gpu") * 1e12 * (tp * pp * l.dp));
      r.seconds_derived = true;
    }
    out.runs.push_back(std::move(r));
  }
  return out;
}

}  // namespace trainplan::io
