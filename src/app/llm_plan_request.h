// What `trainplan llm plan --json` prints and `POST /llm/plan` answers, from
// one function, so that both give the same JSON (plan/llm_planner.h does the
// search).
#pragma once
#include <nlohmann/json.hpp>

#include "plan/llm_planner.h"
#include "structure/gpu_catalog.h"
#include "structure/transformer.h"

namespace trainplan::app {

struct LlmPlanOutcome {
  structure::TransformerSpec spec;
  structure::HardwareProfile hardware;
  plan::LlmPlanOptions options;
  plan::LlmPlanResult result;
  // "least time" under a GPU-hour budget, else "fewest GPU-hours".
  const char* objective() const;
};

// Searches with the hardware's time model and the memory model. Throws
// InputError (fields tokens, global_batch, max_gpus) as plan::plan_llm does.
LlmPlanOutcome make_llm_plan(const structure::TransformerSpec& spec, const structure::HardwareProfile& hw,
                             const plan::LlmPlanOptions& options);

// {"model", "params", "gpu", "objective", "iterations", "enumerated",
//  "fit_memory", "qualified", "memory_available_gib", "top": [...],
//  "chosen" (when something qualifies), "failing", "explanation",
//  "closest" (when nothing does)}; memory in GiB.
nlohmann::json to_json(const LlmPlanOutcome& o);
nlohmann::json to_json(const plan::LlmCandidate& c);

}  // namespace trainplan::app
