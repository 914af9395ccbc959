// The GPT workload of `trainplan-train` (--workload gpt): a byte-level GPT
// trained with Megatron-style tensor parallelism, 1F1B pipeline parallelism
// and data parallelism over tp*pp*dp processes joined by Gloo.
//
// Contract (docs/TRAINER.md, "The GPT workload"):
// - Rank layout as Megatron-LM's default: tensor-parallel rank fastest, then
//   data-parallel, then pipeline: rank = pp_rank*(tp*dp) + dp_rank*tp + tp_rank.
// - Every rank draws the full model's weights from --seed in one fixed order
//   and keeps its slice, so any (tp, pp, dp) starts from the same model, and
//   at equal global batch follows the same trajectory up to float round-off.
// - Rank 0 prints JSON lines: "iteration" events (loss) without --time-only,
//   one "iteration_timing" event with it, then "done".
// - Throws std::runtime_error on a missing or too short corpus and on lost
//   peers; option errors are caught earlier (resolve_gpt_options, exit 2).
#pragma once
#include "train/trainer.h"

namespace trainplan::train {

struct TrainOptions;

void train_gpt(const TrainOptions& o, const EventSink& report);

}  // namespace trainplan::train
