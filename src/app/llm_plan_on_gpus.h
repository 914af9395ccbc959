// One transformer training job planned on several GPUs: "what if we had H100s
// instead of A100s". Each GPU is planned by its caller (the CLI and the
// server name a bad option each their own way); this compares the answers:
// the cheapest plan (with prices: GPU-hours of different GPUs do not
// compare), the fastest, and with frontiers and prices the cheapest GPU and
// configuration for every training time.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "app/llm_plan_request.h"
#include "plan/merged_frontier.h"

namespace trainplan::app {

struct LlmGpuComparison {
  std::vector<LlmPlanOutcome> plans;        // one per GPU, in the order given
  std::vector<double> prices;               // one per GPU; empty: none
  std::optional<size_t> cheapest;           // with prices: the plan that costs least
  std::optional<size_t> fastest;            // the plan that trains soonest
  // With options.frontier and prices: the GPUs' frontiers merged (points
  // into plans[option].result.frontier), fastest first.
  std::vector<plan::MergedPoint> frontier;
  bool any() const;  // some GPU has a plan
};

// `prices`: one per plan (all > 0), or empty.
LlmGpuComparison compare_llm_plans(std::vector<LlmPlanOutcome> plans, std::vector<double> prices);

// {"model", "objective", "gpus": [to_json(each outcome)], "cheapest",
// "fastest" (GPU names, when set), "frontier" (with a merged frontier: each
// point as the GPU's own frontier JSON has it, plus "gpu" and "cost")}.
nlohmann::json to_json(const LlmGpuComparison& c);

}  // namespace trainplan::app
