#include "app/llm_plan_on_gpus.h"

#include <algorithm>
#include <stdexcept>

namespace trainplan::app {

bool LlmGpuComparison::any() const {
  return std::any_of(plans.begin(), plans.end(), [](const LlmPlanOutcome& o) { return !o.result.top.empty(); });
}

LlmGpuComparison compare_llm_plans(std::vector<LlmPlanOutcome> plans, std::vector<double> prices) {
  if (!prices.empty() && prices.size() != plans.size())
    throw std::logic_error("compare_llm_plans: one price per GPU, or none");
  LlmGpuComparison c;
  c.plans = std::move(plans);
  c.prices = std::move(prices);
  auto least = [&](auto value) {
    std::optional<size_t> best;
    for (size_t i = 0; i < c.plans.size(); ++i)
      if (!c.plans[i].result.top.empty() && (!best || value(i) < value(*best))) best = i;
    return best;
  };
  if (!c.prices.empty()) c.cheapest = least([&](size_t i) { return c.plans[i].result.top.front().gpu_hours * c.prices[i]; });
  c.fastest = least([&](size_t i) { return c.plans[i].result.top.front().train_s; });
  const bool frontiers = !c.plans.empty() && c.plans.front().options.frontier;
  if (frontiers && !c.prices.empty()) {
    std::vector<std::vector<std::pair<double, double>>> fronts;
    for (size_t i = 0; i < c.plans.size(); ++i) {
      fronts.emplace_back();
      for (const auto& p : c.plans[i].result.frontier) fronts.back().push_back({p.train_s, p.gpu_hours * c.prices[i]});
    }
    c.frontier = plan::merge_frontiers(fronts);
  }
  return c;
}

nlohmann::json to_json(const LlmGpuComparison& c) {
  const auto& first = c.plans.front();
  nlohmann::json j = {{"model", first.spec.name}, {"objective", first.objective()}, {"gpus", nlohmann::json::array()}};
  for (const auto& o : c.plans) j["gpus"].push_back(to_json(o, c.plans.size() > 1));
  if (c.cheapest) j["cheapest"] = c.plans[*c.cheapest].hardware.name;
  if (c.fastest) j["fastest"] = c.plans[*c.fastest].hardware.name;
  if (first.options.frontier && !c.prices.empty()) {
    j["frontier"] = nlohmann::json::array();
    for (const auto& m : c.frontier) {
      nlohmann::json point = j["gpus"][m.option]["frontier"][m.point];
      point["gpu"] = c.plans[m.option].hardware.name;
      point["cost"] = c.plans[m.option].result.frontier[m.point].gpu_hours * c.prices[m.option];
      j["frontier"].push_back(std::move(point));
    }
  }
  return j;
}

}  // namespace trainplan::app
