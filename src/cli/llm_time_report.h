// Where a transformer iteration's time goes, as `llm predict --breakdown`
// and `llm plan --breakdown` print and give it in JSON.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "models/llm_time.h"

namespace trainplan::cli {

// {"iteration_time_s", "stage_step_s", "compute_s", "memory_bound_s",
// "tp_comm_s", "pp_comm_s", "bubble_s", "dp_comm_s", "optimizer_s",
// "model_tflops_per_gpu", "mfu"}: the breakdown, with the model FLOP
// utilisation against `peak_tflops` (the GPU's dense peak at the layout's
// precision, GpuSpec::dense_peak_tflops; 0 gives an MFU of 0).
nlohmann::json llm_time_json(const models::LlmTimeBreakdown& t, double peak_tflops);

// A table of those parts, in seconds per iteration, one row per element of
// `rows` (each an llm_time_json plus the integer field `key`, which names
// the row: "line" for a CSV row, "rank" for a plan's alternative); "other"
// is what the parts leave of the iteration (the embedding, the logits'
// memory-bound part, launches and host overheads).
void print_llm_time_breakdown(const nlohmann::json& rows, const std::string& key);

}  // namespace trainplan::cli
