// The co-configuration benchmark across seeds (`trainplan bench coconfig
// --seeds 1-8`): one run per seed, each with its own sampled trials, folds,
// tabu and baseline seeds, and a summary of how each (model, method) fares on
// every seed. One seed is one split of the data; a claim about the planner
// should hold on many.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/plan_benchmark.h"

namespace trainplan::experiments {

// "1-8", "1,3,5", "1-3,7": the seeds in the order given, each once. Throws
// InputError on anything else (empty, 0, a reversed range, more than 1000).
std::vector<uint64_t> parse_seed_list(const std::string& text);

// Runs run_plan_benchmark once per seed (o.seed is ignored). The document
// holds "seeds", "runs" (each seed's whole document) and "across_seeds":
// per model and method, each seed's median regret, true-constraint misses
// (target or deadline, of the runnable plans) and no-plan count, the worst
// median, the misses in all, and the median of every seed's regrets pooled;
// and "misses": every plan that missed a true constraint, with its scenario.
// `progress` gets each run's lines prefixed by its seed.
nlohmann::json run_plan_benchmark_seeds(const std::vector<std::string>& trace_dirs, PlanBenchmarkOptions o,
                                        const std::vector<uint64_t>& seeds,
                                        const std::function<void(const std::string&)>& progress = {});

// The text report of that document: a row per model and method with each
// seed's median regret and misses, then the misses of the coconfig methods.
// `regret_limit` (a fraction) names the seeds whose median exceeds it.
std::string format_plan_benchmark_seeds(const nlohmann::json& doc, double regret_limit = 0.03);

}  // namespace trainplan::experiments
