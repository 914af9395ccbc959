#include "io/neusight_distributed_csv.h"

#include <optional>

#include "core/error.h"
#include "io/csv.h"
#include "io/llm_row_check.h"
#include "structure/gpu_catalog.h"
#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::io {

PublishedScaleRuns read_neusight_distributed(const std::string& path) {
  CsvTable t = CsvTable::read(path);
  t.require_columns({"model", "num_layers", "hidden", "heads", "ffn_hidden", "vocab", "seq_len", "device",
                     "global_batch", "num_gpus", "dp", "tp", "pp", "num_microbatches", "micro_batch_per_gpu",
                     "sequence_parallel", "recompute", "distributed_optimizer", "precision", "measured_ms"});
  PublishedScaleRuns out;
  for (const auto& row : t.rows()) {
    PublishedScaleRun r;
    r.table = "neusight-4gpu";
    auto hw = structure::find_builtin_hardware(t.text(row, "device"));
    if (!hw) t.fail(row, "device", "'" + t.text(row, "device") + "' is not in the hardware catalog");
    r.gpu = hw->name;
    PublishedRun& run = r.iteration.run;
    run.line = row.line;
    run.model = t.text(row, "model");
    auto& s = run.spec;
    s.name = run.model;
    s.layers = t.positive_int(row, "num_layers"), s.hidden = t.positive_int(row, "hidden");
    s.heads = t.positive_int(row, "heads"), s.seq = t.positive_int(row, "seq_len");
    s.ffn_hidden = t.positive_int(row, "ffn_hidden");
    auto& l = run.layout;
    l.tp = t.positive_int(row, "tp"), l.pp = t.positive_int(row, "pp"), l.dp = t.positive_int(row, "dp");
    if (l.tp * l.pp * l.dp != t.positive_int(row, "num_gpus")) t.fail(row, "num_gpus", "is not tp x pp x dp");
    s.vocab = structure::megatron_padded_vocab(t.positive_int(row, "vocab"), l.tp);
    s.source = "NeuSight, as collected in " + t.path();
    l.global_batch = t.positive_int(row, "global_batch");
    l.micro_batch = t.positive_int(row, "micro_batch_per_gpu");
    if (l.micro_batches() != t.positive_int(row, "num_microbatches"))
      t.fail(row, "num_microbatches", "is not global_batch / (micro_batch_per_gpu x dp)");
    l.sequence_parallel = t.truth(row, "sequence_parallel");
    l.distributed_optimizer = t.truth(row, "distributed_optimizer");
    // recompute: False (none) or a granularity.
    const std::string& rc = t.text(row, "recompute");
    std::optional<structure::Recompute> recompute =
        rc.empty() || rc == "False" || rc == "false" ? structure::Recompute::kNone : structure::parse_recompute(rc);
    if (!recompute) t.fail(row, "recompute", "must be False, none, full or selective, not '" + rc + "'");
    l.recompute = *recompute;
    // precision: its first word ("fp32 (accelerate --mixed_precision=no)").
    const std::string& prec = t.text(row, "precision");
    auto precision = structure::parse_precision(prec.substr(0, prec.find(' ')));
    if (!precision) t.fail(row, "precision", "must begin with fp32, bf16 or fp16, not '" + prec + "'");
    l.precision = *precision;
    check_shape_and_layout(t, row, s, l);
    r.iteration.seconds = t.positive(row, "measured_ms") / 1000;
    out.runs.push_back(std::move(r));
  }
  return out;
}

}  // namespace trainplan::io
